// The engine kimina.engine = auto answers with while llama.cpp is set up and compared in the background
// (llamaBackground.ts): the onnx engine at first, the winner once the comparison ends. A switch applies to the
// next generate call; calls in flight finish on the engine they started on, which is closed after the last of
// them. A proof sizes its waves once, by the schedule of the engine answering when it starts (prover/waves.ts), so
// a call that reaches an engine switched to is decoded in that engine's own rows (its caches fit its memory, not
// the first engine's). The choice's words (the status bar, the Proof view, `kimina prove`'s schedule line) say what the
// background is doing until it ends. Closing it cancels the background work and closes every engine it holds.
import type { ChatMessage } from '../protocol';
import type { Engine, Generation, OnDelta, SamplingOptions } from './engine';
import type { EngineChoice } from './engineChoice';
import type { Schedule } from './schedule';

export class SwitchingEngine implements Engine {
  /** What the background work is doing now ('' once it ended). */
  private stage = '';
  /** generate calls in flight per engine. */
  private readonly running = new Map<Engine, number>();
  /** Engines switched away from, closed when their last call ends. */
  private readonly retired = new Set<Engine>();
  private idleWaiters: (() => void)[] = [];
  private readonly controller = new AbortController();
  /** The background work (llamaBackground.ts); settles when it ends, never rejects. */
  background: Promise<void> = Promise.resolve();

  /** The engine it started with: its schedule sized the waves of the calls it gets. */
  private readonly first: Engine;

  constructor(
    private inner: Engine,
    private chosen: EngineChoice,
  ) {
    this.first = inner;
  }

  /** Aborted when the engine is closed: the background work stops (npm killed, the GGUF worker terminated). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }
  get choice(): EngineChoice {
    return this.chosen;
  }
  /** The engine answering now. */
  get current(): Engine {
    return this.inner;
  }

  get name(): string {
    return this.inner.name;
  }
  get model(): string {
    return this.inner.model;
  }
  get maxContext(): number | undefined {
    return this.inner.maxContext;
  }
  /** The choice in words, with what the background is doing while it runs. */
  get engineChoice(): string {
    return this.stage ? `${this.chosen.words}: ${this.stage}` : this.chosen.words;
  }
  get detail(): string {
    return this.inner.detail ? `${this.engineChoice}; ${this.inner.detail}` : this.engineChoice;
  }

  /** Says what the background is doing (shown after the choice's words). */
  setStage(stage: string): void {
    this.stage = stage;
  }

  /** The background ended keeping the engine that answers now: the choice it stored. */
  settle(choice: EngineChoice): void {
    this.chosen = choice;
    this.stage = '';
  }

  /** The background ended with another engine: the next generate call runs on it. */
  switchTo(engine: Engine, choice: EngineChoice): void {
    const old = this.inner;
    this.inner = engine;
    this.settle(choice);
    this.retire(old);
  }

  /** Resolves when no generate call is in flight (the background times its calibration between requests). */
  whenIdle(): Promise<void> {
    if (this.inFlight() === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  schedule(): Promise<Schedule | undefined> {
    return this.inner.schedule?.() ?? Promise.resolve(undefined);
  }

  async generate(conversations: ChatMessage[][], options: SamplingOptions, onDelta?: OnDelta): Promise<Generation[]> {
    const engine = this.inner;
    this.running.set(engine, (this.running.get(engine) ?? 0) + 1);
    try {
      const rows = engine === this.first ? undefined : (await engine.schedule?.().catch(() => undefined))?.rows;
      if (!rows || conversations.length <= rows) return await engine.generate(conversations, options, onDelta);
      const out: Generation[] = [];
      for (let start = 0; start < conversations.length; start += rows) {
        const seed = options.seed === undefined ? {} : { seed: options.seed + start }; // row k's seed, as in one call
        const part = await engine.generate(
          conversations.slice(start, start + rows),
          { ...options, ...seed },
          onDelta && ((i, delta) => onDelta(start + i, delta)),
        );
        out.push(...part);
      }
      return out;
    } finally {
      const left = this.running.get(engine)! - 1;
      if (left) this.running.set(engine, left);
      else this.running.delete(engine);
      if (!left && this.retired.has(engine)) this.retire(engine);
      if (this.inFlight() === 0) for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  countPromptTokens(conversation: ChatMessage[]): Promise<number> {
    return this.inner.countPromptTokens(conversation);
  }

  /** Cancels the background work, waits for it to end, and closes every engine held. */
  async close(): Promise<void> {
    this.controller.abort();
    for (const wake of this.idleWaiters.splice(0)) wake();
    await this.background;
    const engines = new Set([this.inner, ...this.retired]);
    this.retired.clear();
    await Promise.all([...engines].map((e) => e.close()));
  }

  private inFlight(): number {
    let n = 0;
    for (const count of this.running.values()) n += count;
    return n;
  }

  private retire(engine: Engine): void {
    if (this.running.has(engine)) {
      this.retired.add(engine);
      return;
    }
    this.retired.delete(engine);
    void engine.close().catch(() => undefined);
  }
}
