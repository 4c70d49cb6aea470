// The language-server face's training requests (kimina/training/*): relayed to the attached `kimina serve`
// with the contract's one typed client, and its /v1/training/events followed (reconnecting) while the
// client asks for them, each event forwarded as a `kimina/training/event` notification. Training lives in
// the server so that a run outlives the editor window; with none attached, each request says how to get one.
import { type CancellationToken, type Connection, LSPErrorCodes, ResponseError } from 'vscode-languageserver/node';
import { ApiClient, ApiError, type LspRequestTypes, type TrainingConnection, lspMethods } from '../protocol';

/** Where the attached server is: url and API token. */
export interface AttachedServer {
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
export const howToAttach =
  'training runs in `kimina serve`, which keeps training when the editor closes: start one in a terminal with ' +
  '`kimina serve` (or set kimina.serverUrl to one), then run "Kimina: Restart Backend"';
export const noServerMessage = `no Kimina server is attached: ${howToAttach}`;

type TrainingMethod = Extract<keyof LspRequestTypes, `kimina/training/${string}`>;
type Relay<M extends TrainingMethod> = (
  api: ApiClient,
  params: LspRequestTypes[M]['params'],
  signal: AbortSignal,
) => Promise<LspRequestTypes[M]['result']>;

const RETRY_MS = 1000;
const MAX_RETRY_MS = 15_000;
const NO_SERVER_POLL_MS = 2000;

function runId(params: { id?: unknown } | undefined): string {
  if (typeof params?.id !== 'string' || !params.id)
    throw new ResponseError(LSPErrorCodes.RequestFailed, 'this training request needs a run id');
  return params.id;
}

export function registerTrainingRequests({ connection, server, log }: TrainingRequestOptions): { close(): void } {
  const clientFor = (s: AttachedServer) => new ApiClient({ url: s.url, token: s.token });

  const relay = <M extends TrainingMethod>(method: M, call: Relay<M>) => {
    connection.onRequest(
      method,
      async (params: LspRequestTypes[M]['params'], cancel: CancellationToken): Promise<unknown> => {
        const attached = await server();
        if (!attached) throw new ResponseError(LSPErrorCodes.RequestFailed, noServerMessage);
        const controller = new AbortController();
        cancel.onCancellationRequested(() => controller.abort());
        try {
          return await call(clientFor(attached), params ?? ({} as LspRequestTypes[M]['params']), controller.signal);
        } catch (err) {
          if (err instanceof ResponseError) throw err;
          const message = err instanceof Error ? err.message : String(err);
          log(`${method}: ${message}`);
          throw new ResponseError(
            LSPErrorCodes.RequestFailed,
            message,
            err instanceof ApiError ? { status: err.status } : undefined,
          );
        }
      },
    );
  };

  relay(lspMethods.trainingPresets, (api, _p, signal) => api.call('trainingPresets', { signal }));
  relay(lspMethods.trainingRuns, (api, _p, signal) => api.call('trainingRuns', { signal }));
  relay(lspMethods.trainingGpus, (api, _p, signal) => api.call('trainingGpus', { signal }));
  relay(lspMethods.trainingRun, (api, p, signal) => api.call('trainingRun', { params: { id: runId(p) }, signal }));
  relay(lspMethods.trainingStart, (api, body, signal) => api.call('trainingStart', { body, signal }));
  relay(lspMethods.trainingPause, (api, p, signal) => api.call('trainingPause', { params: { id: runId(p) }, signal }));
  relay(lspMethods.trainingResume, (api, p, signal) =>
    api.call('trainingResume', { params: { id: runId(p) }, signal }),
  );
  relay(lspMethods.trainingCancel, (api, p, signal) =>
    api.call('trainingCancel', { params: { id: runId(p) }, signal }),
  );
  relay(lspMethods.trainingMetrics, (api, p, signal) =>
    api.call('trainingMetrics', { params: { id: runId(p) }, query: { kind: p.kind, since: p.since }, signal }),
  );
  relay(lspMethods.trainingRollouts, (api, p, signal) =>
    api.call('trainingRollouts', { params: { id: runId(p) }, query: { limit: p.limit }, signal }),
  );
  relay(lspMethods.trainingLog, (api, p, signal) =>
    api.call('trainingLog', { params: { id: runId(p) }, query: { limit: p.limit }, signal }),
  );
  relay(lspMethods.trainingExport, (api, p, signal) =>
    api.call('trainingExport', { params: { id: runId(p) }, body: { quantize: p.quantize }, signal }),
  );

  const follower = followTrainingEvents({ connection, server, log });
  connection.onRequest(
    lspMethods.trainingFollow,
    async (params: LspRequestTypes['kimina/training/follow']['params']): Promise<TrainingConnection> => {
      if (params?.follow === false) {
        follower.stop();
        return follower.connection();
      }
      return follower.start();
    },
  );
  return { close: () => follower.stop() };
}

/**
 * Follows GET /v1/training/events of the attached server while started: each event becomes a notification;
 * when the stream ends or fails it reconnects (1 s, doubling to 15 s); with no server it looks again every 2 s.
 */
function followTrainingEvents({ connection, server, log }: TrainingRequestOptions) {
  let state: TrainingConnection = { status: 'connecting' };
  let running = false;
  let generation = 0;
  let controller: AbortController | null = null;
  let wake: (() => void) | null = null;

  const setState = (next: TrainingConnection) => {
    if (next.status === state.status && next.message === state.message) return;
    state = next;
    void connection.sendNotification(lspMethods.trainingConnection, state);
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
          void connection.sendNotification(lspMethods.trainingEvent, event);
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
