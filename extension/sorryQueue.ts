// "Prove All Sorries" as an object the proof runner owns (ProofRunner.sorryQueue): at most one queue at a time,
// and Cancel stops it through the runner rather than through a hidden command. No VS Code API here, so its rules
// have a unit test (test/extension/sorryQueue.test.ts).
export class SorryQueue {
  private stopCurrent: (() => void) | null = null;

  /** Whether a queue is running now. */
  get running(): boolean {
    return this.stopCurrent !== null;
  }

  /**
   * Runs `work` as the queue, with `stop` as the way to cancel it; false (and `work` never started) when a queue
   * already runs. The queue counts as running until `work` settles, whether it returns or throws.
   */
  async run(stop: () => void, work: () => Promise<void>): Promise<boolean> {
    if (this.stopCurrent) return false;
    this.stopCurrent = stop;
    try {
      await work();
    } finally {
      this.stopCurrent = null;
    }
    return true;
  }

  /** Cancels the running queue; false when none runs. */
  stop(): boolean {
    const stop = this.stopCurrent;
    stop?.();
    return stop !== null;
  }
}
