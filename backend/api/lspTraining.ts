// The language-server face's training requests (kimina/training/*): relayed to the attached `kimina serve`
// with the contract's one typed client, and its /v1/training/events followed (reconnecting) while the
// client asks for them, each event forwarded as a `kimina/training/event` notification. Training lives in
// the server so that a run outlives the editor window; with none attached, each request says how to get one.
import { type Connection, LSPErrorCodes, ResponseError } from 'vscode-languageserver/node';
import {
  type LspErrorData,
  lspRequests,
  routes,
  type LspRequestName,
  type LspRequestSpec,
  type RouteName,
  type RouteSpec,
  type SchemaNode,
  type TrainingConnection,
} from '../protocol';
import { ApiClient, ApiError } from '../client/apiClient';
import { notifier, serveLspRequests, type LspHandler, type LspHandlers } from './lspContract';

/** Where the attached server is: url and API token. */
interface AttachedServer {
  url: string;
  token?: string;
}

export interface TrainingRequestOptions {
  connection: Connection;
  /** The attached server, or null when proofs run in this process (or the services did not start). */
  server: () => Promise<AttachedServer | null>;
  log: (line: string) => void;
}

/** How to get a server to train in (the connection line's message when none is attached). */
const howToAttach =
  'training runs in `kimina serve`, which keeps training when the editor closes: start one in a terminal with ' +
  '`kimina serve` (or set kimina.serverUrl to one), then run "Kimina: Restart Backend"';
const noServerMessage = `no Kimina server is attached: ${howToAttach}`;

const RETRY_MS = 1000;
const MAX_RETRY_MS = 15_000;
const NO_SERVER_POLL_MS = 2000;

/**
 * The HTTP call a relayed request makes, derived from its route (routes.ts): the route's path parameters, its
 * query's fields and its body's fields are taken from the request's parameters by name.
 */
export function relayCall(route: RouteName, params: Record<string, unknown>) {
  const spec: RouteSpec = routes[route];
  const pick = (schema: SchemaNode | undefined) => {
    if (schema?.kind !== 'object') return undefined;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(schema.fields)) if (params[key] !== undefined) out[key] = params[key];
    return out;
  };
  const pathParams: Record<string, string> = {};
  for (const [, key] of spec.path.matchAll(/:([A-Za-z]+)/g)) pathParams[key] = String(params[key]);
  return { params: pathParams, query: pick(spec.query), body: pick(spec.body) };
}

export function registerTrainingRequests({ connection, server, log }: TrainingRequestOptions): { close(): void } {
  const clientFor = (s: AttachedServer) => new ApiClient({ url: s.url, token: s.token });

  const relays: LspHandlers = {};
  for (const name of Object.keys(lspRequests) as LspRequestName[]) {
    const spec: LspRequestSpec = lspRequests[name];
    const route = spec.relay;
    if (!route) continue;
    (relays as Record<string, LspHandler<LspRequestName>>)[name] = async (params, cancel) => {
      const attached = await server();
      if (!attached) throw new ResponseError(LSPErrorCodes.RequestFailed, noServerMessage);
      const controller = new AbortController();
      cancel.onCancellationRequested(() => controller.abort());
      try {
        const call = relayCall(route, params as Record<string, unknown>);
        return (await clientFor(attached).call(route, { ...call, signal: controller.signal } as never)) as never;
      } catch (err) {
        if (err instanceof ResponseError) throw err;
        const message = err instanceof Error ? err.message : String(err);
        log(`${spec.method}: ${message}`);
        throw new ResponseError<LspErrorData | undefined>(
          LSPErrorCodes.RequestFailed,
          message,
          err instanceof ApiError ? { status: err.status, ...(err.kind ? { kind: err.kind } : {}) } : undefined,
        );
      }
    };
  }
  const follower = followTrainingEvents({ connection, server, log });
  serveLspRequests(connection, {
    ...relays,
    trainingFollow: async (params): Promise<TrainingConnection> => {
      if (params.follow === false) {
        follower.stop();
        return follower.connection();
      }
      return follower.start();
    },
  });
  return { close: () => follower.stop() };
}
/**
 * Follows GET /v1/training/events of the attached server while started: each event becomes a notification;
 * when the stream ends or fails it reconnects (1 s, doubling to 15 s); with no server it looks again every 2 s.
 */
function followTrainingEvents({ connection, server, log }: TrainingRequestOptions) {
  const notify = notifier(connection);
  let state: TrainingConnection = { status: 'connecting' };
  let running = false;
  let generation = 0;
  let controller: AbortController | null = null;
  let wake: (() => void) | null = null;

  const setState = (next: TrainingConnection) => {
    if (next.status === state.status && next.message === state.message) return;
    state = next;
    notify('trainingConnection', state);
  };
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        wake = null;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(timer);
        wake = null;
        resolve();
      };
    });

  const loop = async (gen: number, first: AttachedServer | null) => {
    const live = () => running && gen === generation;
    let delay = RETRY_MS;
    let next: AttachedServer | null | undefined = first;
    while (live()) {
      const attached = next !== undefined ? next : await server();
      next = undefined;
      if (!live()) break;
      if (!attached) {
        setState({ status: 'no-backend', message: howToAttach });
        await sleep(NO_SERVER_POLL_MS);
        continue;
      }
      controller = new AbortController();
      setState({ status: 'connecting' });
      try {
        const events = await new ApiClient({ url: attached.url, token: attached.token }).openStream('trainingEvents', {
          signal: controller.signal,
        });
        setState({ status: 'connected' });
        delay = RETRY_MS;
        for await (const event of events) {
          if (!live()) break;
          notify('trainingEvent', event);
        }
        if (live()) setState({ status: 'disconnected', message: `${attached.url} closed the event stream` });
      } catch (err) {
        if (!live()) break;
        const message = err instanceof Error ? err.message : String(err);
        log(`training events: ${message}`);
        setState({ status: 'disconnected', message });
      }
      if (live()) await sleep(delay);
      delay = Math.min(MAX_RETRY_MS, delay * 2);
    }
  };

  return {
    connection: () => state,
    /** Starts following (once); answers with the state once it knows whether a server is attached. */
    async start(): Promise<TrainingConnection> {
      if (running) return state;
      running = true;
      const gen = ++generation;
      const attached = await server();
      if (!attached) setState({ status: 'no-backend', message: howToAttach });
      else setState({ status: 'connecting' });
      const answer = state;
      if (gen === generation && running) void loop(gen, attached);
      return answer;
    },
    stop() {
      running = false;
      controller?.abort();
      wake?.();
    },
  };
}
