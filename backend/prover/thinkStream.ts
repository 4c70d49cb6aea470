// Splitting a streamed answer into its thinking and the text after `</think>`, delta by delta.
// Tags are not emitted; a tag cut across two deltas is held back until it is complete.

const OPEN = '<think>';
const CLOSE = '</think>';

export interface SplitDelta {
  think: string;
  text: string;
}

/** Longest suffix of `s` that is a proper prefix of `tag` (what might still become the tag). */
function partialTagSuffix(s: string, tag: string): number {
  for (let n = Math.min(tag.length - 1, s.length); n > 0; n--) if (tag.startsWith(s.slice(s.length - n))) return n;
  return 0;
}

export class ThinkSplitter {
  private mode: 'start' | 'think' | 'text' = 'start';
  private pending = '';

  push(delta: string): SplitDelta {
    const out: SplitDelta = { think: '', text: '' };
    this.pending += delta;
    if (this.mode === 'start') {
      const lead = this.pending.trimStart();
      if (lead.startsWith(OPEN)) {
        this.mode = 'think';
        this.pending = lead.slice(OPEN.length);
      } else if (OPEN.startsWith(lead))
        return out; // still could be `<think>`
      else {
        this.mode = 'text';
      }
    }
    if (this.mode === 'think') {
      const close = this.pending.indexOf(CLOSE);
      if (close >= 0) {
        out.think = this.pending.slice(0, close);
        out.text = this.pending.slice(close + CLOSE.length);
        this.pending = '';
        this.mode = 'text';
        return out;
      }
      const hold = partialTagSuffix(this.pending, CLOSE);
      out.think = this.pending.slice(0, this.pending.length - hold);
      this.pending = this.pending.slice(this.pending.length - hold);
      return out;
    }
    out.text = this.pending;
    this.pending = '';
    return out;
  }

  /** Whatever is still held back, at the end of the stream. */
  flush(): SplitDelta {
    const rest = this.pending;
    this.pending = '';
    return this.mode === 'think' ? { think: rest, text: '' } : { think: '', text: rest };
  }
}

/** The thinking (between the first `<think>` and `</think>`, or to the end when unclosed) and the rest. */
export function splitThink(response: string): SplitDelta {
  const s = new ThinkSplitter();
  const a = s.push(response);
  const b = s.flush();
  return { think: a.think + b.think, text: a.text + b.text };
}
