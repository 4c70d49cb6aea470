// The one registry of running proofs, shared by the HTTP face (POST/DELETE /v1/prove) and the language-server face
// (kimina/prove, kimina/cancel): ids, refusing a second proof with a running id, cancelling one, cancelling all.
// The composition root owns one (App.runningProofs) and hands it to whichever face it builds.
export class RunningProofs {
  private readonly running = new Map<string, AbortController>();

  /** Registers a proof; null when one with this id is already running. End it with `end(id)`. */
  begin(id: string): AbortController | null {
    if (this.running.has(id)) return null;
    const controller = new AbortController();
    this.running.set(id, controller);
    return controller;
  }

  end(id: string, controller?: AbortController): void {
    if (!controller || this.running.get(id) === controller) this.running.delete(id);
  }

  has(id: string): boolean {
    return this.running.has(id);
  }

  /** Stops a running proof; false when none has this id. */
  cancel(id: string): boolean {
    const controller = this.running.get(id);
    controller?.abort();
    return controller !== undefined;
  }

  cancelAll(): void {
    for (const controller of this.running.values()) controller.abort();
  }

  get size(): number {
    return this.running.size;
  }
}

/**
 * A service started on first use, by both faces (the HTTP prove routes' engine and verifier, the language
 * server's ProveService): started once, a failed start forgotten so that the next use tries again, and
 * `reset` to start afresh (after a setup request) handing back what was started.
 */
export class LazyStart<T> {
  private started: Promise<T> | null = null;

  constructor(private readonly start: () => Promise<T>) {}

  get(): Promise<T> {
    if (!this.started) {
      const started = this.start().catch((err: unknown) => {
        if (this.started === started) this.started = null;
        throw err;
      });
      this.started = started;
    }
    return this.started;
  }

  /** What was started or is starting, if anything (never starts it). */
  get current(): Promise<T> | null {
    return this.started;
  }

  /** Forgets what was started (the next `get` starts afresh) and hands it back. */
  reset(): Promise<T> | null {
    const old = this.started;
    this.started = null;
    return old;
  }
}
