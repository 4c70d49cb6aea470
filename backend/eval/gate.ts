// A counting gate: at most `limit` holders at once, waiters served in order, abortable while waiting.
export class Gate {
  private active = 0;
  private readonly waiting: { resolve: () => void; reject: (e: unknown) => void }[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new Error(`parallelism must be a positive integer, got ${limit}`);
  }

  async acquire(signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) throw signal.reason ?? new Error('aborted');
    if (this.active < this.limit) { this.active++; return; }
    await new Promise<void>((resolve, reject) => {
      const entry = {
        resolve: () => { signal?.removeEventListener('abort', onAbort); resolve(); },
        reject,
      };
      const onAbort = () => {
        const i = this.waiting.indexOf(entry);
        if (i >= 0) this.waiting.splice(i, 1);
        reject(signal?.reason ?? new Error('aborted'));
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(entry);
    });
  }

  /** Hands the slot to the next waiter, or frees it. */
  release(): void {
    const next = this.waiting.shift();
    if (next) next.resolve();
    else this.active--;
  }
}
