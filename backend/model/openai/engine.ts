// An Engine over an OpenAI-compatible chat server (vLLM, SGLang, llama.cpp server, Ollama):
// `POST {base}/chat/completions` with streaming, n samples per request (or parallel requests for
// servers that ignore n), reasoning fields folded back into <think>…</think>, cancellation.
import axios, { type AxiosInstance, isAxiosError, isCancel } from 'axios';
import type { Readable } from 'node:stream';
import type { ChatMessage } from '../../protocol';
import type { Engine, FinishReason, Generation, OnDelta, SamplingOptions } from '../engine';
import { SseParser } from './sse';
import { ThinkFolder, reasoningOf } from './reasoning';
import { describeRequestError } from './errors';
import { PromptTokenCounter, type TokenCountSource } from './tokenCount';

export interface OpenAIEngineOptions {
  /** The OpenAI API root, e.g. http://127.0.0.1:8000/v1. */
  baseUrl: string;
  /** Model name as the server knows it; when absent, the server's only model. */
  model?: string;
  apiKey?: string;
  /** 'auto': send n and switch to parallel requests if the server answers fewer choices. */
  nMode?: 'auto' | 'native' | 'parallel';
  /** Most requests in flight at once (parallel mode). */
  maxParallel?: number;
  /** A local model folder, for counting prompt tokens when the server has no tokenize endpoint. */
  tokenizerDir?: string;
  /** Connect timeout for the initial model listing, in ms. */
  connectTimeoutMs?: number;
  /** Give up on a generation request after this long without any data (queueing included), in ms. */
  idleTimeoutMs?: number;
  log?: (line: string) => void;
}

interface ServerModel {
  id: string;
  max_model_len?: number;
}

interface Output {
  text: string;
  tokens: number;
  finish?: FinishReason;
  folder: ThinkFolder;
}

/** One request's job: which outputs its choices fill, in choice-index order. */
interface Job {
  conversation: ChatMessage[];
  targets: number[];
  seed?: number;
}

export class OpenAIEngine implements Engine {
  readonly name = 'openai';
  private nIgnored: boolean;
  private readonly counter: PromptTokenCounter;

  private constructor(
    private readonly http: AxiosInstance,
    private readonly o: Required<Pick<OpenAIEngineOptions, 'baseUrl' | 'nMode' | 'maxParallel' | 'log'>> &
      OpenAIEngineOptions,
    readonly model: string,
    readonly maxContext: number | undefined,
  ) {
    this.nIgnored = o.nMode === 'parallel';
    this.counter = new PromptTokenCounter({
      http,
      rootUrl: rootOf(o.baseUrl),
      model,
      tokenizerDir: o.tokenizerDir,
      log: o.log,
    });
  }

  /** Lists the server's models (which also checks it is reachable) and picks the model. */
  static async connect(options: OpenAIEngineOptions): Promise<OpenAIEngine> {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    if (!/^https?:\/\//.test(baseUrl))
      throw new Error(`KIMINA_OPENAI_BASE_URL must be an http(s) URL, got '${options.baseUrl}'`);
    const http = axios.create({
      headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
      maxBodyLength: Infinity,
      maxContentLength: Infinity,
    });
    const o = {
      nMode: 'auto' as const,
      maxParallel: 16,
      log: (l: string) => console.error(`kimina: ${l}`),
      ...options,
      baseUrl,
    };
    const url = `${baseUrl}/models`;
    let models: ServerModel[];
    try {
      const r = await http.get(url, { timeout: options.connectTimeoutMs ?? 10_000 });
      models = Array.isArray(r.data?.data) ? r.data.data : [];
    } catch (err) {
      throw await describeRequestError(err, { url, model: options.model ?? '' });
    }
    let model = options.model;
    if (!model) {
      if (models.length !== 1) {
        throw new Error(
          `set KIMINA_MODEL to the model to use; the server at ${baseUrl} serves ${models.length === 0 ? 'no models' : models.map((m) => m.id).join(', ')}`,
        );
      }
      model = models[0].id;
    } else if (models.length > 0 && !models.some((m) => m.id === model)) {
      throw new Error(
        `the model server at ${baseUrl} has no model '${model}'; it serves: ${models.map((m) => m.id).join(', ')} (set KIMINA_MODEL to one of them)`,
      );
    }
    const listed = models.find((m) => m.id === model);
    return new OpenAIEngine(
      http,
      o,
      model,
      typeof listed?.max_model_len === 'number' ? listed.max_model_len : undefined,
    );
  }

  /** Where prompt token counts come from so far ('estimate' is said once in the log as well). */
  get tokenCountSource(): TokenCountSource | undefined {
    return this.counter.source;
  }

  countPromptTokens(conversation: ChatMessage[]): Promise<number> {
    return this.counter.count(conversation);
  }

  async generate(conversations: ChatMessage[][], options: SamplingOptions, onDelta?: OnDelta): Promise<Generation[]> {
    const outputs: Output[] = conversations.map(() => ({ text: '', tokens: 0, folder: new ThinkFolder() }));
    const groups = new Map<string, number[]>();
    conversations.forEach((c, i) => {
      const key = JSON.stringify(c.map((m) => [m.role, m.content]));
      groups.set(key, [...(groups.get(key) ?? []), i]);
    });
    const jobs: Job[] = [];
    for (const targets of groups.values()) {
      const conversation = conversations[targets[0]];
      if (this.nIgnored)
        targets.forEach((t, k) => jobs.push({ conversation, targets: [t], seed: seedFor(options.seed, k) }));
      else jobs.push({ conversation, targets, seed: options.seed });
    }
    await this.runAll(jobs, outputs, options, onDelta);
    // Servers that ignore n (llama.cpp, Ollama) answer one choice: ask again for the rest, in parallel.
    const missing = jobs.flatMap((job) =>
      job.targets.filter((t) => outputs[t].finish === undefined).map((t) => ({ job, t })),
    );
    if (missing.length > 0 && !options.signal?.aborted) {
      if (this.o.nMode === 'native')
        throw new Error(
          `the model server at ${this.o.baseUrl} answered fewer choices than the n requested; set KIMINA_OPENAI_N=parallel`,
        );
      if (!this.nIgnored)
        this.o.log(`the model server at ${this.o.baseUrl} ignores n; sending one request per sample from now on`);
      this.nIgnored = true;
      await this.runAll(
        missing.map(({ job, t }, k) => ({
          conversation: job.conversation,
          targets: [t],
          seed: seedFor(options.seed, k + 1),
        })),
        outputs,
        options,
        onDelta,
      );
    }
    return outputs.map((out) => ({
      text: out.text,
      tokens: out.tokens,
      finishReason: options.signal?.aborted && out.finish === undefined ? 'cancelled' : (out.finish ?? 'cancelled'),
    }));
  }

  async close(): Promise<void> {
    /* HTTP only: nothing held open between requests */
  }

  private async runAll(jobs: Job[], outputs: Output[], options: SamplingOptions, onDelta?: OnDelta): Promise<void> {
    // The first failure stops the other requests: their answers would be thrown away anyway.
    const failure = new AbortController();
    const signal = options.signal ? AbortSignal.any([options.signal, failure.signal]) : failure.signal;
    const scoped = { ...options, signal };
    let next = 0;
    let error: unknown;
    const worker = async (): Promise<void> => {
      while (next < jobs.length && !signal.aborted) {
        try {
          await this.request(jobs[next++], outputs, scoped, onDelta);
        } catch (err) {
          if (!failure.signal.aborted) {
            error = err;
            failure.abort();
          }
        }
      }
    };
    const lanes = Math.max(1, Math.min(this.o.maxParallel, jobs.length));
    await Promise.all(Array.from({ length: lanes }, worker));
    if (error !== undefined) throw error;
  }

  private async request(job: Job, outputs: Output[], options: SamplingOptions, onDelta?: OnDelta): Promise<void> {
    const url = `${this.o.baseUrl}/chat/completions`;
    const body: Record<string, unknown> = {
      model: this.model,
      messages: job.conversation.map((m) => ({ role: m.role, content: m.content })),
      stream: true,
      stream_options: { include_usage: true },
      n: job.targets.length,
      temperature: options.temperature,
      top_p: options.topP,
      // No top-k cut, as the recipe's verl sampling (top_k -1): llama.cpp's server would otherwise keep 40 tokens.
      top_k: -1,
      max_tokens: options.maxTokens,
    };
    if (options.stop && options.stop.length > 0) body.stop = options.stop;
    if (job.seed !== undefined) body.seed = job.seed;
    // Idle watchdog: no data for idleTimeoutMs (queueing included) ends the request with a clear error.
    const idleMs = this.o.idleTimeoutMs ?? 600_000;
    const watchdog = new AbortController();
    let idle: NodeJS.Timeout | undefined;
    const touch = (): void => {
      clearTimeout(idle);
      idle = setTimeout(() => watchdog.abort(), idleMs);
    };
    const timedOut = (): Error =>
      new Error(`the model server at ${url} timed out: no data for ${Math.round(idleMs / 1000)} s`);
    const signal = options.signal ? AbortSignal.any([options.signal, watchdog.signal]) : watchdog.signal;
    let stream: Readable;
    let contentType: string;
    touch();
    try {
      const r = await this.http.post(url, body, { responseType: 'stream', signal });
      stream = r.data as Readable;
      contentType = String(r.headers['content-type'] ?? '');
    } catch (err) {
      clearTimeout(idle);
      if (options.signal?.aborted) return;
      if (watchdog.signal.aborted) throw timedOut();
      if (isCancel(err)) return;
      throw await describeRequestError(err, { url, model: this.model });
    }
    const counts: number[] = job.targets.map(() => 0);
    let usageTokens: number | undefined;
    // Token counts: the server's usage is exact for one choice; otherwise one streamed chunk per token.
    const settleTokens = (): void =>
      job.targets.forEach((t, i) => {
        outputs[t].tokens = job.targets.length === 1 && usageTokens !== undefined ? usageTokens : counts[i];
      });
    const apply = (choice: Record<string, unknown>, delta: Record<string, unknown> | undefined): void => {
      const index = typeof choice.index === 'number' ? choice.index : 0;
      const target = job.targets[index];
      if (target === undefined) return; // more choices than asked for: ignore the extras
      const out = outputs[target];
      const content = typeof delta?.content === 'string' ? delta.content : undefined;
      const text = out.folder.push({ reasoning: reasoningOf(delta), content });
      if (text.length > 0) {
        out.text += text;
        counts[index]++;
        onDelta?.(target, text);
      }
      if (typeof choice.finish_reason === 'string') out.finish = choice.finish_reason === 'length' ? 'length' : 'stop';
    };
    try {
      if (contentType.includes('application/json')) {
        // A server that ignores `stream` answers one JSON body.
        let raw = '';
        for await (const chunk of stream) {
          touch();
          raw += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
        }
        let data: { choices?: Array<Record<string, unknown>>; usage?: { completion_tokens?: number } };
        try {
          data = JSON.parse(raw);
        } catch {
          throw new Error(`the model server at ${url} sent an unreadable answer: ${raw.slice(0, 200)}`);
        }
        for (const choice of data.choices ?? []) {
          apply(choice, choice.message as Record<string, unknown> | undefined);
          if (choice.finish_reason === undefined || choice.finish_reason === null)
            apply({ ...choice, finish_reason: 'stop' }, undefined);
        }
        usageTokens = data.usage?.completion_tokens;
      } else {
        const parser = new SseParser();
        let done = false;
        const handle = (data: string): void => {
          if (data.trim() === '[DONE]') {
            done = true;
            return;
          }
          let event: Record<string, unknown>;
          try {
            event = JSON.parse(data);
          } catch {
            throw new Error(`the model server at ${url} sent an unreadable event: ${data.slice(0, 200)}`);
          }
          if (event.error) {
            const e = event.error as Record<string, unknown> | string;
            throw new Error(
              `the model server at ${url} failed during generation: ${typeof e === 'string' ? e : String(e.message ?? JSON.stringify(e))}`,
            );
          }
          for (const choice of (event.choices as Array<Record<string, unknown>> | undefined) ?? []) {
            apply(choice, choice.delta as Record<string, unknown> | undefined);
          }
          const usage = event.usage as { completion_tokens?: number } | undefined | null;
          if (usage && typeof usage.completion_tokens === 'number') usageTokens = usage.completion_tokens;
        };
        for await (const chunk of stream) {
          touch();
          for (const data of parser.push(chunk)) handle(data);
        }
        for (const data of parser.end()) handle(data);
        const unfinished = job.targets.filter((t) => outputs[t].finish === undefined && outputs[t].text.length > 0);
        if (!done && unfinished.length > 0)
          throw new Error(`the model server at ${url} closed the stream before the answer was finished`);
      }
    } catch (err) {
      if (options.signal?.aborted) {
        settleTokens();
        return;
      }
      if (watchdog.signal.aborted) throw timedOut();
      if (err instanceof Error && err.message.startsWith('the model server')) throw err;
      if (err instanceof Error && !isAxiosError(err))
        throw new Error(`the model server at ${url} broke off the answer (${err.message})`);
      throw await describeRequestError(err, { url, model: this.model });
    } finally {
      clearTimeout(idle);
    }
    settleTokens();
  }
}

/** The server root: the base URL without a trailing /v1 (vLLM and llama.cpp serve /tokenize there). */
export function rootOf(baseUrl: string): string {
  return baseUrl.replace(/\/+$/, '').replace(/\/v1$/, '');
}

function seedFor(seed: number | undefined, k: number): number | undefined {
  return seed === undefined ? undefined : seed + k;
}
