// ProveService over a running `kimina serve`: POST /v1/prove as a server-sent event stream, POST /v1/check.
// Cancelling closes the stream, which cancels the proof on the server.
import {
  routes,
  type BackendStatus,
  type ErrorKind,
  type ProveEvent,
  type ProveRequest,
  type ProveResult,
  type RouteName,
} from '../protocol';
import { ApiClient, ApiError, BackendUnreachable } from '../client/apiClient';
import type { CheckAnswer, ProveService } from './service';
import type { ServerAddress } from './discovery';

/** The server refused a request: its words with where it is, and its kind (what is missing) kept for the caller. */
class ServerRefused extends Error {
  override readonly name = 'ServerRefused';
  constructor(
    message: string,
    readonly kind?: ErrorKind,
  ) {
    super(message);
  }
}

export class HttpProveService implements ProveService {
  readonly kind = 'server' as const;
  private readonly api: ApiClient;
  constructor(readonly server: ServerAddress) {
    this.api = new ApiClient({ url: server.url, token: server.token });
  }

  /** Says what went wrong in the editor's terms: where the server is, and which setting holds the token. */
  private explain(err: unknown, name: RouteName): Error {
    if (err instanceof BackendUnreachable)
      return new Error(`cannot reach the Kimina server at ${this.server.url}: ${err.url ? err.reason : err.message}`);
    if (err instanceof ApiError) {
      return new ServerRefused(
        `${this.server.url}${routes[name].path} answered ${err.status}${err.status === 401 ? ' (check kimina.serverToken / KIMINA_API_TOKEN)' : ''}: ${err.message.slice(0, 300)}`,
        err.kind,
      );
    }
    return err as Error;
  }

  async describe(): Promise<Partial<BackendStatus>> {
    try {
      const health = await this.api.call('health');
      const training = await this.activeTraining();
      return {
        backend: 'server',
        server: this.address(),
        lean: health.repls ? `${health.repls.total} REPLs` : undefined,
        ...(training
          ? { state: 'training', detail: `attached to ${this.server.url}; ${training}` }
          : { state: 'ready', detail: `attached to ${this.server.url}` }),
      };
    } catch (err) {
      return {
        backend: 'server' as const,
        server: this.address(),
        state: 'error' as const,
        detail: this.explain(err, 'health').message,
      };
    }
  }

  /** "training <run> (step n)" when the server runs a training job now; null otherwise or when it has no training API. */
  private async activeTraining(): Promise<string | null> {
    try {
      const { runs } = await this.api.call('trainingRuns');
      const active = runs?.find((r) => r.state === 'running' || r.state === 'preparing');
      return active ? `training ${active.name} (step ${active.step})` : null;
    } catch {
      return null;
    }
  }

  private address() {
    return { url: this.server.url, ...(this.server.token ? { token: this.server.token } : {}) };
  }

  async prove(req: ProveRequest, onEvent: (event: ProveEvent) => void, signal: AbortSignal): Promise<ProveResult> {
    const attempts: ProveResult['attempts'] = [];
    let result: ProveResult | null = null;
    // Closing the stream cancels on the server; with an id, say so explicitly as well.
    const cancelOnServer = () => {
      if (req.id) void this.api.call('proveCancel', { params: { id: req.id } }).catch(() => {});
    };
    signal.addEventListener('abort', cancelOnServer, { once: true });
    try {
      let events;
      try {
        events = await this.api.openStream('prove', { body: req, signal });
      } catch (err) {
        throw signal.aborted ? err : this.explain(err, 'prove');
      }
      for await (const event of events) {
        onEvent(event);
        if (event.type === 'attempt') attempts.push(event.attempt);
        if (event.type === 'error') throw new ServerRefused(event.message, event.kind);
        if (event.type === 'done') result = event.result;
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      signal.removeEventListener('abort', cancelOnServer);
    }
    if (result) return result;
    if (signal.aborted) return { id: '', status: 'cancelled', proof: null, attempts };
    throw new Error('the server closed the proof stream without a result');
  }

  async check(code: string, signal?: AbortSignal): Promise<CheckAnswer> {
    let body;
    try {
      body = await this.api.call('check', { body: { snippets: [{ id: 'editor', code }] }, signal });
    } catch (err) {
      throw signal?.aborted ? err : this.explain(err, 'check');
    }
    const first = body.results?.[0];
    if (!first) throw new Error('the server answered /v1/check without a result');
    const { id: _id, response, ...verdict } = first;
    return { verdict, response };
  }

  async close(): Promise<void> {}
}
