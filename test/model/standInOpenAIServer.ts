// TEST DOUBLE: a stand-in OpenAI-compatible chat server (a real HTTP server on 127.0.0.1) that plays
// the parts of vLLM / SGLang / llama.cpp / Ollama the OpenAI engine depends on: /v1/models, streaming
// /v1/chat/completions and /v1/completions with n, stop, max_tokens, a reasoning field, usage, and the
// tokenize / render endpoints. Its "model" answers with scripted text; nothing here is a language model.
// Its "tokens" are chunks of `chunkChars` characters, for the answer and for the rendered prompt alike.
//
// With `server` set, it answers as that server's source says (each answer below notes where it was read):
//   llama.cpp  ggml-org/llama.cpp tools/server, two builds. Before PR #17775 (Dec 2025; `slots` unset): n != 1
//              refused. Since (`slots` set, -np): n honoured up to the slot count, more refused; server-task.cpp
//              params_from_json_cmpl (`n_cmpl > params_base.n_parallel` throws "n_cmpl cannot be greater than the
//              number of slots, please increase -np"), server-context.cpp handle_completions_impl (a throw while
//              building the tasks is answered as ERROR_TYPE_INVALID_REQUEST: HTTP 400), server-context.cpp
//              get_props (`total_slots`: params_base.n_parallel). Older: server-common.cpp aa6192d (oaicompat_chat_params_parse,
//              format_error_response), server-task.cpp 17f5f8a (to_json_oaicompat_chat_stream, to_json_oaicompat),
//              src/llama-chat.cpp llm_chat_apply_template (the built-in chatml template); aa6192d server-http.cpp
//              (middleware_validate_api_key, the 404 error handler), server.cpp (get_models, post_tokenize,
//              post_apply_template, post_chat_completions); 4010338 server-models.cpp (router_validate_model)
//   Ollama     ollama/ollama fb30760: openai/openai.go (NewError, ToListCompletion), middleware/openai.go ChatWriter
//              (writeError), server/routes.go (GenerateRoutes, ChatHandler, GenerateHandler, PsHandler,
//              /api/version), api/types.go, types/model/name.go DisplayShortest, template/chatml.gotmpl,
//              llm/llama_server.go
//   vLLM       vllm-project/vllm d7e5252 vllm/entrypoints/openai/engine/protocol.py (DeltaMessage, ModelCard,
//              UsageInfo, StreamOptions); chat_completion/serving.py chat_completion_stream_generator (usage chunk);
//              00bd149 engine/serving.py OpenAIServing._validate_input, create_error_response (the context
//              refusal), _check_model (the unknown model); c0bc596 chat_completion/api_router.py; 029329a
//              server_utils.py AuthenticationMiddleware
//   SGLang     sgl-project/sglang 9b116df python/sglang/srt/entrypoints/openai/protocol.py (ModelCard
//              max_model_len, DeltaMessage reasoning_content, UsageInfo, n, top_k, ErrorResponse); 002897c
//              serving_chat.py _generate_chat_stream (finish chunks, then the usage chunk with choices [] when
//              include_usage); c5695a4 serving_base.py handle_request and 0c078e6 serving_chat.py (no model check);
//              a343daa python/sglang/srt/utils/auth.py add_api_key_middleware; /tokenize: 0351c1f
//              serving_tokenize.py OpenAIServingTokenize (answer {tokens, count, max_model_len}; that version reads
//              only `prompt`), and taking `messages` rendered with the chat template as SGLang 0.5.23 does (from
//              the 2026-12-06 audit of that release, issue 30; its source is not in this snapshot)
// Without `server` it is a generic stand-in that answers errors as vLLM does.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

type ServerKind = 'llama.cpp' | 'ollama' | 'vllm' | 'sglang';

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

interface StandInRequest {
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
  /**
   * The tokenize route: vLLM's and SGLang 0.5.23's take messages; 'sglang-prompt' is an SGLang that takes only
   * `prompt` there (0351c1f) and refuses messages.
   */
  tokenize?: 'vllm' | 'llamacpp' | 'sglang' | 'sglang-prompt' | 'none';
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
  /**
   * llama.cpp only: llama-server in router mode (started with --models-dir or --models-preset, no -m), which
   * routes each request by its `model` and refuses a model it does not know; a single-model llama-server takes
   * any name.
   */
  router?: boolean;
  /** Send usage in the last chunk. */
  usage?: boolean;
  /**
   * llama.cpp only: the build since PR #17775 started with this many slots (-np): n up to it is honoured, more is
   * refused with HTTP 400. Unset: the build before, which refuses any n != 1 with HTTP 500. Both answer /props.
   */
  slots?: number;
  /**
   * llama.cpp only: `total_slots` in GET /props (default `slots`, else 4: -np defaults to -1, auto, which builds
   * since PR #16736 (Oct 2025, "use 4 slots + unified KV by default") resolve to 4).
   */
  propsSlots?: number;
}

export interface StandInServer {
  /** The OpenAI API root, ending in /v1. */
  baseUrl: string;
  requests: StandInRequest[];
  /** Streams the client closed before they were finished. */
  abortedStreams: number;
  /**
   * The model goes away after a client connected (`ollama rm`, vLLM's /v1/unload_lora_adapter, a llama.cpp
   * router's models folder changing): the listing drops it and the generation routes answer as for a model the
   * server does not know.
   */
  removeModel(id: string): void;
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
    // SGLang: n honoured; DeltaMessage.reasoning_content; usage chunk; /tokenize with messages (0.5.23).
    ...(kind === 'sglang'
      ? { reasoningField: 'reasoning_content' as const, usage: true, tokenize: 'sglang' as const }
      : {}),
    ...options,
  };
  const render = o.serverTemplate ?? chatmlRender;
  // The served names. vLLM and SGLang list --served-model-name (default: the model path) with its max_model_len;
  // llama.cpp lists its alias (-a) or model path and no context length (server.cpp get_models: its `meta` has
  // n_ctx_train, not the context it runs with); Ollama lists name:tag, tag always written (types/model/name.go
  // DisplayShortest), and no context length (openai.go ToListCompletion).
  const defaultModels: Array<{ id: string; max_model_len?: number }> =
    kind === 'ollama'
      ? [{ id: 'AI-MO/Kimina-Prover-RL-0.6B:latest' }]
      : kind === 'llama.cpp'
        ? [{ id: 'AI-MO/Kimina-Prover-RL-0.6B' }]
        : [{ id: 'AI-MO/Kimina-Prover-RL-0.6B', max_model_len: 32768 }];
  const models = [...(o.models ?? defaultModels)];
  // Which request `model` each server generates for. vLLM: a listed name (engine/serving.py _check_model). Ollama:
  // a model it has, a missing tag read as "latest" (types/model/name.go defaultTag). SGLang: any name, the served
  // model answers (serving_base.py handle_request has no model check; serving_chat.py reads `model` only for a
  // `base:adapter` LoRA). llama.cpp: any name from a single-model server (post_chat_completions never reads
  // `model` but to echo it); a router only its own (server-models.cpp router_validate_model).
  const serves = (model: string): boolean =>
    kind === 'sglang' || (kind === 'llama.cpp' && !o.router)
      ? true
      : models.some((m) => m.id === model || (kind === 'ollama' && m.id === `${model}:latest`));
  /** What each server answers for a `model` it does not serve. */
  const unknownModel = (res: ServerResponse, model: string): void => {
    if (kind === 'ollama') {
      // routes.go ChatHandler: s.getModel fails with os.IsNotExist -> 404 gin.H{"error": "model '<name>' not found"};
      // the /v1 ChatWriter rewrites a non-200 body (middleware/openai.go writeError) as openai.NewError(404, …):
      // type "not_found_error", param and code null.
      json(res, 404, {
        error: { message: `model '${model}' not found`, type: 'not_found_error', param: null, code: null },
      });
      return;
    }
    if (kind === 'llama.cpp') {
      // server-models.cpp router_validate_model: format_error_response("model not found", ERROR_TYPE_INVALID_REQUEST)
      // -> code 400, type "invalid_request_error", wrapped by res_err in {"error": …}.
      json(res, 400, { error: { code: 400, message: 'model not found', type: 'invalid_request_error' } });
      return;
    }
    // vLLM engine/serving.py _check_model: create_error_response(f"The model `{request.model}` does not exist.",
    // err_type="NotFoundError", status_code=404, param="model"); api_router.py answers ErrorResponse.model_dump()
    // with error.code as the status.
    json(res, 404, {
      error: { message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', param: 'model', code: 404 },
    });
  };
  /**
   * Whether a request passes the server's API key check, and its refusal when not. vLLM: every path under /v1
   * needs `Authorization: Bearer <key>` (server_utils.py AuthenticationMiddleware: 401 {"error": "Unauthorized"}).
   * SGLang: every path but /health* and /metrics* (utils/auth.py decide_request_auth; add_api_key_middleware
   * answers 401 {"error": "Unauthorized"}). llama.cpp: every path but /health, /v1/health, /models, /v1/models,
   * /api/tags and /, with the key as Bearer or X-Api-Key (server-http.cpp middleware_validate_api_key: 401
   * {"error": {"message": "Invalid API Key", "type": "authentication_error", "code": 401}}). Ollama checks no key
   * at all for local models (routes.go GenerateRoutes has no such middleware): `apiKey` is ignored.
   */
  const refusesKey = (req: IncomingMessage, path: string, res: ServerResponse): boolean => {
    if (!o.apiKey || kind === 'ollama') return false;
    const bearer = req.headers.authorization === `Bearer ${o.apiKey}`;
    if (kind === 'llama.cpp') {
      const open = ['/health', '/v1/health', '/models', '/v1/models', '/api/tags', '/'];
      if (open.includes(path) || bearer || req.headers['x-api-key'] === o.apiKey) return false;
      json(res, 401, { error: { message: 'Invalid API Key', type: 'authentication_error', code: 401 } });
      return true;
    }
    if (kind === 'sglang' ? path.startsWith('/health') || path.startsWith('/metrics') : !path.startsWith('/v1'))
      return false;
    if (bearer) return false;
    json(res, 401, { error: 'Unauthorized' });
    return true;
  };
  /** GET /v1/models as each server writes its entries. */
  const modelList = (): unknown => {
    const created = Math.floor(Date.now() / 1000);
    const listed = o.hideModelList ? [] : models;
    if (kind === 'llama.cpp') {
      // server.cpp get_models: an Ollama-style `models` list and the OpenAI `data`; `meta` is the GGUF's
      // (model_meta: vocab_type, n_vocab, n_ctx_train, n_embd, n_params, size; stand-in numbers here).
      // A router lists its models with their status instead (server-models.cpp get_router_models).
      const meta = { vocab_type: 2, n_vocab: 151936, n_ctx_train: 40960, n_embd: 1024, n_params: 0, size: 0 };
      if (o.router)
        return {
          data: listed.map((m) => ({
            id: m.id,
            object: 'model',
            owned_by: 'llamacpp',
            created,
            status: { value: 'loaded', args: [] },
          })),
          object: 'list',
        };
      return {
        models: listed.map((m) => ({ name: m.id, model: m.id, modified_at: '', size: '', digest: '', type: 'model' })),
        object: 'list',
        data: listed.map((m) => ({ id: m.id, object: 'model', created, owned_by: 'llamacpp', meta })),
      };
    }
    if (kind === 'ollama')
      // openai.go ToListCompletion: id, object "model", created (modified_at), owned_by (the name's namespace).
      return {
        object: 'list',
        data: listed.map((m) => ({
          id: m.id,
          object: 'model',
          created,
          owned_by: m.id.includes('/') ? m.id.split('/')[0] : 'library',
        })),
      };
    if (kind === 'sglang')
      // protocol.py ModelCard: id, object, created, owned_by "sglang", root, max_model_len.
      return {
        object: 'list',
        data: listed.map((m) => ({ ...m, object: 'model', created, owned_by: 'sglang', root: m.id })),
      };
    // vLLM engine/protocol.py ModelCard (owned_by "vllm", root, parent, max_model_len, permission).
    return {
      object: 'list',
      data: listed.map((m) => ({
        ...m,
        object: 'model',
        created,
        owned_by: 'vllm',
        root: m.id,
        parent: null,
        permission: [],
      })),
    };
  };
  const state = { requests: [] as StandInRequest[], abortedStreams: 0 };

  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const tokensOf = (text: string): number => chunksOf(text, o.chunkChars ?? 4).length;

  const handleChat = async (
    _req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
    route: 'chat' | 'completions',
  ): Promise<void> => {
    const model = body.model as string;
    if (!serves(model)) return unknownModel(res, model);
    if (kind === 'llama.cpp' && o.slots !== undefined && Number(body.n ?? 1) > o.slots) {
      // Since PR #17775: server-task.cpp params_from_json_cmpl throws std::runtime_error("n_cmpl cannot be greater
      // than the number of slots, please increase -np"); handle_completions_impl catches it while building the
      // tasks and answers format_error_response(e.what(), ERROR_TYPE_INVALID_REQUEST): code 400,
      // type "invalid_request_error".
      json(res, 400, {
        error: {
          code: 400,
          message: 'n_cmpl cannot be greater than the number of slots, please increase -np',
          type: 'invalid_request_error',
        },
      });
      return;
    }
    if (kind === 'llama.cpp' && o.slots === undefined && Number(body.n ?? 1) !== 1) {
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
      // routes.go GenerateHandler: 404 gin.H{"error": "model '<name>' not found"} (no /v1 rewrite on /api).
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
      if (refusesKey(req, path, res)) return;
      if (req.method === 'GET' && path === '/v1/models') {
        json(res, 200, modelList());
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
      if (kind === 'llama.cpp' && req.method === 'GET' && path === '/props') {
        // server-context.cpp get_props: the server's settings, `total_slots` among them (params_base.n_parallel);
        // older builds answer the same field.
        json(res, 200, {
          default_generation_settings: { n_ctx: o.numCtx ?? 4096 },
          total_slots: o.propsSlots ?? o.slots ?? 4,
          model_path: models[0]?.id ?? '',
          chat_template: '',
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
      if (
        req.method === 'POST' &&
        path === '/tokenize' &&
        (o.tokenize === 'sglang' || o.tokenize === 'sglang-prompt')
      ) {
        // SGLang OpenAIServingTokenize: {tokens, count, max_model_len} (max_model_len: the tokenizer's
        // model_max_length). `prompt` is encoded as it is; `messages` (0.5.23) rendered with the chat template and
        // the generation prompt first. An SGLang that reads only `prompt` fails the request's validation: the
        // stand-in answers FastAPI's default for that (422 {"detail": [...]}).
        const messages = Array.isArray(body.messages) ? (body.messages as Messages) : undefined;
        if (messages && o.tokenize === 'sglang-prompt') {
          json(res, 422, { detail: [{ type: 'missing', loc: ['body', 'prompt'], msg: 'Field required' }] });
          return;
        }
        const text = messages ? render(messages) : String(body.prompt ?? '');
        const ids = o.tokenizeIds ? o.tokenizeIds(text) : Array.from({ length: tokensOf(text) }, (_, i) => i);
        json(res, 200, { tokens: ids, count: ids.length, max_model_len: models[0]?.max_model_len ?? 32768 });
        return;
      }
      if (req.method === 'POST' && path === '/apply-template' && o.tokenize === 'llamacpp') {
        // llama.cpp server.cpp aa6192d post_apply_template: {"prompt": …}, the `prompt` oaicompat_chat_params_parse
        // renders with the server's template (chat route, no generation).
        const messages = body.messages as Messages;
        json(res, 200, {
          prompt: kind ? render(messages) : messages.map((m) => `<${m.role}>${m.content}`).join('') + '<assistant>',
        });
        return;
      }
      if (req.method === 'POST' && path === '/tokenize' && o.tokenize === 'llamacpp') {
        // llama.cpp server.cpp aa6192d post_tokenize: {"tokens": [...]} of `content` (add_special false,
        // parse_special true); no `content` means no tokens (it does not read `messages`). The ids here come from
        // a stand-in vocabulary, one token per character.
        json(res, 200, {
          tokens: typeof body.content === 'string' ? [...body.content].map((c) => c.codePointAt(0)) : [],
        });
        return;
      }
      if (kind === 'llama.cpp') {
        // server-http.cpp aa6192d set_error_handler: every unknown route.
        json(res, 404, { error: { message: 'File Not Found', type: 'not_found_error', code: 404 } });
        return;
      }
      if (kind === 'ollama') {
        // gin's default for a route it does not have (gin-gonic/gin gin.go default404Body), text/plain.
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('404 page not found');
        return;
      }
      if (kind === 'vllm' || kind === 'sglang') {
        // FastAPI's default answer to Starlette's 404 for an unknown route (fastapi/exception_handlers.py
        // http_exception_handler: {"detail": exc.detail}).
        json(res, 404, { detail: 'Not Found' });
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
    removeModel(id: string) {
      const at = models.findIndex((m) => m.id === id || m.id === `${id}:latest`);
      if (at >= 0) models.splice(at, 1);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
