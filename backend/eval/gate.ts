// A counting gate: at most `limit` units held at once (a holder may take several), waiters served in
// arrival order (a large waiter is not overtaken by smaller ones), abortable while waiting.
export class Gate {
  private active = 0;
  private readonly waiting: { weight: number; resolve: () => void }[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`parallelism must be a positive integer, got ${limit}`);
  }

  /** Waits until `weight` units (1 to limit) are free, then holds them until `release(weight)`. */
  async acquire(signal?: AbortSignal, weight = 1): Promise<void> {
    if (!Number.isInteger(weight) || weight < 1 || weight > this.limit)
      throw new Error(`a gate holder takes 1 to ${this.limit} units, not ${weight}`);
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    if (this.waiting.length === 0 && this.active + weight <= this.limit) {
      this.active += weight;
      return;
    }
    await new Promise<void>((resolve, reject) => {
      const entry = {
        weight,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal?.reason ?? new Error('aborted'));
        this.grant(); // the waiters behind this one may fit now
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  /** Frees `weight` units and hands them to the waiters at the front that fit. */
  release(weight = 1): void {
    this.active -= weight;
    this.grant();
  }

  private grant(): void {
    while (this.waiting.length > 0 && this.active + this.waiting[0].weight <= this.limit) {
      const next = this.waiting.shift()!;
      this.active += next.weight;
      next.resolve();
    }
  }
}
