// ProveService over a running `kimina serve`: POST /v1/prove as a server-sent event stream, POST /v1/check.
// Cancelling closes the stream, which cancels the proof on the server.
import type { BackendStatus, ProveEvent, ProveRequest, ProveResult, TrainingRunsResponse, V1CheckResponse } from '../protocol';
import type { CheckAnswer, ProveService } from './service';
import type { ServerAddress } from './discovery';

export class HttpProveService implements ProveService {
  readonly kind = 'server' as const;
  constructor(readonly server: ServerAddress) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { 'content-type': 'application/json', ...(this.server.token ? { authorization: `Bearer ${this.server.token}` } : {}), ...extra };
  }

  private async post(path: string, body: unknown, signal?: AbortSignal, accept = 'application/json'): Promise<Response> {
    let res: Response;
    try {
      res = await fetch(this.server.url + path, { method: 'POST', headers: this.headers({ accept }), body: JSON.stringify(body), signal });
    } catch (err) {
      if (signal?.aborted) throw err;
      throw new Error(`cannot reach the Kimina server at ${this.server.url}: ${(err as Error).message}`);
    }
    if (!res.ok) {
      const text = await res.text().catch(() => '');
      throw new Error(`${this.server.url}${path} answered ${res.status}${res.status === 401 ? ' (check kimina.serverToken / KIMINA_API_TOKEN)' : ''}: ${text.slice(0, 300)}`);
    }
    return res;
  }

  async describe(): Promise<Partial<BackendStatus>> {
    try {
      const res = await fetch(this.server.url + '/health', { headers: this.headers() });
      const health = (await res.json()) as { version?: string; repls?: { total: number } };
      const training = await this.activeTraining();
      return {
        backend: 'server', server: this.address(), lean: health.repls ? `${health.repls.total} REPLs` : undefined,
        ...(training ? { state: 'training', detail: `attached to ${this.server.url}; ${training}` } : { state: 'ready', detail: `attached to ${this.server.url}` }),
      };
    } catch (err) {
      return { backend: 'server' as const, server: this.address(), state: 'error' as const, detail: `cannot reach ${this.server.url}: ${(err as Error).message}` };
    }
  }

  /** "training <run> (step n)" when the server runs a training job now; null otherwise or when it has no training API. */
  private async activeTraining(): Promise<string | null> {
    try {
      const res = await fetch(this.server.url + '/v1/training/runs', { headers: this.headers() });
      if (!res.ok) return null;
      const { runs } = (await res.json()) as TrainingRunsResponse;
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
      if (req.id) void fetch(`${this.server.url}/v1/prove/${encodeURIComponent(req.id)}`, { method: 'DELETE', headers: this.headers() }).catch(() => {});
    };
    signal.addEventListener('abort', cancelOnServer, { once: true });
    try {
      const res = await this.post('/v1/prove', req, signal, 'text/event-stream');
      if (!res.body) throw new Error('the server sent no body');
      for await (const event of readEvents(res.body)) {
        onEvent(event);
        if (event.type === 'attempt') attempts.push(event.attempt);
        if (event.type === 'error') throw new Error(event.message);
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
    const res = await this.post('/v1/check', { snippets: [{ id: 'editor', code }] }, signal);
    const body = (await res.json()) as V1CheckResponse;
    const first = body.results?.[0];
    if (!first) throw new Error('the server answered /v1/check without a result');
    const { id: _id, response, ...verdict } = first;
    return { verdict, response };
  }

  async close(): Promise<void> {}
}

/** Parses a server-sent event stream whose `data:` lines hold ProveEvents as JSON. */
export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ProveEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true }).replace(/\r\n/g, '\n');
    let end: number;
    while ((end = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).replace(/^ /, '')).join('\n');
      if (data) yield JSON.parse(data) as ProveEvent;
    }
  }
}
