// Places in Lean source as Lean counts them: UTF-16 offset (JS string index), 1-based line, 0-based column in
// codepoints. One index for the declaration finder and the header reader.

/** A place in the source: UTF-16 offset (JS string index), 1-based line, 0-based column in codepoints (as Lean counts). */
export interface SourcePos {
  offset: number;
  line: number;
  column: number;
}

/** UTF-16 offsets ↔ `SourcePos` over one source text (a binary search on line starts, then a walk within the line). */
export class PositionIndex {
  private readonly lineStarts: number[] = [0];
  constructor(private readonly source: string) {
    for (let i = 0; i < source.length; i++) if (source[i] === '\n') this.lineStarts.push(i + 1);
  }
  /** The position of a UTF-16 offset. */
  at(offset: number): SourcePos {
    let lo = 0,
      hi = this.lineStarts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (this.lineStarts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    let column = 0;
    for (let k = this.lineStarts[lo]; k < offset; k++) {
      const c = this.source.charCodeAt(k);
      if (c < 0xdc00 || c > 0xdfff || k === this.lineStarts[lo]) column++;
    }
    return { offset, line: lo + 1, column };
  }
  /** The UTF-16 offset of a Lean position (1-based line, codepoint column). */
  offsetOf(line: number, column: number): number {
    let k = this.lineStarts[Math.min(Math.max(line, 1), this.lineStarts.length) - 1];
    for (let c = 0; c < column && k < this.source.length && this.source[k] !== '\n'; c++)
      k += (this.source.codePointAt(k) ?? 0) > 0xffff ? 2 : 1;
    return k;
  }
  /** Offset where a 1-based line starts. */
  lineStart(line: number): number {
    return this.lineStarts[Math.min(Math.max(line, 1), this.lineStarts.length) - 1];
  }
}
