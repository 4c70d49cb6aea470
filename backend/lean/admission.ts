// Fair sharing of the verifier: every client's checks (HTTP check routes, the reward service, the prover) pass one
// admission queue in front of the verifier. A request is admitted as a whole or refused with QueueFull (HTTP 429 +
// Retry-After) before any work starts: when the server's queue is full, or when its client already holds its share.
// Admitted checks wait here in one queue per client and go to the verifier round-robin, a few at a time (`lanes`),
// so a client with a thousand queued checks delays a client with one by at most one check per lane. Shares are
// per principal (route family + remote address; `X-Kimina-Client` names only order a principal's own work), and
// a reserve of the queue is kept for principals holding little, so small batches are admitted during any flood.
import { clampTimeoutS } from './checkTimeout';
import { BatchTooLarge, QueueFull } from './errors';
import type { CheckOutcome } from './types';
import { optionsForSnippet, type BatchCheckOptions, type BatchVerifier, type VerifierStats } from './verifier';

export { BatchTooLarge };

export interface AdmissionOptions {
  /** Checks admitted at once over all clients (running + waiting). */
  capacity: number;
  /** Checks one client may have admitted at once. */
  perClient: number;
  /** Snippets in one request; more is refused with 413 (it could never be admitted, retrying would not help). */
  maxBatch: number;
  /** Checks handed to the verifier at once; the rest wait here. */
  lanes: number;
  /** Seconds, when a check names no timeout (capped like any other). */
  defaultTimeoutS: number;
}

interface Pending {
  code: string;
  options: BatchCheckOptions;
  resolve: (o: CheckOutcome) => void;
}
interface ClientQueue {
  admitted: number;
  pending: Pending[];
  servedAt: number;
  principal: PrincipalShare;
}
interface PrincipalShare {
  key: string;
  admitted: number;
  servedAt: number;
}

export interface AdmissionStats extends VerifierStats {
  clients: number;
  perClient: number;
  maxBatch: number;
}

/**
 * Who a request is, for sharing: a principal, the route family (`check`, `reward`, …) plus the remote address,
 * which is all a local server can tell apart (its API token is one shared secret, so it names no one). The
 * `X-Kimina-Client` header, when sane, is a label after `|`: it orders a principal's own work (round-robin
 * among its names) but never adds to its share, so many names cannot multiply a client's allowance. Local
 * clients all come from 127.0.0.1, so the family keeps a reward pool apart from the editor's checks.
 */
export function clientKey(
  family: string,
  header: string | string[] | undefined,
  remoteAddress: string | undefined,
): string {
  const named = typeof header === 'string' && /^[\w.:@/-]{1,64}$/.test(header) ? header : undefined;
  return `${family}:${remoteAddress ?? 'unknown'}${named ? `|${named}` : ''}`;
}

/** The principal of a sharing key: what comes before the `|` label (the whole key when it has none). */
export function principalOf(key: string): string {
  const bar = key.indexOf('|');
  return bar < 0 ? key : key.slice(0, bar);
}

function serverError(reason: string): CheckOutcome {
  return { verdict: { status: 'server_error', reason, messages: [], sorries: [], time: 0 } };
}

/**
 * The part of the queue a principal may use only while it holds little: large principals together leave
 * `reserve` checks free, and a principal holding at most `smallShare` (this request included) may use them.
 * So a small batch from another client is admitted however many large clients flood the server.
 */
export function reserveOf(o: Pick<AdmissionOptions, 'capacity' | 'maxBatch'>): { reserve: number; smallShare: number } {
  const reserve = Math.max(0, Math.min(Math.ceil(o.capacity / 4), o.capacity - o.maxBatch));
  return { reserve, smallShare: Math.max(1, Math.ceil(reserve / 4)) };
}

export class Admission implements BatchVerifier {
  private readonly clients = new Map<string, ClientQueue>();
  private readonly principals = new Map<string, PrincipalShare>();
  private readonly reserve: { reserve: number; smallShare: number };
  private admitted = 0;
  private running = 0;
  private recentSeconds = 1;
  private tick = 0;

  constructor(
    readonly inner: BatchVerifier,
    private readonly o: AdmissionOptions,
  ) {
    this.reserve = reserveOf(o);
  }

  get policy() {
    return this.inner.policy;
  }

  stats(): AdmissionStats {
    const s = this.inner.stats();
    let waiting = 0;
    for (const q of this.clients.values()) waiting += q.pending.length;
    return {
      ...s,
      waiting: (s.waiting ?? 0) + waiting,
      inFlight: this.admitted,
      maxInFlight: this.o.capacity,
      clients: this.clients.size,
      perClient: this.o.perClient,
      maxBatch: this.o.maxBatch,
    };
  }

  async check(code: string, options: BatchCheckOptions = {}): Promise<CheckOutcome> {
    return (await this.checkBatch([code], options))[0];
  }

  /** Admits the whole batch or throws (QueueFull, BatchTooLarge) before any work starts. */
  checkBatch(codes: string[], options: BatchCheckOptions = {}): Promise<CheckOutcome[]> {
    if (codes.length > this.o.maxBatch) return Promise.reject(new BatchTooLarge(codes.length, this.o.maxBatch));
    if (codes.length === 0) return Promise.resolve([]);
    const key = options.client ?? 'local';
    const principalKey = principalOf(key);
    const principal = this.principals.get(principalKey) ?? { key: principalKey, admitted: 0, servedAt: 0 };
    const queue = this.clients.get(key) ?? { admitted: 0, pending: [], servedAt: 0, principal };
    const holds = principal.admitted + codes.length;
    const overClient = holds > this.o.perClient;
    const room = holds <= this.reserve.smallShare ? this.o.capacity : this.o.capacity - this.reserve.reserve;
    const overServer = this.admitted + codes.length > room;
    if (overClient || overServer) {
      const ahead = overClient ? principal.admitted : this.admitted;
      return Promise.reject(new QueueFull(this.retryAfter(ahead + codes.length)));
    }
    if (!this.principals.has(principalKey)) this.principals.set(principalKey, principal);
    if (!this.clients.has(key)) this.clients.set(key, queue);
    queue.admitted += codes.length;
    principal.admitted += codes.length;
    this.admitted += codes.length;
    const checkOptions: BatchCheckOptions = {
      ...options,
      timeout: clampTimeoutS(options.timeout, this.o.defaultTimeoutS),
    };
    const results = Promise.all(
      codes.map(
        (code, index) =>
          new Promise<CheckOutcome>((resolve) => {
            queue.pending.push({ code, options: optionsForSnippet(checkOptions, index), resolve });
          }),
      ),
    );
    this.pump();
    return results;
  }

  /** Seconds until `checks` checks would have passed through the lanes at the recent pace (1 s … 1 h). */
  private retryAfter(checks: number): number {
    return Math.min(3600, Math.max(1, Math.ceil((this.recentSeconds * checks) / Math.max(1, this.o.lanes))));
  }

  /**
   * The next check, round-robin twice over: the waiting principal served longest ago (one not served yet
   * first), then among its names the one served longest ago. Names share their principal's turns.
   */
  private next(): { key: string; queue: ClientQueue; item: Pending } | undefined {
    let pick: [string, ClientQueue] | undefined;
    for (const entry of this.clients) {
      const q = entry[1];
      if (q.pending.length === 0) continue;
      if (
        !pick ||
        q.principal.servedAt < pick[1].principal.servedAt ||
        (q.principal === pick[1].principal && q.servedAt < pick[1].servedAt)
      )
        pick = entry;
    }
    if (!pick) return undefined;
    const [key, queue] = pick;
    queue.servedAt = ++this.tick;
    queue.principal.servedAt = this.tick;
    return { key, queue, item: queue.pending.shift()! };
  }

  private pump(): void {
    while (this.running < this.o.lanes) {
      const picked = this.next();
      if (!picked) return;
      const { key, queue, item } = picked;
      const release = (): void => {
        this.admitted--;
        queue.admitted--;
        queue.principal.admitted--;
        if (queue.admitted === 0 && this.clients.get(key) === queue) this.clients.delete(key);
        if (queue.principal.admitted === 0 && this.principals.get(queue.principal.key) === queue.principal)
          this.principals.delete(queue.principal.key);
      };
      if (item.options.signal?.aborted) {
        // its client went away while it waited here: nothing to run
        item.resolve(serverError('The client went away before the check started'));
        release();
        continue;
      }
      this.running++;
      const t0 = performance.now();
      this.inner
        .checkBatch([item.code], item.options)
        .then(
          ([outcome]) => item.resolve(outcome),
          (err: unknown) =>
            item.resolve(
              serverError(`Internal error while checking: ${err instanceof Error ? err.message : String(err)}`),
            ),
        )
        .finally(() => {
          this.running--;
          release();
          this.recentSeconds = 0.8 * this.recentSeconds + 0.2 * ((performance.now() - t0) / 1000);
          this.pump();
        });
    }
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
