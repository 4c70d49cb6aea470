// Agents' proof jobs (the `prove` and `repair` tools): queued at once, run one at a time beside the editor's own
// proofs, each registered under its id in the app's one registry of running proofs (so `cancel`, the editor's
// Cancel and shutdown stop it alike), its state, attempts and verified proof kept in SQLite (AgentJobStore) for
// `job` and `apply`. Each client may hold a bounded number of unfinished jobs (KIMINA_AGENT_JOBS); clients take
// turns (round-robin), so one agent's queue never holds another's job back by more than one proof.
import { randomUUID } from 'node:crypto';
import type { AgentJob, Attempt, ProveOrigin } from '../protocol';
import type { RunningProofs } from '../prover/running';
import { principalOf } from '../lean/admission';
import type { AgentJobStore } from '../store/agentJobs';
import { attemptSummary, proveTarget, replacedBy, verifiedBody, type JobTarget } from './agentAdapter';
import type { ProveService } from './service';

/** A request the caller must change (too many jobs, no such job): the tool answers it as an error. */
export class AgentToolError extends Error {}

export interface AgentJobsOptions {
  store: AgentJobStore;
  proofs: RunningProofs;
  service: () => Promise<ProveService>;
  /** Unfinished jobs one client may hold. */
  perClient: number;
  /** Hours a finished job is kept. */
  keepHours: number;
  log?: (line: string) => void;
}

interface Queued {
  id: string;
  client: string;
  /** The file's text when the job was started: the target was found in it, the proof is made for it. */
  text: string;
  target: JobTarget;
  /** The file it was started on and whether its text is not the user's (edited since its last commit). */
  origin: ProveOrigin;
}

export class AgentJobs {
  private readonly queue: Queued[] = [];
  private running: Queued | null = null;
  private runningDone: Promise<void> | null = null;
  private lastClient = '';
  private closed = false;
  private readonly listeners = new Set<(job: AgentJob) => void>();
  private readonly purger: NodeJS.Timeout;

  constructor(private readonly o: AgentJobsOptions) {
    // jobs a stopped backend left unfinished can no longer finish (the text they were started on is gone)
    o.store.failUnfinished('the backend stopped before the job finished');
    o.store.purge(o.keepHours);
    this.purger = setInterval(() => o.store.purge(o.keepHours), 3_600_000);
    this.purger.unref();
  }

  /** Called on every change of a job (the Proof view lists agents' jobs). */
  onChange(listener: (job: AgentJob) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(job: AgentJob): AgentJob {
    for (const l of this.listeners) l(job);
    return job;
  }

  /** Unfinished jobs of a client's principal (its `|label` orders nothing here and adds no share). */
  unfinishedOf(client: string): number {
    const who = principalOf(client);
    const mine = (q: Queued | null) => q !== null && principalOf(q.client) === who;
    return this.queue.filter(mine).length + (mine(this.running) ? 1 : 0);
  }

  /** Queues a job; refuses when the client already holds its share. */
  start(
    client: string,
    kind: AgentJob['kind'],
    path: string,
    text: string,
    target: JobTarget,
    origin: ProveOrigin,
  ): AgentJob {
    if (this.closed) throw new AgentToolError('the backend is shutting down');
    if (this.unfinishedOf(client) >= this.o.perClient)
      throw new AgentToolError(
        `this client already has ${this.o.perClient} unfinished jobs (KIMINA_AGENT_JOBS): wait for one with 'job', or 'cancel' one`,
      );
    const id = randomUUID();
    const job = this.o.store.create({
      id,
      client,
      kind,
      path,
      ...(origin.file ? { file: origin.file } : {}),
      theorem: target.decl.name,
      line: target.position.line + 1,
    });
    this.queue.push({ id, client, text, target, origin });
    this.changed(job);
    setImmediate(() => this.pump());
    return job;
  }

  get(id: string): AgentJob | null {
    return this.o.store.get(id);
  }

  /**
   * The job, when `client` started it (the same principal as the per-client bound): an agent reads, cancels and
   * applies only its own jobs; another's is refused as clearly as a missing one.
   */
  own(id: string, client: string): AgentJob {
    const job = this.o.store.get(id);
    if (!job) throw new AgentToolError(`no job ${id} (finished jobs are kept ${this.o.keepHours} h, then dropped)`);
    if (principalOf(job.client) !== principalOf(client))
      throw new AgentToolError(`job ${id} belongs to another client: only the client that started it may use it`);
    return job;
  }

  list(limit?: number): AgentJob[] {
    return this.o.store.list(limit);
  }

  markApplied(id: string): void {
    this.o.store.markApplied(id);
    const job = this.o.store.get(id);
    if (job) this.changed(job);
  }

  /** Cancels a job of `client`'s (see `own`). */
  cancel(id: string, client: string): AgentJob {
    const job = this.own(id, client);
    const k = this.queue.findIndex((q) => q.id === id);
    if (k >= 0) {
      this.queue.splice(k, 1);
      return this.changed(this.o.store.update(id, { state: 'cancelled', problem: 'cancelled before it started' }));
    }
    if (this.running?.id === id) this.o.proofs.cancel(id);
    return job;
  }

  /** The next job: the queued one of the client after the last served, round-robin. */
  private next(): Queued | undefined {
    const clients = [...new Set(this.queue.map((q) => principalOf(q.client)))].sort();
    const client = clients.find((c) => c > this.lastClient) ?? clients[0];
    const k = this.queue.findIndex((q) => principalOf(q.client) === client);
    return k >= 0 ? this.queue.splice(k, 1)[0] : undefined;
  }

  private pump(): void {
    if (this.running || this.closed) return;
    const job = this.next();
    if (!job) return;
    this.running = job;
    this.lastClient = principalOf(job.client);
    this.runningDone = this.run(job).finally(() => {
      this.running = null;
      this.runningDone = null;
      this.pump();
    });
  }

  private async run(q: Queued): Promise<void> {
    const { store } = this.o;
    const controller = this.o.proofs.begin(q.id);
    if (!controller) {
      this.changed(store.update(q.id, { state: 'failed', problem: 'a proof with this id is already running' }));
      return;
    }
    const attempts: Attempt[] = [];
    try {
      this.changed(store.update(q.id, { state: 'running' }));
      const { text } = q;
      const service = await this.o.service();
      const result = await proveTarget(
        service,
        q.id,
        text,
        q.target,
        (a) => {
          attempts.push(a);
          this.changed(store.update(q.id, { attempts: attempts.map(attemptSummary) }));
        },
        controller.signal,
        q.origin,
      );
      const summaries = (result.attempts.length ? result.attempts : attempts).map(attemptSummary);
      const body = result.status === 'proved' ? verifiedBody(result, q.target.decl.name) : null;
      if (result.status === 'proved' && result.edit && body) {
        const proof = {
          declaration: q.target.decl.name,
          body,
          edit: result.edit,
          replaced: replacedBy(text, result.edit),
          mode: q.target.mode,
        };
        this.changed(store.update(q.id, { state: 'proved', attempts: summaries, proof }));
      } else {
        const state = result.status === 'cancelled' || controller.signal.aborted ? 'cancelled' : 'not_proved';
        const problem =
          result.problem ??
          (result.verifierFailure ? `Lean failed: ${result.verifierFailure.reason}` : undefined) ??
          (state === 'cancelled' ? 'cancelled' : `no verified proof in ${summaries.length} attempts`);
        this.changed(store.update(q.id, { state, attempts: summaries, problem }));
      }
    } catch (err) {
      const state = controller.signal.aborted ? 'cancelled' : 'failed';
      this.o.log?.(`agent job ${q.id}: ${(err as Error).message}`);
      this.changed(
        store.update(q.id, { state, attempts: attempts.map(attemptSummary), problem: (err as Error).message }),
      );
    } finally {
      this.o.proofs.end(q.id, controller);
    }
  }

  /** Cancels everything and waits for the running job to end: queued jobs end cancelled, the running one stops. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.purger);
    for (const q of this.queue.splice(0))
      this.o.store.update(q.id, { state: 'cancelled', problem: 'the backend stopped' });
    if (this.running) this.o.proofs.cancel(this.running.id);
    await this.runningDone;
  }
}
