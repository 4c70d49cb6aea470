// TEST DOUBLE: a stand-in OpenAI-compatible chat server (a real HTTP server on 127.0.0.1) that plays
// the parts of vLLM / llama.cpp / Ollama the OpenAI engine depends on: /v1/models, streaming
// /v1/chat/completions with n, stop, max_tokens, a reasoning field of either name, and the tokenize
// endpoints. Its "model" answers with scripted text; nothing here is a language model.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface StandInRequest {
  path: string;
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
}

export interface StandInOptions {
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

export async function startStandInOpenAIServer(o: StandInOptions): Promise<StandInServer> {
  const models = o.models ?? [{ id: 'AI-MO/Kimina-Prover-RL-0.6B', max_model_len: 32768 }];
  const state = { requests: [] as StandInRequest[], abortedStreams: 0 };

  const json = (res: ServerResponse, status: number, body: unknown): void => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  const handleChat = async (
    req: IncomingMessage,
    res: ServerResponse,
    body: Record<string, unknown>,
  ): Promise<void> => {
    const model = body.model as string;
    if (!models.some((m) => m.id === model)) {
      json(res, 404, {
        error: { message: `The model \`${model}\` does not exist.`, type: 'NotFoundError', code: 404 },
      });
      return;
    }
    const messages = body.messages as Array<{ role: string; content: string }>;
    const n = o.honorsN === false ? 1 : Number(body.n ?? 1);
    const seed = typeof body.seed === 'number' ? body.seed : undefined;
    const size = o.chunkChars ?? 4;
    const maxTokens = typeof body.max_tokens === 'number' ? body.max_tokens : Infinity;
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
      if (pieces.length > maxTokens) {
        pieces = pieces.slice(0, maxTokens);
        finish = 'length';
      }
      return { deltas: toDeltas(pieces.join(''), size), finish, tokens: pieces.length };
    });
    if (body.stream !== true || o.ignoreStream) {
      json(res, 200, {
        id: 'cmpl-standin',
        object: 'chat.completion',
        model,
        choices: plans.map((p, index) => ({
          index,
          message: { role: 'assistant', ...mergeDeltas(p.deltas) },
          finish_reason: p.finish,
        })),
        usage: { completion_tokens: plans.reduce((s, p) => s + p.tokens, 0) },
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
    send({
      id: 'c',
      object: 'chat.completion.chunk',
      choices: plans.map((_, index) => ({ index, delta: { role: 'assistant', content: '' } })),
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
        send({ id: 'c', object: 'chat.completion.chunk', choices: [{ index, delta, finish_reason: null }] });
        sent++;
      }
      if (o.chunkDelayMs) await new Promise((r) => setTimeout(r, o.chunkDelayMs));
    }
    plans.forEach((p, index) =>
      send({ id: 'c', object: 'chat.completion.chunk', choices: [{ index, delta: {}, finish_reason: p.finish }] }),
    );
    if (o.usage)
      send({
        id: 'c',
        object: 'chat.completion.chunk',
        choices: [],
        usage: { completion_tokens: plans.reduce((s, p) => s + p.tokens, 0) },
      });
    res.write('data: [DONE]\n\n');
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
    return [
      ...chunksOf(reasoning, size).map((r) => ({ [o.reasoningField!]: r })),
      ...chunksOf(content, size).map((c) => ({ content: c })),
    ];
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
        void handleChat(req, res, body);
        return;
      }
      if (req.method === 'POST' && path === '/tokenize' && o.tokenize === 'vllm') {
        const messages = body.messages as Array<{ content: string }>;
        // Stand-in tokenization: one token per word plus 4 per message and 3 for the generation prompt.
        const count = messages.reduce((s, m) => s + m.content.split(/\s+/).filter(Boolean).length + 4, 3);
        json(res, 200, { count, max_model_len: 32768, tokens: Array.from({ length: count }, (_, i) => i) });
        return;
      }
      if (req.method === 'POST' && path === '/apply-template' && o.tokenize === 'llamacpp') {
        const messages = body.messages as Array<{ role: string; content: string }>;
        json(res, 200, { prompt: messages.map((m) => `<${m.role}>${m.content}`).join('') + '<assistant>' });
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
