// The agents' job list without a model or Lean: a prove service double whose proofs wait until the test lets them
// end. Per-client bounds, one job at a time with the clients taking turns, cancelling queued and running jobs,
// the editor's registry of running proofs holding the running job, and what a restart leaves in SQLite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openDb } from '../../backend/store/db';
import { AgentJobStore } from '../../backend/store/agentJobs';
import { AgentJobs, AgentToolError } from '../../backend/editor/agentJobs';
import { pickTarget, type JobTarget } from '../../backend/editor/agentAdapter';
import { RunningProofs } from '../../backend/prover/running';
import type { ProveService } from '../../backend/editor/service';
import type { ProveResult } from '../../backend/protocol';

const text = 'theorem a : 1 = 1 := by\n  sorry\n';
const target = pickTarget(text, { theorem: 'a' }) as JobTarget;
const origin = { file: '/work/a.lean' };

/** A prove service whose proofs end (not proved) when `release(id)` is called, or when cancelled. */
function waitingService() {
  const started: string[] = [];
  const releases = new Map<string, () => void>();
  const service: ProveService = {
    kind: 'in-process',
    describe: async () => ({}),
    check: async () => ({ verdict: { status: 'valid', reason: '', messages: [], sorries: [], time: 0 } }),
    close: async () => {},
    prove: (req, _onEvent, signal): Promise<ProveResult> =>
      new Promise((resolve) => {
        started.push(req.id!);
        const end = (status: ProveResult['status']) => resolve({ id: req.id!, status, proof: null, attempts: [] });
        releases.set(req.id!, () => end('not_proved'));
        signal.addEventListener('abort', () => end('cancelled'));
      }),
  };
  return { service, started, release: (id: string) => releases.get(id)?.() };
}

const settle = () => new Promise((r) => setTimeout(r, 30));

test('per-client bound, one job at a time, clients in turn, cancel queued and running', async () => {
  const db = openDb(':memory:');
  const proofs = new RunningProofs();
  const { service, started, release } = waitingService();
  const jobs = new AgentJobs({
    store: new AgentJobStore(db),
    proofs,
    service: async () => service,
    perClient: 2,
    keepHours: 1,
  });
  const a1 = jobs.start('mcp:A', 'prove', 'a.lean', text, target, origin);
  const a2 = jobs.start('mcp:A|other-name', 'prove', 'a.lean', text, target, origin);
  assert.throws(() => jobs.start('mcp:A', 'prove', 'a.lean', text, target, origin), AgentToolError, 'A holds its 2');
  const b1 = jobs.start('mcp:B', 'prove', 'a.lean', text, target, origin);
  await settle();
  assert.deepEqual(started, [a1.id], 'one job at a time');
  assert.ok(proofs.has(a1.id), "the running job is in the editor's registry of running proofs");
  assert.equal(jobs.get(a1.id)!.state, 'running');
  assert.equal(jobs.get(b1.id)!.state, 'queued');
  release(a1.id);
  await settle();
  assert.deepEqual(started, [a1.id, b1.id], "B's job goes before A's second: clients take turns");
  assert.equal(jobs.get(a1.id)!.state, 'not_proved');
  assert.equal(jobs.cancel(a2.id, 'mcp:A').state, 'cancelled', 'a queued job is cancelled at once');
  jobs.cancel(b1.id, 'mcp:B');
  await settle();
  assert.equal(jobs.get(b1.id)!.state, 'cancelled');
  assert.equal(proofs.size, 0);
  assert.deepEqual(started, [a1.id, b1.id], 'the cancelled queued job never started');
  await jobs.close();
  db.close();
});

test('a restart fails the jobs left unfinished; finished jobs are dropped after the keep time', async () => {
  const db = openDb(':memory:');
  const store = new AgentJobStore(db);
  store.create({ id: 'left', client: 'mcp:A', kind: 'prove', path: 'a.lean', theorem: 'a', line: 1 });
  store.create({ id: 'old', client: 'mcp:A', kind: 'prove', path: 'a.lean', theorem: 'a', line: 1 });
  store.update('old', { state: 'not_proved', problem: 'no proof' });
  const jobs = new AgentJobs({
    store,
    proofs: new RunningProofs(),
    service: async () => waitingService().service,
    perClient: 1,
    keepHours: 24,
  });
  assert.equal(store.get('left')!.state, 'failed');
  assert.match(store.get('left')!.problem!, /stopped before the job finished/);
  assert.equal(store.purge(24, Date.now() + 25 * 3_600_000), 2, 'both finished jobs are older than 24 h by then');
  assert.equal(store.get('old'), null);
  await jobs.close();
  db.close();
});
