// Prompt-lookup drafting for speculative decoding (no second model): the next tokens are guessed from
// the most recent earlier place in the context (prompt and answer so far) where its last n tokens
// occurred, trying the longest n first. Kimina answers repeat themselves a lot: the final lean4 block
// copies tactic lines from the think block, a fix-turn answer copies the previous proof.

export interface LookupOptions {
  /** Longest and shortest n-gram matched (defaults 4 and 2). */
  ngramMax?: number;
  ngramMin?: number;
}

export class PromptLookup {
  readonly ngramMax: number;
  readonly ngramMin: number;
  /** Per n: n-gram key -> index just after its latest occurrence (indexed up to `indexed`). */
  private readonly seen: Map<string, number>[];
  private indexed = 0;

  constructor(options: LookupOptions = {}) {
    this.ngramMax = options.ngramMax ?? 4;
    this.ngramMin = Math.max(1, options.ngramMin ?? 2);
    this.seen = Array.from({ length: this.ngramMax + 1 }, () => new Map<string, number>());
  }

  private static key(tokens: readonly number[], end: number, n: number): string {
    let k = '';
    for (let i = end - n; i < end; i++) k += `${tokens[i]},`;
    return k;
  }

  /**
   * Up to `max` drafted tokens following the context (which only ever grows between calls: the same
   * array with tokens appended).
   */
  draft(context: readonly number[], max: number): number[] {
    const L = context.length;
    if (max <= 0) return [];
    // Index every n-gram that ends before the last position (the suffix itself must not match itself).
    for (let end = Math.max(this.indexed, 1); end < L; end++) {
      for (let n = 1; n <= this.ngramMax && n <= end; n++) this.seen[n].set(PromptLookup.key(context, end, n), end);
    }
    this.indexed = Math.max(this.indexed, L); // n-grams ending at 1..L-1 are in; the one ending at L comes next call
    for (let n = Math.min(this.ngramMax, L - 1); n >= this.ngramMin; n--) {
      const at = this.seen[n].get(PromptLookup.key(context, L, n));
      if (at !== undefined && at < L) return context.slice(at, Math.min(L, at + max)) as number[];
    }
    return [];
  }
}
