// Turns transport and HTTP failures of an OpenAI-compatible server into messages that say what to do.
import { isAxiosError } from 'axios';
import type { Readable } from 'node:stream';

const START_SERVER_HINT =
  'start one, e.g. `vllm serve AI-MO/Kimina-Prover-RL-0.6B --port 8000` ' +
  '(or llama.cpp `llama-server`, `ollama serve`), or point KIMINA_OPENAI_BASE_URL at a running server';

/** Reads an error body that may still be a stream (streaming requests) into text. */
export async function bodyText(data: unknown): Promise<string> {
  if (data === undefined || data === null) return '';
  if (typeof data === 'string') return data;
  if (typeof (data as Readable).on === 'function' && typeof (data as Readable)[Symbol.asyncIterator] === 'function') {
    let text = '';
    try {
      for await (const chunk of data as Readable)
        text += typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
    } catch {
      /* a broken body still leaves the status to report */
    }
    return text;
  }
  return JSON.stringify(data);
}

/** The server's own error text from an OpenAI-style body ({error: {message}} or {error: "…"} or {detail}). */
export function serverMessage(body: string): string {
  try {
    const j = JSON.parse(body) as Record<string, unknown>;
    const e = j.error;
    if (typeof e === 'string') return e;
    if (e && typeof e === 'object' && typeof (e as Record<string, unknown>).message === 'string')
      return (e as Record<string, string>).message;
    if (typeof j.message === 'string') return j.message;
    if (typeof j.detail === 'string') return j.detail;
  } catch {
    /* not JSON */
  }
  return body.trim().slice(0, 500);
}

/** What the server itself did wrong mid-answer (an error event, an unreadable or cut-off stream): said as it is. */
export class AnswerError extends Error {}

export interface ErrorContext {
  url: string;
  model: string;
  /**
   * For a 404 from a generation route: whether the server's own model list (GET /models) names the model; undefined
   * when it lists none. This, not the error's wording, tells a missing model from a missing route.
   */
  modelListed?: boolean;
  /** Whether the request carried an API key (KIMINA_OPENAI_API_KEY), for a 401 or 403. */
  apiKeySent?: boolean;
}

/** Builds a readable Error for a failed request; HTTP statuses get server text and a hint (`body`: already read). */
export async function describeRequestError(err: unknown, ctx: ErrorContext, body?: string): Promise<Error> {
  if (!isAxiosError(err)) return err instanceof Error ? err : new Error(String(err));
  const code = err.code ?? (err.cause as NodeJS.ErrnoException | undefined)?.code;
  if (!err.response) {
    if (code === 'ECONNREFUSED')
      return new Error(`cannot reach the model server at ${ctx.url} (connection refused): ${START_SERVER_HINT}`);
    if (code === 'ENOTFOUND' || code === 'EAI_AGAIN')
      return new Error(`cannot resolve the model server's host in ${ctx.url} (${code}); check KIMINA_OPENAI_BASE_URL`);
    if (code === 'ECONNABORTED' || code === 'ETIMEDOUT')
      return new Error(`the model server at ${ctx.url} timed out (${code})`);
    if (code === 'ECONNRESET') return new Error(`the model server at ${ctx.url} closed the connection (ECONNRESET)`);
    return new Error(`request to the model server at ${ctx.url} failed: ${err.message}`);
  }
  const status = err.response.status;
  const text = serverMessage(body ?? (await bodyText(err.response.data)));
  // The servers' own refusals: vLLM and SGLang {"error": "Unauthorized"}, llama.cpp {"error": {"message":
  // "Invalid API Key", …}}; Ollama checks no key.
  if (status === 401 || status === 403)
    return new Error(
      `the model server at ${ctx.url} refused the request (HTTP ${status}: ${text}): ` +
        (ctx.apiKeySent === false
          ? 'it wants an API key and none was sent; set KIMINA_OPENAI_API_KEY to the key the server was started with (--api-key)'
          : ctx.apiKeySent
            ? 'it refused the API key in KIMINA_OPENAI_API_KEY; set it to the key the server was started with (--api-key)'
            : 'set KIMINA_OPENAI_API_KEY to the key the server was started with (--api-key)'),
    );
  if (status === 404) {
    if (ctx.url.endsWith('/models'))
      return new Error(
        `${ctx.url} answered 404 Not Found: is KIMINA_OPENAI_BASE_URL the server's OpenAI API root (usually ending in /v1)?`,
      );
    if (ctx.modelListed === false)
      return new Error(
        `the model server at ${ctx.url} has no model '${ctx.model}' (HTTP 404: ${text}); set KIMINA_MODEL to a model it serves`,
      );
    if (ctx.modelListed === true)
      return new Error(
        `the model server lists '${ctx.model}' but has no route ${ctx.url} (HTTP 404: ${text}); is KIMINA_OPENAI_BASE_URL its OpenAI API root?`,
      );
    return new Error(
      `the model server at ${ctx.url} has no model '${ctx.model}' or no such route (HTTP 404: ${text}; it lists no models to tell which); ` +
        'set KIMINA_MODEL to a model it serves and KIMINA_OPENAI_BASE_URL to its OpenAI API root',
    );
  }
  // A llama.cpp router refuses a model it does not know with HTTP 400 "model not found": the list tells.
  if (status === 400 && ctx.modelListed === false)
    return new Error(
      `the model server at ${ctx.url} has no model '${ctx.model}' (HTTP 400: ${text}); set KIMINA_MODEL to a model it serves`,
    );
  return new Error(
    `the model server at ${ctx.url} answered HTTP ${status}${ctx.model ? ` for model '${ctx.model}'` : ''}: ${text || err.message}`,
  );
}
