// An Engine over an OpenAI-compatible chat server (vLLM, SGLang, llama.cpp server, Ollama):
// `POST {base}/chat/completions` with streaming, n samples per request (or parallel requests for
// servers that refuse or ignore n), reasoning fields folded back into <think>…</think>, cancellation.
// It reacts to what each server answers, never to its name: a server that says its slot count (llama.cpp's
// `GET /props` total_slots) gets requests of at most that many samples; llama.cpp's refusals of n ("Only one
// completion choice is allowed" before PR #17775, "n_cmpl cannot be greater than the number of slots" since)
// switch to one request per sample (once, remembered); an answer is cut when the server
// says finish_reason "length" or its usage reaches the known context (vLLM's max_model_len, Ollama's /api/ps
// context_length); where the server renders the chat template itself, its rendering is compared with the
// checkpoint's, and on a difference the engine sends the checkpoint's rendering to /v1/completions (llama.cpp,
// vLLM) or to Ollama's native /api/generate with raw: true (its OpenAI API has no verbatim prompt route).
// docs/models.md has the table.
import axios, { type AxiosInstance, isAxiosError, isCancel } from 'axios';
import type { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { SseFrames, type ChatMessage } from '../../protocol';
import type { Engine, FinishReason, Generation, OnDelta, SamplingOptions } from '../engine';
import { ThinkFolder, reasoningOf } from './reasoning';
import { AnswerError, bodyText, describeRequestError, serverMessage } from './errors';
import { PromptTokenCounter, loadLocalTemplate, type LocalTemplate, type TokenCountSource } from './tokenCount';
import { RENDERER_NAME, renderOnServer, showDifference, type Renderer } from './serverTemplate';

export interface OpenAIEngineOptions {
  /** The OpenAI API root, e.g. http://127.0.0.1:8000/v1. */
  baseUrl: string;
  /** Model name as the server knows it; when absent, the server's only model. */
  model?: string;
  apiKey?: string;
  /**
   * A Unix socket every request goes to instead of baseUrl's host and port (axios' socketPath): the managed vLLM
   * listens on one (backend/model/vllm/server.ts).
   */
  socketPath?: string;
  /** 'auto': send n and switch to parallel requests if the server answers fewer choices. */
  nMode?: 'auto' | 'native' | 'parallel';
  /** Most requests in flight at once (parallel mode). */
  maxParallel?: number;
  /** A local model folder, for counting prompt tokens when the server has no tokenize endpoint. */
  tokenizerDir?: string;
  /**
   * 'completions': prompts rendered with the checkpoint's template (tokenizerDir) go to /v1/completions from the
   * first request, with no comparison of templates: for a server the backend started on that very checkpoint
   * (the managed vLLM, backend/model/vllm/).
   */
  route?: 'completions';
  /** Connect timeout for the initial model listing, in ms. */
  connectTimeoutMs?: number;
  /** Give up on a generation request after this long without any data (queueing included), in ms. */
  idleTimeoutMs?: number;
  log?: (line: string) => void;
}

interface ServerModel {
  id: string;
  max_model_len?: number;
  /** Who serves it, as the listing says: "vllm", "sglang", "llamacpp", "library" (Ollama). */
  owned_by?: string;
}

interface Output {
  text: string;
  tokens: number;
  finish?: FinishReason;
  folder: ThinkFolder;
  /** Why the answer is cut short, in words (set with finish 'length'). */
  cut?: string;
  /** The server's usage for this answer alone (requests of one choice). */
  usage?: { prompt: number; completion: number };
  /** max_tokens as sent, where it was lowered to fit the server's context (vLLM, SGLang refuse more). */
  limit?: { maxTokens: number; prompt: number };
}

/**
 * llama.cpp's server refuses n with one of these (chat and completions routes alike): before ggml-org/llama.cpp
 * PR #17775 (Dec 2025) any n != 1 (HTTP 500, server-common.cpp oaicompat_chat_params_parse); since, n above its
 * slot count (-np) (HTTP 400, server-task.cpp params_from_json_cmpl, answered as invalid_request_error).
 */
const N_REFUSED = /only one completion choice is allowed|n_cmpl cannot be greater than the number of slots/i;

export type PromptRoute = 'chat' | 'completions' | 'ollama-generate';

/** How the result of comparing the server's chat template with the checkpoint's stands. */
export interface TemplateCheck {
  renderer: Renderer;
  same: boolean;
  /** For a difference: where, with both texts around it. */
  detail?: string;
}

/** One request's job: which outputs its choices fill, in choice-index order. */
interface Job {
  conversation: ChatMessage[];
  targets: number[];
  seed?: number;
  /** Where the job's first target stands among its conversation's samples (distinct seeds on a fallback). */
  first: number;
}

export class OpenAIEngine implements Engine {
  readonly name = 'openai';
  private nIgnored: boolean;
  private readonly counter: PromptTokenCounter;
  /**
   * 'completions': prompts rendered with the checkpoint's template go to /v1/completions (llama.cpp, vLLM);
   * 'ollama-generate': to Ollama's native POST /api/generate with raw: true (its /v1 has no verbatim route).
   */
  private route: PromptRoute = 'chat';
  private local: Promise<LocalTemplate> | undefined;
  /** Conversation kinds whose server rendering was compared (the first turn; a fix turn with an answer). */
  private readonly templateChecked = new Set<'first' | 'fix'>();
  private templateUncheckable = false;
  /** The last comparison of the server's chat template with the checkpoint's. */
  templateCheck: TemplateCheck | undefined;
  /** The server has no /api/ps (not Ollama): do not ask again. */
  private noPs = false;
  private smallContextSaid = false;
  /** The server's slot count where it says (llama.cpp GET /props total_slots): the most samples per request. */
  private slots: Promise<number | undefined> | undefined;
  /** Prompt token counts of the conversations being generated (one count per conversation object). */
  private readonly promptCounts = new WeakMap<ChatMessage[], Promise<number | undefined>>();

  private constructor(
    private readonly http: AxiosInstance,
    private readonly o: Required<Pick<OpenAIEngineOptions, 'baseUrl' | 'nMode' | 'maxParallel' | 'log'>> &
      OpenAIEngineOptions,
    readonly model: string,
    readonly maxContext: number | undefined,
    /** The listing's owned_by for the model: SGLang says "sglang" (its /tokenize otherwise answers as vLLM's). */
    private readonly ownedBy?: string,
  ) {
    this.nIgnored = o.nMode === 'parallel';
    if (o.route === 'completions' && o.tokenizerDir) this.route = 'completions';
    this.counter = new PromptTokenCounter({
      http,
      rootUrl: rootOf(o.baseUrl),
      model,
      tokenizerDir: o.tokenizerDir,
      local: o.tokenizerDir ? () => this.localTemplate() : undefined,
      log: o.log,
    });
  }

  private localTemplate(): Promise<LocalTemplate> {
    this.local ??= loadLocalTemplate(this.o.tokenizerDir!);
    return this.local;
  }

  /** Which route requests go to now: 'chat' (the server renders) or one taking the checkpoint's rendering. */
  get promptRoute(): PromptRoute {
    return this.route;
  }

  /** Lists the server's models (which also checks it is reachable) and picks the model. */
  static async connect(options: OpenAIEngineOptions): Promise<OpenAIEngine> {
    const baseUrl = options.baseUrl.replace(/\/+$/, '');
    if (!/^https?:\/\//.test(baseUrl))
      throw new Error(`KIMINA_OPENAI_BASE_URL must be an http(s) URL, got '${options.baseUrl}'`);
    const http = axios.create({
      headers: options.apiKey ? { Authorization: `Bearer ${options.apiKey}` } : {},
      ...(options.socketPath ? { socketPath: options.socketPath } : {}),
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
      throw await describeRequestError(err, { url, model: options.model ?? '', apiKeySent: !!options.apiKey });
    }
    let model = options.model;
    if (!model) {
      if (models.length !== 1) {
        throw new Error(
          `set KIMINA_MODEL to the model to use; the server at ${baseUrl} serves ${models.length === 0 ? 'no models' : models.map((m) => m.id).join(', ')}`,
        );
      }
      model = models[0].id;
    } else if (models.length > 0 && !models.some((m) => m.id === model || m.id === `${model}:latest`)) {
      // Ollama lists tagged names (qwen3:latest) and takes the untagged one as the same model.
      throw new Error(
        `the model server at ${baseUrl} has no model '${model}'; it serves: ${models.map((m) => m.id).join(', ')} (set KIMINA_MODEL to one of them)`,
      );
    }
    const listed = models.find((m) => m.id === model) ?? models.find((m) => m.id === `${model}:latest`);
    return new OpenAIEngine(
      http,
      o,
      model,
      typeof listed?.max_model_len === 'number' ? listed.max_model_len : undefined,
      typeof listed?.owned_by === 'string' ? listed.owned_by : undefined,
    );
  }

  /** Where prompt token counts come from so far ('estimate' is said once in the log as well). */
  get tokenCountSource(): TokenCountSource | undefined {
    return this.counter.source;
  }

  countPromptTokens(conversation: ChatMessage[]): Promise<number> {
    // Once prompts are rendered here, the checkpoint's tokenizer counts them, not the server's template.
    if (this.route !== 'chat')
      return this.localTemplate().then(
        async ({ tokenizer, template }) => tokenizer.encode(await template.render(conversation)).length,
      );
    return this.counter.count(conversation);
  }

  async generate(conversations: ChatMessage[][], options: SamplingOptions, onDelta?: OnDelta): Promise<Generation[]> {
    const outputs: Output[] = conversations.map(() => ({ text: '', tokens: 0, folder: new ThinkFolder() }));
    if (!options.signal?.aborted) await this.checkTemplate(conversations);
    const groups = new Map<string, number[]>();
    conversations.forEach((c, i) => {
      const key = JSON.stringify(c.map((m) => [m.role, m.content]));
      groups.set(key, [...(groups.get(key) ?? []), i]);
    });
    const perRequest = this.nIgnored ? 1 : ((await this.slotCount()) ?? Infinity);
    const jobs: Job[] = [];
    for (const targets of groups.values()) {
      const conversation = conversations[targets[0]];
      if (this.nIgnored)
        targets.forEach((t, k) => jobs.push({ conversation, targets: [t], seed: seedFor(options.seed, k), first: k }));
      else
        for (let k = 0; k < targets.length; k += perRequest)
          jobs.push({
            conversation,
            targets: targets.slice(k, k + perRequest),
            seed: seedFor(options.seed, k),
            first: k,
          });
    }
    await this.runAll(jobs, outputs, options, onDelta);
    // Servers that refuse n (llama.cpp: HTTP 500) or ignore it (Ollama: one choice) are asked again for the
    // missing samples, one request each, in parallel, with distinct seeds.
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
        missing.map(({ job, t }) => ({
          conversation: job.conversation,
          targets: [t],
          seed: seedFor(options.seed, job.first + job.targets.indexOf(t)),
          first: job.first + job.targets.indexOf(t),
        })),
        outputs,
        options,
        onDelta,
      );
    }
    await this.judgeCuts(outputs, options);
    return outputs.map((out) => {
      const finishReason: FinishReason =
        options.signal?.aborted && out.finish === undefined ? 'cancelled' : (out.finish ?? 'cancelled');
      return finishReason === 'length' && out.cut
        ? { text: out.text, tokens: out.tokens, finishReason, cut: out.cut }
        : { text: out.text, tokens: out.tokens, finishReason };
    });
  }

  /**
   * Marks cut answers: finish_reason "length" from the server, or usage (prompt + answer) reaching the known
   * context. Ollama's /v1 says neither when its context fills (it shifts the context and goes on: ollama/ollama
   * fb30760 server/routes.go `Shift: req.Shift == nil || *req.Shift`, llm/llama_server.go --context-shift),
   * so its context comes from `GET /api/ps` (`context_length` of the loaded model) and its usage decides.
   */
  private async judgeCuts(outputs: Output[], options: SamplingOptions): Promise<void> {
    let context = this.maxContext;
    let fromPs = false;
    if (context === undefined && outputs.some((o) => o.usage)) {
      context = await this.loadedContext();
      fromPs = context !== undefined;
    }
    for (const out of outputs) {
      const u = out.usage;
      if (out.finish === 'length') {
        const limit = out.limit
          ? `max_tokens ${out.limit.maxTokens}, lowered from ${options.maxTokens} to fit the prompt (${out.limit.prompt} tokens) in the server's context`
          : `max_tokens ${options.maxTokens}`;
        out.cut ??=
          `the server ended the answer with finish_reason "length" after ${out.tokens} tokens` +
          ` (${limit}${context !== undefined ? `, context ${context}` : ''})`;
      } else if (out.finish === 'stop' && u && context !== undefined && u.prompt + u.completion >= context) {
        out.finish = 'length';
        out.cut =
          `prompt (${u.prompt} tokens) and answer (${u.completion} tokens) reached the server's context of ${context} tokens` +
          (fromPs ? ' (Ollama /api/ps); the server went on past it without the start of the prompt' : '');
      }
    }
    const prompt = Math.max(0, ...outputs.map((o) => o.usage?.prompt ?? 0));
    if (fromPs && context !== undefined && !this.smallContextSaid && prompt + options.maxTokens > context) {
      this.smallContextSaid = true;
      const need = prompt + options.maxTokens;
      this.o.log(
        `Ollama runs ${this.model} with a context of ${context} tokens (GET /api/ps), less than this prompt (${prompt} tokens) ` +
          `plus max_tokens (${options.maxTokens}): longer answers are cut. Ollama's OpenAI API cannot set the context; ` +
          `restart the server with OLLAMA_CONTEXT_LENGTH=${need} ollama serve, or create the model from a Modelfile ` +
          `with PARAMETER num_ctx ${need} (ollama create)`,
      );
    }
  }

  /**
   * The server's slot count, read once: llama.cpp's `GET /props` answers `total_slots` (its -np), and since PR
   * #17775 it generates up to that many choices of one request in parallel and refuses more. Servers without the
   * route (vLLM, SGLang, Ollama) answer 404: no limit known, n is sent whole.
   */
  private slotCount(): Promise<number | undefined> {
    this.slots ??= this.http
      .get(`${rootOf(this.o.baseUrl)}/props`, { validateStatus: () => true, timeout: 5000 })
      .then((r) => {
        const n = r.status === 200 ? r.data?.total_slots : undefined;
        return typeof n === 'number' && Number.isInteger(n) && n > 0 ? n : undefined;
      })
      .catch(() => undefined);
    return this.slots;
  }

  /**
   * After a 404 or 400: whether GET /models names this model (undefined: another status, or the server lists
   * none). A missing model is a 404 from vLLM and Ollama but a 400 from a llama.cpp router ("model not found").
   */
  private async listsModel(err: unknown): Promise<boolean | undefined> {
    const status = isAxiosError(err) ? err.response?.status : undefined;
    if (status !== 404 && status !== 400) return undefined;
    const r = await this.http
      .get(`${this.o.baseUrl}/models`, { validateStatus: () => true, timeout: 5000 })
      .catch(() => undefined);
    const listed = r?.status === 200 && Array.isArray(r.data?.data) ? (r.data.data as ServerModel[]) : [];
    if (listed.length === 0) return undefined;
    return listed.some((m) => m.id === this.model || m.id === `${this.model}:latest`);
  }

  /** The context the server loaded the model with, where it says (Ollama: GET /api/ps). */
  private async loadedContext(): Promise<number | undefined> {
    if (this.noPs) return undefined;
    const r = await this.http
      .get(`${rootOf(this.o.baseUrl)}/api/ps`, { validateStatus: () => true, timeout: 5000 })
      .catch(() => undefined);
    const models = r?.status === 200 ? (r.data?.models as Array<Record<string, unknown>> | undefined) : undefined;
    if (!Array.isArray(models)) {
      this.noPs = true;
      return undefined;
    }
    const names = new Set([this.model, this.model.includes(':') ? this.model : `${this.model}:latest`]);
    const m = models.find((x) => names.has(String(x.name)) || names.has(String(x.model)));
    return typeof m?.context_length === 'number' && m.context_length > 0 ? m.context_length : undefined;
  }

  /**
   * Compares the server's rendering of a first-turn and of a fix-turn conversation with the checkpoint's
   * (once each). A difference is said in the log and kept in `templateCheck`; where the server has a route that
   * takes a prompt verbatim (llama.cpp, vLLM, SGLang: /v1/completions), requests go there from now on with the
   * checkpoint's rendering.
   */
  private async checkTemplate(conversations: ChatMessage[][]): Promise<void> {
    if (!this.o.tokenizerDir || this.route !== 'chat' || this.templateUncheckable) return;
    try {
      await this.compareTemplates(conversations);
    } catch (err) {
      // The check never stops a generation: the request itself will say what is wrong with the server.
      this.templateUncheckable = true;
      this.o.log(`cannot compare the server's chat template with the checkpoint's: ${(err as Error).message}`);
    }
  }

  private async compareTemplates(conversations: ChatMessage[][]): Promise<void> {
    for (const kind of ['first', 'fix'] as const) {
      if (this.templateChecked.has(kind)) continue;
      const conversation = conversations.find((c) => c.some((m) => m.role === 'assistant') === (kind === 'fix'));
      if (!conversation) continue;
      const local = await this.localTemplate();
      const ours = await local.template.render(conversation);
      const theirs = await renderOnServer(
        {
          http: this.http,
          baseUrl: this.o.baseUrl,
          rootUrl: rootOf(this.o.baseUrl),
          model: this.model,
          tokenizeServer: this.ownedBy === 'sglang' ? 'sglang' : 'vllm',
        },
        conversation,
      );
      if (!theirs) {
        this.templateUncheckable = true;
        this.o.log(
          `the model server at ${this.o.baseUrl} renders the chat template itself and shows no rendering ` +
            `(no llama.cpp /apply-template, vLLM or SGLang /tokenize with messages, or Ollama render-only answer): the prompt cannot be checked against the checkpoint's template`,
        );
        return;
      }
      this.templateChecked.add(kind);
      let same: boolean;
      let detail: string | undefined;
      if (theirs.prompt !== undefined) {
        same = theirs.prompt === ours;
        if (!same) detail = showDifference(ours, theirs.prompt);
      } else {
        const ids = local.tokenizer.encode(ours);
        const t = theirs.tokens ?? [];
        same = ids.length === t.length && ids.every((id, i) => id === t[i]);
        if (!same) {
          const at = ids.findIndex((id, i) => id !== t[i]);
          detail = `first different token at position ${at < 0 ? Math.min(ids.length, t.length) : at} (checkpoint ${ids.length} tokens, server ${t.length})`;
        }
      }
      this.templateCheck = { renderer: theirs.renderer, same, detail };
      if (same) continue;
      const turn = kind === 'fix' ? 'a fix-turn conversation' : 'the first turn';
      if (theirs.renderer === 'ollama') {
        // Ollama's /v1/completions applies the template too (openai.go FromCompleteRequest sets no Raw); its native
        // /api/generate with raw: true does not (routes.go GenerateHandler `if !req.Raw { …template… }`).
        this.route = 'ollama-generate';
        this.nIgnored = true; // /api/generate answers one completion per request
        this.o.log(
          `the model server's chat template (Ollama's Go template, POST /api/show "template") renders ${turn} differently from the ` +
            `checkpoint's (${detail}); Ollama's OpenAI API has no route that takes a rendered prompt as it is, so prompts rendered ` +
            `with the checkpoint's template go to its native ${rootOf(this.o.baseUrl)}/api/generate with raw: true from now on`,
        );
        return;
      }
      this.route = 'completions';
      this.o.log(
        `the model server's chat template (${RENDERER_NAME[theirs.renderer]}) renders ${turn} differently from the checkpoint's (${detail}); ` +
          `sending prompts rendered with the checkpoint's template to ${this.o.baseUrl}/completions from now on`,
      );
      return;
    }
  }

  /**
   * max_tokens for a request: the sampling's, lowered to what the server's known context leaves after the
   * prompt. vLLM refuses a request whose prompt plus max_tokens exceeds max_model_len (HTTP 400 "'max_tokens' or
   * 'max_completion_tokens' is too large: …": vllm-project/vllm 00bd149 vllm/entrypoints/openai/engine/serving.py
   * OpenAIServing._validate_input) and SGLang likewise ("Requested token count exceeds the model's maximum
   * context length …": sgl-project/sglang 001067f python/sglang/srt/managers/tokenizer_manager.py
   * _validate_one_request), so without this every long prompt fails instead of being answered and marked cut.
   */
  private async maxTokensFor(job: Job, outputs: Output[], options: SamplingOptions): Promise<number> {
    if (this.maxContext === undefined || this.route === 'ollama-generate') return options.maxTokens;
    let counted = this.promptCounts.get(job.conversation);
    if (!counted) {
      counted = this.countPromptTokens(job.conversation).catch(() => undefined);
      this.promptCounts.set(job.conversation, counted);
    }
    const prompt = await counted;
    if (prompt === undefined) return options.maxTokens;
    const room = this.maxContext - prompt;
    // No room at all: sent unchanged, and the server's own refusal says so.
    if (room < 1 || room >= options.maxTokens) return options.maxTokens;
    for (const t of job.targets) outputs[t].limit = { maxTokens: room, prompt };
    return room;
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
    const raw = this.route === 'completions';
    const ollama = this.route === 'ollama-generate';
    const url = ollama
      ? `${rootOf(this.o.baseUrl)}/api/generate`
      : `${this.o.baseUrl}/${raw ? 'completions' : 'chat/completions'}`;
    const prompt = raw || ollama ? await (await this.localTemplate()).template.render(job.conversation) : undefined;
    const maxTokens = await this.maxTokensFor(job, outputs, options);
    let body: Record<string, unknown>;
    if (ollama) {
      // Ollama's native generate (api/types.go GenerateRequest, Options): the prompt as it is, sampling in options.
      // top_k 0 turns the top-k cut off in llama.cpp's sampler (k <= 0: no cut), as the recipe samples; num_ctx
      // is not sent: a different one reloads the model (server/sched.go needsReload), the server's owner sets it.
      const sampling: Record<string, unknown> = {
        temperature: options.temperature,
        top_p: options.topP,
        top_k: 0,
        num_predict: options.maxTokens,
      };
      if (options.stop && options.stop.length > 0) sampling.stop = options.stop;
      if (job.seed !== undefined) sampling.seed = job.seed;
      body = { model: this.model, prompt, raw: true, stream: true, options: sampling };
    } else {
      body = {
        model: this.model,
        ...(raw ? { prompt } : { messages: job.conversation.map((m) => ({ role: m.role, content: m.content })) }),
        stream: true,
        stream_options: { include_usage: true },
        n: job.targets.length,
        temperature: options.temperature,
        top_p: options.topP,
        // No top-k cut, as the recipe's verl sampling (top_k -1): llama.cpp's server would otherwise keep 40 tokens.
        top_k: -1,
        max_tokens: maxTokens,
      };
      if (options.stop && options.stop.length > 0) body.stop = options.stop;
      if (job.seed !== undefined) body.seed = job.seed;
    }
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
      const status = isAxiosError(err) ? err.response?.status : undefined;
      const text = isAxiosError(err) && err.response ? await bodyText(err.response.data) : undefined;
      if (text !== undefined && job.targets.length > 1 && N_REFUSED.test(serverMessage(text))) {
        // llama.cpp: HTTP 500 "Only one completion choice is allowed" (older) or HTTP 400 "n_cmpl cannot be greater
        // than the number of slots, please increase -np" (a server that did not say its slots, or fewer than asked).
        if (this.o.nMode === 'native')
          throw new Error(
            `the model server at ${url} refuses n > 1 (HTTP ${status}: ${serverMessage(text)}); set KIMINA_OPENAI_N=auto or parallel`,
          );
        if (!this.nIgnored)
          this.o.log(
            `the model server at ${this.o.baseUrl} refuses n > 1 (HTTP ${status}: ${serverMessage(text)}); sending one request per sample from now on`,
          );
        this.nIgnored = true;
        return; // the samples stay unanswered: generate() asks for each in its own request
      }
      throw await describeRequestError(
        err,
        { url, model: this.model, modelListed: await this.listsModel(err), apiKeySent: !!this.o.apiKey },
        text,
      );
    }
    const counts: number[] = job.targets.map(() => 0);
    let usageTokens: number | undefined;
    let promptTokens: number | undefined;
    // Token counts: the server's usage is exact for one choice; otherwise one streamed chunk per token.
    const settleTokens = (): void =>
      job.targets.forEach((t, i) => {
        outputs[t].tokens = job.targets.length === 1 && usageTokens !== undefined ? usageTokens : counts[i];
        if (job.targets.length === 1 && usageTokens !== undefined && promptTokens !== undefined)
          outputs[t].usage = { prompt: promptTokens, completion: usageTokens };
      });
    const readUsage = (usage: unknown): void => {
      const u = usage as { completion_tokens?: unknown; prompt_tokens?: unknown } | null | undefined;
      if (u && typeof u.completion_tokens === 'number') usageTokens = u.completion_tokens;
      if (u && typeof u.prompt_tokens === 'number') promptTokens = u.prompt_tokens;
    };
    const apply = (choice: Record<string, unknown>, delta: Record<string, unknown> | undefined): void => {
      const index = typeof choice.index === 'number' ? choice.index : 0;
      const target = job.targets[index];
      if (target === undefined) return; // more choices than asked for: ignore the extras
      const out = outputs[target];
      // Chat deltas carry content (and a reasoning field); completions choices carry text.
      const content =
        typeof delta?.content === 'string' ? delta.content : typeof choice.text === 'string' ? choice.text : undefined;
      const text = out.folder.push({ reasoning: reasoningOf(delta), content });
      if (text.length > 0) {
        out.text += text;
        counts[index]++;
        onDelta?.(target, text);
      }
      if (typeof choice.finish_reason === 'string') out.finish = choice.finish_reason === 'length' ? 'length' : 'stop';
    };
    try {
      if (ollama) {
        // NDJSON, one GenerateResponse a line: `response` and `thinking` text, then `done` with `done_reason`,
        // `prompt_eval_count` and `eval_count` (api/types.go GenerateResponse, Metrics); an `error` line on failure.
        const out = outputs[job.targets[0]];
        const decoder = new StringDecoder('utf8'); // a character split across chunks stays whole
        let pending = '';
        const handle = (line: string): void => {
          if (!line.trim()) return;
          let event: Record<string, unknown>;
          try {
            event = JSON.parse(line);
          } catch {
            throw new AnswerError(`the model server at ${url} sent an unreadable line: ${line.slice(0, 200)}`);
          }
          if (event.error !== undefined)
            throw new AnswerError(`the model server at ${url} failed during generation: ${String(event.error)}`);
          const text = out.folder.push({
            reasoning: typeof event.thinking === 'string' && event.thinking ? event.thinking : undefined,
            content: typeof event.response === 'string' && event.response ? event.response : undefined,
          });
          if (text.length > 0) {
            out.text += text;
            counts[0]++;
            onDelta?.(job.targets[0], text);
          }
          if (event.done === true) {
            out.finish = event.done_reason === 'length' ? 'length' : 'stop';
            readUsage({ prompt_tokens: event.prompt_eval_count, completion_tokens: event.eval_count });
          }
        };
        for await (const chunk of stream) {
          touch();
          pending += typeof chunk === 'string' ? chunk : decoder.write(Buffer.from(chunk));
          const lines = pending.split('\n');
          pending = lines.pop() ?? '';
          for (const line of lines) handle(line);
        }
        handle(pending + decoder.end());
        if (out.finish === undefined && out.text.length > 0)
          throw new AnswerError(`the model server at ${url} closed the stream before the answer was finished`);
      } else if (contentType.includes('application/json')) {
        // A server that ignores `stream` answers one JSON body.
        let raw = '';
        for await (const chunk of stream) {
          touch();
          raw += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
        }
        let data: { choices?: Array<Record<string, unknown>>; usage?: unknown };
        try {
          data = JSON.parse(raw);
        } catch {
          throw new AnswerError(`the model server at ${url} sent an unreadable answer: ${raw.slice(0, 200)}`);
        }
        for (const choice of data.choices ?? []) {
          apply(choice, choice.message as Record<string, unknown> | undefined);
          if (choice.finish_reason === undefined || choice.finish_reason === null)
            apply({ index: choice.index, finish_reason: 'stop' }, undefined);
        }
        readUsage(data.usage);
      } else {
        const parser = new SseFrames();
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
            throw new AnswerError(`the model server at ${url} sent an unreadable event: ${data.slice(0, 200)}`);
          }
          if (event.error) {
            const e = event.error as Record<string, unknown> | string;
            throw new AnswerError(
              `the model server at ${url} failed during generation: ${typeof e === 'string' ? e : String(e.message ?? JSON.stringify(e))}`,
            );
          }
          for (const choice of (event.choices as Array<Record<string, unknown>> | undefined) ?? []) {
            apply(choice, choice.delta as Record<string, unknown> | undefined);
          }
          readUsage(event.usage);
        };
        for await (const chunk of stream) {
          touch();
          for (const { data } of parser.push(chunk)) handle(data);
        }
        for (const { data } of parser.end()) handle(data);
        const unfinished = job.targets.filter((t) => outputs[t].finish === undefined && outputs[t].text.length > 0);
        if (!done && unfinished.length > 0)
          throw new AnswerError(`the model server at ${url} closed the stream before the answer was finished`);
      }
    } catch (err) {
      if (options.signal?.aborted) {
        settleTokens();
        return;
      }
      if (watchdog.signal.aborted) throw timedOut();
      if (err instanceof AnswerError) throw err; // already says what the server did
      if (err instanceof Error && !isAxiosError(err))
        throw new AnswerError(`the model server at ${url} broke off the answer (${err.message})`);
      throw await describeRequestError(err, {
        url,
        model: this.model,
        modelListed: await this.listsModel(err),
        apiKeySent: !!this.o.apiKey,
      });
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
