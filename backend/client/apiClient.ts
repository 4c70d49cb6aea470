// The one typed HTTP client of `kimina serve`, driven by the route table (backend/protocol/routes.ts): the CLI,
// the editor's attach-to-serve service, the language server's training relay, bench and tests call routes by name
// and get the declared types back. Over axios, the backend's one HTTP library (as the hub, the OpenAI-compatible
// engine and the dataset fetchers use); a room of its own so that the protocol room stays free of imports (the
// extension and the webviews import it).
//   const api = new ApiClient({ url, token });
//   const run = await api.call('trainingPause', { params: { id } });
//   for await (const e of api.stream('prove', { body: { code } })) …
import axios, { type AxiosResponse } from 'axios';
import type { Readable } from 'node:stream';
import {
  errorKindOf,
  readSse,
  routePath,
  routes,
  type ErrorKind,
  type RouteBody,
  type RouteEvent,
  type RouteName,
  type RouteParams,
  type RouteQuery,
  type RouteResponse,
  type StreamingRoute,
} from '../protocol';

type Lazy<T> = T | (() => T);
const resolve = <T>(v: Lazy<T>): T => (typeof v === 'function' ? (v as () => T)() : v);

export interface ApiClientOptions {
  /** The server's root, e.g. http://127.0.0.1:8000 (read on every call, so it may change). */
  url: Lazy<string | undefined>;
  /** The API token (`Authorization: Bearer`), when the server wants one: `kimina serve` writes it to <KIMINA_HOME>/serve.json. */
  token?: Lazy<string | undefined>;
}

type NoParams<N extends RouteName> = keyof RouteParams<N> extends never ? true : false;
export type CallInput<N extends RouteName> = (NoParams<N> extends true
  ? { params?: undefined }
  : { params: RouteParams<N> }) &
  (RouteBody<N> extends undefined ? { body?: undefined } : { body: RouteBody<N> }) & {
    query?: RouteQuery<N> extends undefined ? undefined : RouteQuery<N>;
    signal?: AbortSignal;
    headers?: Record<string, string>;
  };
export type CallArgs<N extends RouteName> =
  Record<string, never> extends CallInput<N> ? [input?: CallInput<N>] : [input: CallInput<N>];

/** The server answered with an error status; `detail` is its `detail` (or `error`) field. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly route: RouteName,
    /** What the server said is missing (its answer's `kind`, protocol/errors.ts), for the caller's remedy. */
    readonly kind?: ErrorKind,
  ) {
    super(typeof detail === 'string' ? detail : JSON.stringify(detail));
  }
}

/** No answer at all: nothing listens at the URL, or there is no URL. */
export class BackendUnreachable extends Error {
  override readonly name = 'BackendUnreachable';
  /** Why the connection failed (the network error's own words), without where. */
  readonly reason: string;
  constructor(
    readonly url: string | undefined,
    cause?: unknown,
  ) {
    const reason =
      cause instanceof Error ? (cause.cause instanceof Error ? cause.cause.message : cause.message) : String(cause);
    super(url ? `cannot reach the Kimina backend at ${url}: ${reason}` : 'the Kimina backend is not running');
    this.reason = url ? reason : 'not running';
  }
}

export interface RawAnswer {
  status: number;
  headers: Headers;
  body: unknown;
}

/** The answer's headers as the Fetch API's Headers (what RawAnswer has always carried). */
function headersOf(res: AxiosResponse): Headers {
  const out = new Headers();
  for (const [k, v] of Object.entries(res.headers ?? {})) {
    if (v === undefined || v === null) continue;
    if (Array.isArray(v)) for (const item of v) out.append(k, String(item));
    else out.set(k, String(v));
  }
  return out;
}

async function textOf(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk)));
  return Buffer.concat(chunks).toString('utf8');
}

function errorDetail(body: unknown): unknown {
  if (body && typeof body === 'object') {
    const b = body as { detail?: unknown; error?: unknown };
    if (b.detail !== undefined) return b.detail;
    if (b.error !== undefined) return b.error;
  }
  return body;
}

export class ApiClient {
  constructor(private readonly options: ApiClientOptions) {}

  /** The server's root as configured now (no trailing slash), or undefined. */
  url(): string | undefined {
    return resolve(this.options.url)?.replace(/\/+$/, '');
  }

  private async send(
    name: RouteName,
    input: Partial<CallInput<RouteName>> = {},
    accept = 'application/json',
  ): Promise<AxiosResponse> {
    const route = routes[name];
    const base = this.url();
    if (!base) throw new BackendUnreachable(undefined);
    const token = this.options.token === undefined ? undefined : resolve(this.options.token);
    let target = base + routePath(route.path, (input.params ?? {}) as Record<string, string>);
    if (input.query) {
      const q = new URLSearchParams();
      for (const [k, v] of Object.entries(input.query as Record<string, unknown>))
        if (v !== undefined) q.set(k, String(v));
      if ([...q].length) target += `?${q.toString()}`;
    }
    const headers: Record<string, string> = {
      accept,
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...input.headers,
    };
    if (route.method === 'POST') headers['content-type'] = 'application/json';
    try {
      return await axios.request({
        url: target,
        method: route.method,
        headers,
        signal: input.signal,
        data: route.method === 'POST' && input.body !== undefined ? JSON.stringify(input.body) : undefined,
        // the answer as it came: text (parsed here), or the byte stream of server-sent events
        responseType: accept === 'text/event-stream' ? 'stream' : 'text',
        transformResponse: [(data: unknown) => data],
        validateStatus: () => true,
        // the backend is local or named: no proxy from the environment, no size limits of axios's own
        proxy: false,
        maxBodyLength: Infinity,
        maxContentLength: Infinity,
      });
    } catch (err) {
      if (input.signal?.aborted) throw err;
      throw new BackendUnreachable(base, err);
    }
  }

  /** Calls a route and gives back status, headers and the parsed body, whatever the status (tests use this). */
  async request<N extends RouteName>(name: N, ...[input]: CallArgs<N>): Promise<RawAnswer> {
    const res = await this.send(name, input as Partial<CallInput<RouteName>>);
    const text = typeof res.data === 'string' ? res.data : String(res.data ?? '');
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      /* not JSON: the text */
    }
    return { status: res.status, headers: headersOf(res), body };
  }

  /** Calls a route; throws ApiError unless it answers 2xx. */
  async call<N extends RouteName>(name: N, ...[input]: CallArgs<N>): Promise<RouteResponse<N>> {
    const answer = await this.request(name, ...([input] as CallArgs<N>));
    if (answer.status < 200 || answer.status >= 300)
      throw new ApiError(answer.status, errorDetail(answer.body), name, errorKindOf(answer.body));
    return answer.body as RouteResponse<N>;
  }

  /** Opens a streaming route: resolves once the server has answered (throws ApiError if it refused), with its events. */
  async openStream<N extends StreamingRoute>(name: N, ...[input]: CallArgs<N>): Promise<AsyncGenerator<RouteEvent<N>>> {
    const res = await this.send(name, input as Partial<CallInput<RouteName>>, 'text/event-stream');
    const stream = res.data as Readable;
    if (res.status < 200 || res.status >= 300) {
      const text = await textOf(stream).catch(() => '');
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* text */
      }
      throw new ApiError(res.status, errorDetail(body), name, errorKindOf(body));
    }
    return (async function* events() {
      for await (const message of readSse(stream)) yield message.data as RouteEvent<N>;
    })();
  }

  /** Follows a streaming route's server-sent events until the stream ends (or `signal` aborts). */
  async *stream<N extends StreamingRoute>(name: N, ...[input]: CallArgs<N>): AsyncGenerator<RouteEvent<N>> {
    yield* await this.openStream(name, ...([input] as CallArgs<N>));
  }
}
