// TEST DOUBLE: a stand-in OpenAI-compatible chat server (a real HTTP server on 127.0.0.1) that plays
// the parts of vLLM / SGLang / llama.cpp / Ollama the OpenAI engine depends on: /v1/models, streaming
// /v1/chat/completions and /v1/completions with n, stop, max_tokens, a reasoning field, usage, and the
// tokenize / render endpoints. Its "model" answers with scripted text; nothing here is a language model.
// Its "tokens" are chunks of `chunkChars` characters, for the answer and for the rendered prompt alike.
//
// With `server` set, it answers as that server's source says (each answer below notes where it was read):
//   llama.cpp  ggml-org/llama.cpp tools/server: server-common.cpp aa6192d (oaicompat_chat_params_parse,
//              format_error_response), server-task.cpp 17f5f8a (to_json_oaicompat_chat_stream, to_json_oaicompat),
//              src/llama-chat.cpp llm_chat_apply_template (the built-in chatml template)
//   Ollama     ollama/ollama fb30760: openai/openai.go, middleware/openai.go ChatWriter, server/routes.go
//              (ChatHandler, PsHandler, /api/version), api/types.go, template/chatml.gotmpl, llm/llama_server.go
//   vLLM       vllm-project/vllm d7e5252 vllm/entrypoints/openai/engine/protocol.py (DeltaMessage, ModelCard,
//              UsageInfo, StreamOptions); chat_completion/serving.py chat_completion_stream_generator (usage chunk);
//              00bd149 engine/serving.py OpenAIServing._validate_input, create_error_response (the context refusal)
//   SGLang     sgl-project/sglang 9b116df python/sglang/srt/entrypoints/openai/protocol.py (ModelCard
//              max_model_len, DeltaMessage reasoning_content, UsageInfo, n, top_k); 002897c serving_chat.py
//              _generate_chat_stream (finish chunks, then the usage chunk with choices [] when include_usage)
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type ServerKind = 'llama.cpp' | 'ollama' | 'vllm' | 'sglang';

type Messages = Array<{ role: string; content: string }>;

/**
 * The built-in chatml rendering, as llama.cpp's llm_chat_apply_template (LLM_CHAT_TEMPLATE_CHATML:
 * `<|im_start|>role\ncontent<|im_end|>\n` per message, then `<|im_start|>assistant\n`) and Ollama's
 * template/chatml.gotmpl (the same text) render it. Unlike Qwen3's Jinja template it keeps an earlier answer's
 * think block in the history.
 */
export function chatmlRender(messages: Messages): string {
  return messages.map((m) => `<|im_start|>${m.role}\n${m.content}<|im_end|>\n`).join('') + '<|im_start|>assistant\n';
}

export interface StandInRequest {
  path: string;
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
}

export interface StandInOptions {
  /** Answer as this server's source says (defaults for the options below, and its routes). */
  server?: ServerKind;
  /**
   * How the server renders a conversation (llama.cpp /apply-template and its chat route, Ollama's template and
   * render-only answer; default chatmlRender). Also the prompt whose "tokens" usage counts.
   */
  serverTemplate?: (messages: Messages) => string;
  /** vLLM /tokenize: real token ids of the server's rendering (default: a stand-in count of words). */
  tokenizeIds?: (text: string) => number[];
  /** The context the model was loaded with (llama.cpp -c, Ollama num_ctx): llama.cpp stops there, Ollama shifts. */
  numCtx?: number;
  models?: Array<{ id: string; max_model_len?: number }>;
  /** The scripted raw answer (think block included) for a request's sample. */
  answer: (messages: Array<{ role: string; content: string }>, sample: number, seed: number | undefined) => string;
  /** Split the think block into this field, like vLLM's qwen3 reasoning parser or llama.cpp. */
  reasoningField?: 'reasoning' | 'reasoning_content';
  /** Trim the newlines around reasoning and content, as some parsers do. */
  trimReasoning?: boolean;
  /** false: answer one choice whatever n says (llama.cpp, Ollama). */
  honorsN?: boolean;
  /** Characters per streamed chunk ("token"). */
  chunkChars?: number;
  chunkDelayMs?: number;
  tokenize?: 'vllm' | 'llamacpp' | 'none';
  apiKey?: string;
  /** Reply with one JSON body even when asked to stream. */
  ignoreStream?: boolean;
  /** Send an error event after this many chunks. */
  failAfterChunks?: number;
  /** Send an error event at once for requests whose messages match. */
  failWhen?: (messages: Array<{ role: string; content: string }>) => boolean;
  /** Drop the connection after this many chunks (a crashed server). */
  dropAfterChunks?: number;
  /** Answer /v1/models with an empty list (some servers list nothing useful). */
  hideModelList?: boolean;
  /** Send usage in the last chunk. */
  usage?: boolean;
}

export interface StandInServer {
  /** The OpenAI API root, ending in /v1. */
  baseUrl: string;
  requests: StandInRequest[];
  /** Streams the client closed before they were finished. */
  abortedStreams: number;
  close(): Promise<void>;
}

/** Splits text into chunks of `size` characters (surrogate pairs kept whole). */
function chunksOf(text: string, size: number): string[] {
  const chars = [...text];
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

export async function startStandInOpenAIServer(options: StandInOptions): Promise<StandInServer> {
  const kind = options.server;
  const o: StandInOptions = {
    // llama.cpp: one choice only (HTTP 500 otherwise, below); reasoning_content (--reasoning-format deepseek);
    // usage chunk when stream_options.include_usage (server-task.cpp to_json_oaicompat_chat_stream).
    ...(kind === 'llama.cpp'
      ? { reasoningField: 'reasoning_content' as const, usage: true, tokenize: 'llamacpp' as const }
      : {}),
    // Ollama: ChatCompletionRequest has no n (one choice), reasoning in `reasoning` (openai.go Delta), the usage
    // chunk after the finish chunk (middleware/openai.go ChatWriter.writeResponse).
    ...(kind === 'ollama'
      ? { honorsN: false, reasoningField: 'reasoning' as const, usage: true, tokenize: 'none' as const }
      : {}),
    // vLLM: n honoured; DeltaMessage.reasoning (copied into reasoning_content); usage chunk.
    ...(kind === 'vllm' ? { reasoningField: 'reasoning' as const, usage: true, tokenize: 'vllm' as const } : {}),
    // SGLang: n honoured; DeltaMessage.reasoning_content; usage chunk.
    ...(kind === 'sglang'
      ? { reasoningField: 'reasoning_content' as const, usage: true, tokenize: 'none' as const }
      : {}),
    ...options,
  };
  const render = o.serverTemplate ?? chatmlRender;
  const defaultModels: Array<{ id: string; max_model_len?: number }> =
    kind === 'ollama' || kind === 'llama.cpp'
      ? [{ id: 'AI-MO/Kimina-Prover-RL-0.6B' }] // neither lists a context length in /v1/models
      : [{ id: 'AI-MO/Kimina-Prover-RL-0.6B', max_model_len: 32768 }];
  const models = o.models ?? defaultModels;
  // Ollama fills a missing tag with "latest" (types/model/name.go defaultTag), so `kimina` is `kimina:latest`.
  const serves = (model: string): boolean =>
    models.some((m) => m.id === model || (kind === 'ollama' && m.id === `${model}:latest`));
  const state = { requests: [] as StandInRequest[], abortedStreams: 0 };

  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const tokensOf = (text: string): number => chunksOf(text, o.chunkChars ?? 4).length;

  const handleChat = async (
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
    route: 'chat' | 'completions',
  ): Promise<void> => {
    const model = body.model as string;
    if (!serves(model)) {
      json(res, 404, {
        error: { message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', code: 404 },
      });
      return;
    }
    if (kind === 'llama.cpp' && Number(body.n ?? 1) !== 1) {
      // llama.cpp server-common.cpp aa6192d oaicompat_chat_params_parse (and oaicompat_completion_params_parse):
      // `if (n_choices != 1) throw std::runtime_error("Only one completion choice is allowed")`; the handler
      // answers it as ERROR_TYPE_SERVER: format_error_response -> code 500, type "server_error", wrapped in
      // {"error": …} (res_error). Recorded: HTTP 500 {"error":{"code":500,"message":"Only one completion choice
      // is allowed","type":"server_error"}}.
      json(res, 500, { error: { code: 500, message: 'Only one completion choice is allowed', type: 'server_error' } });
      return;
    }
    const messages: Messages =
      route === 'chat' ? (body.messages as Messages) : [{ role: 'user', content: String(body.prompt ?? '') }];
    const promptText = route === 'chat' ? render(messages) : String(body.prompt ?? '');
    const promptTokens = tokensOf(promptText);
    if (kind === 'ollama' && body._debug_render_only === true) {
      // Ollama routes.go ChatHandler `if req.DebugRenderOnly`: the rendered template, no generation; the /v1
      // middleware wraps it as a chat.completion with `_debug_info` (openai.go ChatCompletion.DebugInfo).
      json(res, 200, {
        id: 'chatcmpl-standin',
        object: 'chat.completion',
        model,
        system_fingerprint: 'fp_ollama',
        choices: [{ index: 0, message: { role: 'assistant', content: '' }, finish_reason: null }],
        usage: { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 },
        _debug_info: { rendered_template: promptText },
      });
      return;
    }
    const listedModel = models.find((m) => m.id === model);
    if (kind === 'vllm' && listedModel?.max_model_len !== undefined) {
      // vLLM refuses, before generating, a prompt that fills max_model_len or leaves less than max_tokens
      // (vllm-project/vllm 00bd149 vllm/entrypoints/openai/engine/serving.py OpenAIServing._validate_input:
      // VLLMValidationError, answered by create_error_response as HTTP 400 BadRequestError with its parameter).
      const len = listedModel.max_model_len;
      const maxTokensAsked = typeof body.max_tokens === 'number' ? body.max_tokens : undefined;
      const refuse = (message: string, param: string): void =>
        json(res, 400, { error: { message, type: 'BadRequestError', param, code: 400 } });
      if (promptTokens >= len)
        return refuse(
          `This model's maximum context length is ${len} tokens. However, your request has ${promptTokens} input tokens. Please reduce the length of the input messages.`,
          'input_tokens',
        );
      if (maxTokensAsked !== undefined && promptTokens + maxTokensAsked > len)
        return refuse(
          `'max_tokens' or 'max_completion_tokens' is too large: ${maxTokensAsked}. This model's maximum context length is ${len} tokens and your request has ${promptTokens} input tokens (${maxTokensAsked} > ${len} - ${promptTokens}).`,
          'max_tokens',
        );
    }
    const n = o.honorsN === false ? 1 : Number(body.n ?? 1);
    const seed = typeof body.seed === 'number' ? body.seed : undefined;
    const size = o.chunkChars ?? 4;
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : Infinity;
    // Where the context stops an answer: llama.cpp at its -c (context shift is off by default: the slot stops
    // with STOP_TYPE_LIMIT, finish_reason "length"); vLLM never (refused above). Ollama
    // launches its runner with --context-shift unless the request says shift: false (routes.go `Shift:
    // req.Shift == nil || *req.Shift`, llama_server.go appendContextShiftArgs): it goes on past num_ctx.
    const listed = models.find((m) => m.id === model);
    const contextRoom =
      kind === 'ollama'
        ? Infinity
        : o.numCtx !== undefined
          ? o.numCtx - promptTokens
          : listed?.max_model_len !== undefined
            ? listed.max_model_len - promptTokens
            : Infinity;
    const stops = (body.stop as string[] | undefined) ?? [];
    // Per choice: the list of deltas to stream, and the finish reason.
    const plans = Array.from({ length: n }, (_, sample) => {
      let text = o.answer(messages, sample, seed);
      let finish = 'stop';
      for (const s of stops) {
        const at = text.indexOf(s);
        if (at >= 0) text = text.slice(0, at);
      }
      let pieces = chunksOf(text, size);
      const limit = Math.min(maxTokens, contextRoom);
      if (pieces.length > limit) {
        pieces = pieces.slice(0, Math.max(0, limit));
        finish = 'length';
      }
      const joined = pieces.join('');
      return {
        deltas: route === 'chat' ? toDeltas(joined, size) : chunksOf(joined, size).map((t) => ({ text: t })),
        finish,
        tokens: pieces.length,
      };
    });
    const usage = (completion: number) => ({
      prompt_tokens: promptTokens,
      completion_tokens: completion,
      total_tokens: promptTokens + completion,
    });
    if (body.stream !== true || o.ignoreStream) {
      json(res, 200, {
        id: 'cmpl-standin',
        object: route === 'chat' ? 'chat.completion' : 'text_completion',
        model,
        choices: plans.map((p, index) =>
          route === 'chat'
            ? { index, message: { role: 'assistant', ...mergeDeltas(p.deltas) }, finish_reason: p.finish }
            : { index, text: p.deltas.map((d) => d.text).join(''), finish_reason: p.finish },
        ),
        usage: usage(plans.reduce((s, p) => s + p.tokens, 0)),
      });
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    let closed = false;
    res.on('close', () => {
      if (!res.writableFinished) {
        closed = true;
        state.abortedStreams++;
      }
    });
    const send = (event: unknown): void => {
      res.write(`data: ${JSON.stringify(event)}\n\n`);
    };
    const object = route === 'chat' ? 'chat.completion.chunk' : 'text_completion';
    if (route === 'chat')
      send({
        id: 'c',
        object,
        // llama.cpp opens with `{"role":"assistant","content":null}` (server-task.cpp 17f5f8a
        // to_json_oaicompat_chat, `first`); vLLM and SGLang with content "" (serving_chat.py build_sse_content).
        choices: plans.map((_, index) => ({
          index,
          delta: { role: 'assistant', content: kind === 'llama.cpp' ? null : '' },
        })),
      });
    let sent = 0;
    const longest = Math.max(...plans.map((p) => p.deltas.length));
    for (let step = 0; step < longest; step++) {
      for (let index = 0; index < plans.length; index++) {
        const delta = plans[index].deltas[step];
        if (!delta) continue;
        if (closed) return;
        if ((o.failAfterChunks !== undefined && sent >= o.failAfterChunks) || o.failWhen?.(messages)) {
          send({ error: { message: 'CUDA out of memory (stand-in)', code: 500 } });
          res.end();
          return;
        }
        if (o.dropAfterChunks !== undefined && sent >= o.dropAfterChunks) {
          res.destroy();
          return;
        }
        send(
          route === 'chat'
            ? { id: 'c', object, choices: [{ index, delta, finish_reason: null }] }
            : { id: 'c', object, choices: [{ index, text: delta.text, logprobs: null, finish_reason: null }] },
        );
        sent++;
      }
      if (o.chunkDelayMs) await new Promise((r) => setTimeout(r, o.chunkDelayMs));
    }
    // The finish chunk: an empty delta and the reason (llama.cpp to_json_oaicompat_chat_stream; Ollama
    // FinishChunk `Delta{}`), then, when asked, the usage chunk with empty choices (all four servers).
    plans.forEach((p, index) =>
      send(
        route === 'chat'
          ? { id: 'c', object, choices: [{ index, delta: {}, finish_reason: p.finish }] }
          : { id: 'c', object, choices: [{ index, text: '', logprobs: null, finish_reason: p.finish }] },
      ),
    );
    const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true;
    if (o.usage && (kind === undefined || includeUsage))
      send({ id: 'c', object, choices: [], usage: usage(plans.reduce((s, p) => s + p.tokens, 0)) });
    res.write('data: [DONE]\n\n');
    res.end();
  };

  /**
   * Ollama's native POST /api/generate (routes.go GenerateHandler): with raw: true the prompt is used as it is
   * (`if !req.Raw { …template… }`); a thinking model's think block comes back in `thinking` (thinkingState),
   * the rest in `response`; NDJSON GenerateResponse lines, the last with done, done_reason ("length" when
   * num_predict is reached: llama_server.go stop_type "limit") and the counts. The context shifts as on /v1.
   */
  const handleOllamaGenerate = async (res: ServerResponse, body: Record<string, unknown>): Promise<void> => {
    const model = body.model as string;
    if (!serves(model)) {
      json(res, 404, { error: `model '${model}' not found` });
      return;
    }
    const prompt = String(body.prompt ?? '');
    const opts = (body.options ?? {}) as Record<string, unknown>;
    const seed = typeof opts.seed === 'number' ? opts.seed : undefined;
    const size = o.chunkChars ?? 4;
    const numPredict = typeof opts.num_predict === 'number' ? opts.num_predict : Infinity;
    let text = o.answer(
      body.raw === true ? [{ role: 'raw', content: prompt }] : [{ role: 'user', content: prompt }],
      0,
      seed,
    );
    for (const s of (opts.stop as string[] | undefined) ?? []) {
      const at = text.indexOf(s);
      if (at >= 0) text = text.slice(0, at);
    }
    let pieces = chunksOf(text, size);
    let doneReason = 'stop';
    if (pieces.length > numPredict) {
      pieces = pieces.slice(0, numPredict);
      doneReason = 'length';
    }
    const joined = pieces.join('');
    const open = joined.indexOf('<think>');
    const close = joined.indexOf('</think>');
    const parts: Array<{ thinking?: string; response?: string }> =
      open < 0
        ? chunksOf(joined, size).map((r) => ({ response: r }))
        : [
            ...chunksOf(close < 0 ? joined.slice(open + 7) : joined.slice(open + 7, close), size).map((t) => ({
              thinking: t,
            })),
            ...chunksOf(close < 0 ? '' : joined.slice(close + 8), size).map((r) => ({ response: r })),
          ];
    res.writeHead(200, { 'content-type': 'application/x-ndjson' });
    const line = (v: unknown): void => {
      res.write(JSON.stringify(v) + '\n');
    };
    const at = () => new Date().toISOString();
    for (const p of parts) {
      line({
        model,
        created_at: at(),
        response: p.response ?? '',
        ...(p.thinking ? { thinking: p.thinking } : {}),
        done: false,
      });
      if (o.chunkDelayMs) await new Promise((r) => setTimeout(r, o.chunkDelayMs));
    }
    line({
      model,
      created_at: at(),
      response: '',
      done: true,
      done_reason: doneReason,
      prompt_eval_count: tokensOf(prompt),
      eval_count: pieces.length,
    });
    res.end();
  };

  /** Deltas for one choice: plain content, or the think block moved into the reasoning field. */
  const toDeltas = (text: string, size: number): Array<Record<string, string>> => {
    if (!o.reasoningField) return chunksOf(text, size).map((content) => ({ content }));
    const open = text.indexOf('<think>');
    const close = text.indexOf('</think>');
    if (open < 0) return chunksOf(text, size).map((content) => ({ content }));
    let reasoning = close < 0 ? text.slice(open + 7) : text.slice(open + 7, close);
    let content = close < 0 ? '' : text.slice(close + 8);
    if (o.trimReasoning) {
      reasoning = reasoning.trim();
      content = content.replace(/^\n+/, '');
    }
    // vLLM's DeltaMessage copies `reasoning` into the deprecated `reasoning_content` (model_validator).
    const reasoningDelta = (r: string): Record<string, string> =>
      kind === 'vllm' ? { reasoning: r, reasoning_content: r } : { [o.reasoningField!]: r };
    return [...chunksOf(reasoning, size).map(reasoningDelta), ...chunksOf(content, size).map((c) => ({ content: c }))];
  };
  const mergeDeltas = (deltas: Array<Record<string, string>>): Record<string, string> => {
    const merged: Record<string, string> = {};
    for (const d of deltas) for (const [k, v] of Object.entries(d)) merged[k] = (merged[k] ?? '') + v;
    merged.content ??= '';
    return merged;
  };

  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => {
      raw += c;
    });
    req.on('end', () => {
      const path = (req.url ?? '').split('?')[0];
      let body: Record<string, unknown> = {};
      try {
        body = raw ? JSON.parse(raw) : {};
      } catch {
        json(res, 400, { error: 'bad json' });
        return;
      }
      state.requests.push({ path, body, headers: req.headers });
      if (o.apiKey && req.headers.authorization !== `Bearer ${o.apiKey}`) {
        json(res, 401, { error: { message: 'Invalid API key' } });
        return;
      }
      if (req.method === 'GET' && path === '/v1/models') {
        json(res, 200, { object: 'list', data: o.hideModelList ? [] : models.map((m) => ({ object: 'model', ...m })) });
        return;
      }
      if (req.method === 'POST' && path === '/v1/chat/completions') {
        void handleChat(req, res, body, 'chat');
        return;
      }
      if (req.method === 'POST' && path === '/v1/completions' && kind !== 'ollama') {
        void handleChat(req, res, body, 'completions');
        return;
      }
      if (kind === 'ollama' && req.method === 'POST' && path === '/api/generate') {
        void handleOllamaGenerate(res, body);
        return;
      }
      if (kind === 'ollama' && req.method === 'GET' && path === '/api/version') {
        json(res, 200, { version: '0.0.0-standin' }); // routes.go: gin.H{"version": version.Version}
        return;
      }
      if (kind === 'ollama' && req.method === 'GET' && path === '/api/ps') {
        // routes.go PsHandler / api/types.go ProcessModelResponse: the loaded models, context_length included.
        json(res, 200, {
          models: models.map((m) => ({
            name: m.id,
            model: m.id,
            size: 0,
            digest: 'standin',
            details: {},
            expires_at: new Date(Date.now() + 300_000).toISOString(),
            size_vram: 0,
            context_length: o.numCtx ?? 4096,
          })),
        });
        return;
      }
      if (req.method === 'POST' && path === '/tokenize' && o.tokenize === 'vllm') {
        if (o.tokenizeIds) {
          // vLLM serve_tokenize with messages: the chat template's rendering, tokenized (add_generation_prompt).
          const ids = o.tokenizeIds(render(body.messages as Messages));
          json(res, 200, { count: ids.length, max_model_len: 32768, tokens: ids });
          return;
        }
        const messages = body.messages as Array<{ content: string }>;
        // Stand-in tokenization: as a named vLLM, the same "tokens" its chat route counts (and refuses by);
        // otherwise one token per word plus 4 per message and 3 for the generation prompt.
        const count =
          kind === 'vllm'
            ? tokensOf(render(body.messages as Messages))
            : messages.reduce((s, m) => s + m.content.split(/\s+/).filter(Boolean).length + 4, 3);
        json(res, 200, { count, max_model_len: 32768, tokens: Array.from({ length: count }, (_, i) => i) });
        return;
      }
      if (req.method === 'POST' && path === '/apply-template' && o.tokenize === 'llamacpp') {
        // llama.cpp: the apply-template handler answers {"prompt": …} of oaicompat_chat_params_parse.
        const messages = body.messages as Messages;
        json(res, 200, {
          prompt: kind ? render(messages) : messages.map((m) => `<${m.role}>${m.content}`).join('') + '<assistant>',
        });
        return;
      }
      if (req.method === 'POST' && path === '/tokenize' && o.tokenize === 'llamacpp') {
        // Like llama.cpp: no `content` means no tokens (it does not read `messages`).
        json(res, 200, {
          tokens: typeof body.content === 'string' ? [...body.content].map((c) => c.codePointAt(0)) : [],
        });
        return;
      }
      json(res, 404, { error: { message: `no route ${req.method} ${path}` } });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    get requests() {
      return state.requests;
    },
    get abortedStreams() {
      return state.abortedStreams;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
