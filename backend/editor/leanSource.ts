// The editor face's view of Lean 4 source: which declaration the cursor is in, where its statement ends,
// where each `sorry` is and whether it stands in tactic or term position, and the standalone snippet to send.
// Declarations come from the shared finder (lean/declarations.ts); offsets here are JavaScript string
// indices (UTF-16 code units) and lines are 0-based, which is what LSP positions count.
import { findDeclarations as findLeanDeclarations, formalStatementOf, maskLean } from '../lean/declarations';
import { sorriesOf } from '../lean/source/reader';

/** `custom`: a declaration made by a project's own command (`problem foo : P := by …`), a target for its sorries. */
type DeclKind = 'theorem' | 'lemma' | 'example' | 'def' | 'abbrev' | 'instance' | 'custom';
type SorryPosition = 'tactic' | 'term';

export interface SorrySite {
  offset: number;
  /** 0-based line and UTF-16 character. */
  line: number;
  character: number;
  /** Tactic position (`by sorry`, a line of its own, after `·`) or term position (`:= sorry`, `exact sorry`). */
  position: SorryPosition;
}

export interface Declaration {
  kind: DeclKind;
  /** The declared name; "example" for examples. */
  name: string;
  /** From the first modifier/attribute (doc comment excluded) to the end of the last code line. */
  start: number;
  end: number;
  startLine: number;
  endLine: number;
  /** Offset just after the top-level `:=` that ends the statement; null when there is none (pattern matching). */
  statementEnd: number | null;
  /**
   * Where Lean reads the statement as ending (the reader's proof start): the `:=`, the first `| pat => …` alternative
   * of a pattern-matching definition, or `where`; null when there is none (`axiom`).
   */
  statementStop?: number | null;
  /** Column (UTF-16) of the declaration's first line, for re-indenting its proof. */
  indent: number;
  sorries: SorrySite[];
}

/** A copy of `text` with comments, string and char literals blanked out (newlines kept), so offsets stay valid. */
export function codeOnly(text: string): string {
  return maskLean(text).text;
}

/** Line starts: lineStarts[n] is the offset of line n (the last text's are kept: positions are asked one by one). */
function lineStarts(text: string): number[] {
  if (lastStarts?.text === text) return lastStarts.starts;
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  lastStarts = { text, starts };
  return starts;
}
let lastStarts: { text: string; starts: number[] } | undefined;

export function offsetAt(text: string, line: number, character: number): number {
  const starts = lineStarts(text);
  if (line < 0) return 0;
  if (line >= starts.length) return text.length;
  const lineEnd = line + 1 < starts.length ? starts[line + 1] - 1 : text.length;
  return Math.min(starts[line] + Math.max(0, character), lineEnd);
}

export function positionAt(text: string, offset: number): { line: number; character: number } {
  const starts = lineStarts(text);
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid] <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo, character: offset - starts[lo] };
}

/** The sorries of `text` as the one reader finds them (lean/source/reader.ts `sorriesOf`), in editor positions. */
function sorrySites(text: string): SorrySite[] {
  return sorriesOf(text).map((s) => {
    const pos = positionAt(text, s.sorry.start.offset);
    return { offset: s.sorry.start.offset, line: pos.line, character: pos.character, position: s.position };
  });
}

/** The sites in [from, to): `all` sorted by offset. */
function sitesIn(all: SorrySite[], from: number, to: number): SorrySite[] {
  let lo = 0,
    hi = all.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (all[mid].offset < from) lo = mid + 1;
    else hi = mid;
  }
  const out: SorrySite[] = [];
  for (let i = lo; i < all.length && all[i].offset + 5 <= to; i++) out.push(all[i]);
  return out;
}

const editorKinds = new Set<string>(['theorem', 'lemma', 'example', 'def', 'abbrev', 'instance', 'custom']);

/** Every declaration in the file, in order, as the shared finder (lean/declarations.ts) reads them. */
export function findDeclarations(text: string): Declaration[] {
  const starts = lineStarts(text);
  const sorries = sorrySites(text);
  return findLeanDeclarations(text)
    .filter((d) => editorKinds.has(d.kind))
    .map((d): Declaration => {
      const kind = d.kind as DeclKind;
      const start = d.head.offset,
        end = d.end.offset;
      return {
        kind,
        name: kind === 'example' ? 'example' : d.name || kind,
        start,
        end,
        startLine: d.head.line - 1,
        endLine: d.end.line - 1,
        statementEnd: d.signatureEnd?.offset ?? null,
        statementStop: d.proof?.start.offset ?? null,
        indent: start - starts[d.head.line - 1],
        sorries: sitesIn(sorries, start, end),
      };
    });
}

/** The theorem/lemma/example containing `line`, or else the nearest one starting above it. */
export function declarationAt(decls: Declaration[], line: number): Declaration | null {
  const provable = decls.filter((d) => d.kind === 'theorem' || d.kind === 'lemma' || d.kind === 'example');
  const inside = provable.find((d) => d.startLine <= line && line <= d.endLine);
  if (inside) return inside;
  const above = provable.filter((d) => d.startLine <= line);
  return above.length ? above[above.length - 1] : null;
}

/** The declaration of any kind (def, abbrev and instance too) whose range holds `line` and a sorry, innermost last. */
export function sorryHolderAt(decls: Declaration[], line: number): Declaration | null {
  const holding = decls.filter((d) => d.startLine <= line && line <= d.endLine && d.sorries.length > 0);
  return holding.at(-1) ?? null;
}

/** The `sorry` at the cursor: the one under it, else the nearest in the declaration on the same line, else the only one. */
export function sorryAt(decl: Declaration, line: number, character: number): SorrySite | null {
  const under = decl.sorries.find((s) => s.line === line && s.character <= character && character <= s.character + 5);
  if (under) return under;
  const sameLine = decl.sorries.filter((s) => s.line === line);
  if (sameLine.length)
    return sameLine.reduce((a, b) => (Math.abs(a.character - character) <= Math.abs(b.character - character) ? a : b));
  return decl.sorries.length === 1 ? decl.sorries[0] : null;
}

/** Imports, options and opens before the first declaration: what a standalone snippet needs. */
export function headerOf(text: string, decls = findDeclarations(text)): string {
  const first = decls[0];
  const cut = first ? lineStarts(text)[first.startLine] : text.length;
  // Stop after the last line of code, leaving out the first declaration's doc comment.
  const codeEnd = codeOnly(text.slice(0, cut)).trimEnd().length;
  return text.slice(0, codeEnd) + '\n\n';
}

/**
 * What must precede the declaration in a standalone snippet: the header, the scope commands in force
 * (`namespace`, `open`, `variable`, …) and the earlier sorry-free declarations it may use, in file order, as
 * the prover's own statement builder (lean/declarations.ts) finds them.
 */
function scopePrefix(text: string, decl: Declaration, decls?: Declaration[], exclude?: ReadonlySet<string>): string {
  const theirs = findLeanDeclarations(text).find(
    (d) => d.start.offset <= decl.start && decl.start < Math.max(d.end.offset, d.start.offset + 1),
  );
  if (!theirs) return headerOf(text, decls);
  const formal = formalStatementOf(text, theirs, { exclude }).text;
  const statement = theirs.statement.trim();
  if (!formal.endsWith(statement)) return headerOf(text, decls);
  const prefix = formal.slice(0, formal.length - statement.length).trimEnd();
  return prefix ? prefix + '\n\n' : '';
}

/**
 * Header, scope commands, earlier sorry-free declarations and the declaration's own text (doc comment excluded):
 * what is sent to the prover or Lean. `exclude`: earlier declarations (by name) to leave out, as the ones with a
 * sorry are (the file's other broken proofs, when one is repaired).
 */
export function standaloneSnippet(
  text: string,
  decl: Declaration,
  decls?: Declaration[],
  exclude?: ReadonlySet<string>,
): { code: string; declOffset: number } {
  const prefix = scopePrefix(text, decl, decls, exclude);
  return { code: prefix + text.slice(decl.start, decl.end) + '\n', declOffset: prefix.length };
}
