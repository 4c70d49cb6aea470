// kimina.engine = vllm: the Engine over a vLLM server the backend starts itself (server.ts) on the first request,
// talks to through the OpenAI engine (the checkpoint's rendering to /v1/completions, n samples per request), and
// stops after kimina.vllmIdleMinutes without a request, so the GPU is given back; the next request starts it again.
// A server that dies mid-request fails that request with vLLM's last lines; the next one starts a new server.
// Prompt tokens are counted here with the checkpoint's tokenizer, so counting never starts the server.
import type { ChatMessage } from '../../protocol';
import type { Engine, Generation, OnDelta, SamplingOptions } from '../engine';
import { OpenAIEngine } from '../openai/engine';
import { loadLocalTemplate, type LocalTemplate } from '../openai/tokenCount';
import { VllmServer, type VllmServerOptions } from './server';

export interface VllmEngineOptions {
  server: Omit<VllmServerOptions, 'log'>;
  /** Minutes without a request before the server is stopped; 0 keeps it up until the engine closes. */
  idleMinutes: number;
  /** The checkpoint's tokenizer and chat template (the prompts are rendered here). */
  tokenizerDir: string;
  log: (line: string) => void;
}

interface Up {
  server: VllmServer;
  client: OpenAIEngine;
}

/** How long a failed request waits for the server's exit to be seen, to tell a dead server from a refusal. */
const EXIT_SETTLE_MS = 2000;

/** The longest a Node timer waits (about 24.8 days); a longer one fires after 1 ms instead. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

export class VllmEngine implements Engine {
  readonly name = 'vllm';
  private up: Promise<Up> | undefined;
  /** What `up` resolved to, once it has. */
  private current: Up | undefined;
  private stopping: Promise<void> = Promise.resolve();
  private inFlight = 0;
  private idle: NodeJS.Timeout | undefined;
  private closed = false;
  /** Aborted on close: a server still loading is stopped at once. */
  private readonly closing = new AbortController();
  private local: Promise<LocalTemplate> | undefined;
  /** The server's state in words, for the status line. */
  private state = 'not running: it starts on the first request';
  /** Servers started so far (a restart after an idle stop or a crash counts). */
  starts = 0;

  constructor(private readonly o: VllmEngineOptions) {}

  get model(): string {
    return this.o.server.servedModelName;
  }
  get maxContext(): number {
    return this.o.server.maxModelLen;
  }
  get detail(): string {
    const idle = this.o.idleMinutes > 0 ? `stops after ${this.o.idleMinutes} min idle` : 'no idle stop';
    const died = this.current && !this.current.server.running;
    const state = died ? 'stopped: it exited on its own; the next request starts it again' : this.state;
    return `managed vLLM (${this.o.server.python}, ${this.o.server.modelDir}; ${idle}): ${state}`;
  }

  /** The running server, if any (for tests and status). */
  async server(): Promise<VllmServer | undefined> {
    const up = await this.up?.catch(() => undefined);
    return up?.server.running ? up.server : undefined;
  }

  async countPromptTokens(conversation: ChatMessage[]): Promise<number> {
    this.local ??= loadLocalTemplate(this.o.tokenizerDir);
    const { tokenizer, template } = await this.local;
    return tokenizer.encode(await template.render(conversation)).length;
  }

  async generate(conversations: ChatMessage[][], options: SamplingOptions, onDelta?: OnDelta): Promise<Generation[]> {
    if (this.closed) throw new Error('the vLLM engine is closed');
    this.inFlight++;
    clearTimeout(this.idle);
    try {
      const up = await this.whenUp(options.signal);
      if (!up) return conversations.map(() => ({ text: '', tokens: 0, finishReason: 'cancelled' as const }));
      try {
        return await up.client.generate(conversations, options, onDelta);
      } catch (err) {
        await Promise.race([up.server.ended, new Promise((r) => setTimeout(r, EXIT_SETTLE_MS))]);
        if (up.server.running) throw err;
        this.forget(up);
        this.state = `stopped: it died during a request; the next request starts it again`;
        throw new Error(
          `vLLM died during the request (${(err as Error).message}): ${up.server.exitWords()}\nThe next request starts it again.`,
        );
      }
    } finally {
      this.inFlight--;
      this.armIdleStop();
    }
  }

  /** The server up, started now if it is not running; undefined when the signal aborts first (a start goes on). */
  private async whenUp(signal?: AbortSignal): Promise<Up | undefined> {
    if (signal?.aborted) return undefined;
    const ready = this.ensureUp();
    if (!signal) return ready;
    let onAbort = (): void => undefined;
    const aborted = new Promise<undefined>((resolve) => {
      onAbort = () => resolve(undefined);
      signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([ready, aborted]);
    } finally {
      signal.removeEventListener('abort', onAbort); // a request's signal outlives the start: no listener left on it
    }
  }

  private async ensureUp(): Promise<Up> {
    const current = this.up;
    if (current) {
      const up = await current; // a failed start throws here, and the next request tries again
      if (up.server.running) return up;
      this.o.log(`vLLM had stopped (${up.server.exitWords()}); starting it again`);
      this.forget(up);
    }
    return this.start();
  }

  private start(): Promise<Up> {
    this.up ??= (async (): Promise<Up> => {
      await this.stopping; // the GPU memory of a server being stopped is free first
      this.starts++;
      this.state = 'starting (loading the weights and capturing CUDA graphs can take minutes)';
      this.o.log(`vLLM is not running: starting it for this request (start ${this.starts})`);
      const server = await VllmServer.start({ ...this.o.server, log: this.o.log, signal: this.closing.signal });
      try {
        const client = await OpenAIEngine.connect({
          baseUrl: server.baseUrl,
          socketPath: server.socketPath,
          apiKey: server.apiKey,
          model: this.o.server.servedModelName,
          nMode: 'native', // vLLM honours n
          route: 'completions',
          tokenizerDir: this.o.tokenizerDir,
          log: this.o.log,
        });
        this.state = `up on unix socket ${server.socketPath} (pid ${server.pid})`;
        this.current = { server, client };
        return this.current;
      } catch (err) {
        await server.stop();
        throw err;
      }
    })().catch((err: Error) => {
      this.up = undefined;
      this.state = `not running: its last start failed; the next request tries again`;
      throw err;
    });
    return this.up;
  }

  /** Drops a server that has ended, unless a newer one has replaced it. */
  private forget(up: Up): void {
    if (this.current !== up) return;
    this.current = undefined;
    this.up = undefined;
  }

  private armIdleStop(): void {
    clearTimeout(this.idle);
    const ms = this.o.idleMinutes * 60_000;
    // 0, or beyond what a timer holds: no idle stop (a timer of 100,000 minutes would fire at once)
    if (this.inFlight > 0 || this.closed || !this.up || !(ms > 0 && ms <= LONGEST_TIMER_MS)) return;
    this.idle = setTimeout(() => void this.stopIdle(), ms);
    this.idle.unref();
  }

  private async stopIdle(): Promise<void> {
    const current = this.up;
    if (!current || this.inFlight > 0 || this.closed) return;
    this.up = undefined;
    this.current = undefined;
    this.stopping = (async () => {
      const up = await current.catch(() => undefined);
      if (!up?.server.running) return;
      await up.server.stop();
      this.state = `stopped after ${this.o.idleMinutes} min without a request; the next request starts it again`;
      this.o.log(
        `vLLM (pid ${up.server.pid}) stopped after ${this.o.idleMinutes} min without a request, so the GPU is given back; the next request starts it again`,
      );
    })();
    await this.stopping;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.closing.abort();
    clearTimeout(this.idle);
    const current = this.up;
    this.up = undefined;
    this.current = undefined;
    await this.stopping;
    const up = await current?.catch(() => undefined);
    if (up?.server.running) {
      await up.server.stop();
      this.o.log(`vLLM (pid ${up.server.pid}) stopped: the engine closed`);
    }
    this.state = 'stopped: the engine closed';
  }
}
