// What the model server's own chat template makes of a conversation, for comparing with the checkpoint's
// template (the prompt the model was trained on). Each server is recognised by what it answers, never by name:
// - llama.cpp's server: `POST /apply-template {messages}` renders without generating and answers `{prompt}`
//   (ggml-org/llama.cpp tools/server: the apply-template handler runs oaicompat_chat_params_parse, the same
//   rendering /v1/chat/completions uses, and answers only its "prompt").
// - vLLM, and SGLang since it takes messages there (0.5.23): `POST /tokenize {model, messages,
//   add_generation_prompt}` answers the rendered prompt's token ids (`tokens`, with `count` and
//   `max_model_len`), compared with the local tokenizer's ids for our rendering. The two answer alike; which one
//   it is comes from the server's own model listing (`owned_by` "sglang" in SGLang's ModelCard, "vllm" in vLLM's).
//   An SGLang that takes only `prompt` there refuses `messages` (HTTP 400), so nothing is compared.
// - Ollama (answers `GET /api/version` with `{version}`): `POST /v1/chat/completions` with
//   `_debug_render_only: true` answers the rendered template in `_debug_info.rendered_template` without
//   generating (ollama/ollama fb30760: openai/openai.go ChatCompletionRequest.DebugRenderOnly,
//   server/routes.go ChatHandler `if req.DebugRenderOnly`, api/types.go DebugInfo).
// Nothing is asked that would generate on a server that does not know the request (Ollama's render-only flag is
// sent only to a server that answered /api/version, and with max_tokens 1 besides).
import type { AxiosInstance } from 'axios';
import type { ChatMessage } from '../../protocol';

export type Renderer = 'llama.cpp' | 'vllm' | 'sglang' | 'ollama';

/** The server's name as messages say it. */
export const RENDERER_NAME: Record<Renderer, string> = {
  'llama.cpp': 'llama.cpp',
  vllm: 'vLLM',
  sglang: 'SGLang',
  ollama: 'Ollama',
};

export interface ServerRendering {
  renderer: Renderer;
  /** The rendered text (llama.cpp, Ollama). */
  prompt?: string;
  /** The rendered prompt's token ids (vLLM, SGLang). */
  tokens?: number[];
}

export interface RenderTarget {
  http: AxiosInstance;
  /** The OpenAI API root (…/v1). */
  baseUrl: string;
  /** The server root (without /v1). */
  rootUrl: string;
  model: string;
  /** Which server answers `/tokenize` with messages: SGLang when its model listing says owned_by "sglang". */
  tokenizeServer?: 'vllm' | 'sglang';
}

const quiet = { validateStatus: () => true, timeout: 15_000 } as const;

/** Asks the server how it renders `conversation`; undefined when it offers no way to see that. */
export async function renderOnServer(
  t: RenderTarget,
  conversation: ChatMessage[],
): Promise<ServerRendering | undefined> {
  const messages = conversation.map((m) => ({ role: m.role, content: m.content }));
  const llama = await t.http.post(`${t.rootUrl}/apply-template`, { messages }, quiet).catch(() => undefined);
  if (llama?.status === 200 && typeof llama.data?.prompt === 'string')
    return { renderer: 'llama.cpp', prompt: llama.data.prompt };
  const tokenized = await t.http
    .post(`${t.rootUrl}/tokenize`, { model: t.model, messages, add_generation_prompt: true }, quiet)
    .catch(() => undefined);
  // llama.cpp's /tokenize ignores `messages` (no tokens); vLLM and SGLang answer the ids with their count.
  if (
    tokenized?.status === 200 &&
    Array.isArray(tokenized.data?.tokens) &&
    tokenized.data.tokens.length > 0 &&
    typeof tokenized.data.count === 'number'
  )
    return { renderer: t.tokenizeServer ?? 'vllm', tokens: tokenized.data.tokens as number[] };
  const version = await t.http.get(`${t.rootUrl}/api/version`, quiet).catch(() => undefined);
  if (version?.status === 200 && typeof version.data?.version === 'string') {
    const r = await t.http
      .post(
        `${t.baseUrl}/chat/completions`,
        { model: t.model, messages, stream: false, max_tokens: 1, _debug_render_only: true },
        quiet,
      )
      .catch(() => undefined);
    const rendered = r?.data?._debug_info?.rendered_template;
    if (r?.status === 200 && typeof rendered === 'string') return { renderer: 'ollama', prompt: rendered };
  }
  return undefined;
}

/** Where two strings first differ (the shorter one's length when one is a prefix of the other). */
function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}

/** A short, one-line view of both texts around their first difference. */
export function showDifference(ours: string, theirs: string): string {
  const at = firstDifference(ours, theirs);
  const around = (s: string): string => JSON.stringify(s.slice(Math.max(0, at - 30), at + 50));
  return `first difference at character ${at}: checkpoint ${around(ours)}, server ${around(theirs)}`;
}
