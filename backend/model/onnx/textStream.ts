// Per-sample text assembly for streaming: token ids -> text deltas, with stop strings honoured.
// Text that might be the start of a stop string is held back until it is known not to be one,
// so a stop string is never streamed, even partly.
import type { StreamDecoder } from '../tokenizer';

export class SampleText {
  text = '';
  private emitted = 0;
  tokens = 0;
  stopped = false;
  private readonly longestStop: number;

  constructor(
    private readonly decoder: StreamDecoder,
    private readonly stops: readonly string[],
  ) {
    this.stops = stops.filter((s) => s.length > 0);
    this.longestStop = Math.max(0, ...this.stops.map((s) => s.length));
  }

  /** Adds one generated token; returns the text that may be shown now ('' when none). */
  push(token: number): string {
    if (this.stopped) return '';
    this.tokens++;
    this.text += this.decoder.push(token);
    const from = Math.max(0, this.emitted - this.longestStop);
    let cut = -1;
    for (const s of this.stops) {
      const at = this.text.indexOf(s, from);
      if (at >= 0 && (cut < 0 || at < cut)) cut = at;
    }
    if (cut >= 0) {
      this.stopped = true;
      this.text = this.text.slice(0, cut);
      return this.take(this.text.length);
    }
    return this.take(this.text.length - this.heldBack());
  }

  /** The end of generation: everything not yet shown. */
  finish(): string {
    if (!this.stopped) this.text += this.decoder.flush();
    return this.take(this.text.length);
  }

  private take(upTo: number): string {
    if (upTo <= this.emitted) return '';
    const delta = this.text.slice(this.emitted, upTo);
    this.emitted = upTo;
    return delta;
  }

  /** Length of the longest suffix of the text that begins some stop string. */
  private heldBack(): number {
    let held = 0;
    for (const s of this.stops) {
      for (let n = Math.min(s.length - 1, this.text.length); n > held; n--) {
        if (this.text.endsWith(s.slice(0, n))) {
          held = n;
          break;
        }
      }
    }
    return held;
  }
}
