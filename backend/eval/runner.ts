// Runs a benchmark: for each problem, the samples it still lacks, several problems at once,
// each problem's finished samples written to the store as soon as they are known.
import { setMaxListeners } from 'node:events';
import type { BenchmarkProblem, EvalAttemptRecord, EvalProgress } from '../protocol';
import type { EvalStore, StoredAttempt } from '../store/eval';

/** One answer (and its check) for one of the requested sample indices. */
export type AttemptOutcome = Omit<EvalAttemptRecord, 'problem'> & { response?: string | null };

/**
 * Proves one problem once per requested sample index (the run's global indices, so seeds and
 * records stay stable across resumes), with up to `fixTurns` error-fix turns per failed sample,
 * never stopping at the first proof. Resolves with every turn of every sample; when `signal`
 * aborts it may resolve early with fewer (the problem is then redone whole next time).
 */
export type AttemptProblem = (
  problem: BenchmarkProblem,
  request: { samples: number[]; fixTurns: number },
  signal: AbortSignal,
) => Promise<AttemptOutcome[]>;

export interface RunOptions {
  store: EvalStore;
  run: string;
  attempt: AttemptProblem;
  /** Problems proved at the same time. */
  concurrency: number;
  signal?: AbortSignal;
  onProgress?: (p: EvalProgress) => void;
  /** Keep whole responses in the store (large: up to ~100 KB per answer). */
  keepResponses?: boolean;
  /** Work only on these problems of the run (the others keep what they have). */
  only?: string[];
}

export interface RunOutcome {
  /** Problems finished in this call. */
  finished: number;
  /** True when every problem of the run has all its samples. */
  complete: boolean;
  stopped: boolean;
}

/** Groups a problem's outcomes by sample and checks each sample has its first answer. */
function bySample(problem: string, outcomes: AttemptOutcome[], samples: number[]): Map<number, AttemptOutcome[]> {
  const asked = new Set(samples);
  const groups = new Map<number, AttemptOutcome[]>();
  for (const o of outcomes) {
    if (!asked.has(o.sample)) throw new Error(`${problem}: attempt for sample ${o.sample}, which was not asked for`);
    if (o.turn !== 1 && o.turn !== 2) throw new Error(`${problem}: attempt with turn ${o.turn}`);
    let g = groups.get(o.sample);
    if (!g) groups.set(o.sample, (g = []));
    if (g.some((x) => x.turn === o.turn))
      throw new Error(`${problem}: two answers for sample ${o.sample} turn ${o.turn}`);
    g.push(o);
  }
  for (const [s, g] of groups)
    if (!g.some((x) => x.turn === 1)) throw new Error(`${problem}: sample ${s} has a fix turn but no first answer`);
  return groups;
}

export async function runEvaluation(options: RunOptions): Promise<RunOutcome> {
  const { store, run, attempt } = options;
  const row = store.getRun(run);
  if (!row) throw new Error(`no evaluation run named '${run}'`);
  const { samples, fixTurns } = row.config;
  if (!Number.isInteger(options.concurrency) || options.concurrency < 1)
    throw new Error(`concurrency must be a positive integer, got ${options.concurrency}`);

  const wanted = options.only ? new Set(options.only) : null;
  const problems = store.problems(run).filter((p) => !wanted || wanted.has(p.id));
  const finished = store.finishedSamples(run);
  const ids = new Set(problems.map((p) => p.id));
  const solvedIds = new Set([...store.solvedProblems(run)].filter((id) => ids.has(id)));
  const todo = problems.filter((p) => (finished.get(p.id)?.size ?? 0) < samples);
  const total = problems.length;
  let done = total - todo.length;
  let finishedNow = 0;

  const started = Date.now();
  let lastWall = started;
  const saveWallTime = () => {
    const now = Date.now();
    store.addWallTime(run, now - lastWall);
    lastWall = now;
  };
  const report = () => {
    const elapsed = (Date.now() - started) / 1000;
    const etaSeconds = finishedNow > 0 ? (elapsed / finishedNow) * (total - done) : null;
    options.onProgress?.({ run, done, total, solved: solvedIds.size, etaSeconds });
  };
  report();

  const inner = new AbortController();
  // Every sample in flight (gate, prove loop, engine, verifier) listens on this one signal.
  setMaxListeners(0, inner.signal);
  const outer = options.signal;
  const onAbort = () => inner.abort(outer?.reason);
  outer?.addEventListener('abort', onAbort, { once: true });
  let failure: unknown = null;
  const queue = [...todo];

  /** Proves one problem and stores its finished samples. */
  async function one(problem: BenchmarkProblem): Promise<void> {
    const have = finished.get(problem.id) ?? new Set<number>();
    const missing: number[] = [];
    for (let s = 0; s < samples; s++) if (!have.has(s)) missing.push(s);
    const outcomes = await attempt(problem, { samples: missing, fixTurns }, inner.signal);
    if (inner.signal.aborted) return; // an interrupted problem is redone whole next time
    const groups = bySample(problem.id, outcomes, missing);
    if (groups.size < missing.length)
      throw new Error(`${problem.id}: ${missing.length} samples asked, ${groups.size} answered`);
    const stored: StoredAttempt[] = [];
    for (const group of groups.values()) {
      for (const o of group)
        stored.push({ ...o, problem: problem.id, response: options.keepResponses ? (o.response ?? null) : null });
    }
    store.recordSamples(run, problem.id, missing, stored);
    if (stored.some((a) => a.valid)) solvedIds.add(problem.id);
    done++;
    finishedNow++;
    saveWallTime();
    report();
  }

  /** Takes problems until none are left or the run stops; the first failure stops every worker. */
  async function worker(): Promise<void> {
    for (let problem = queue.shift(); problem && !inner.signal.aborted; problem = queue.shift()) {
      try {
        await one(problem);
      } catch (err) {
        if (inner.signal.aborted && failure === null && outer?.aborted) return;
        failure ??= err;
        inner.abort(err);
        return;
      }
    }
  }

  try {
    await Promise.all(Array.from({ length: Math.min(options.concurrency, Math.max(1, todo.length)) }, () => worker()));
  } finally {
    outer?.removeEventListener('abort', onAbort);
    saveWallTime();
  }
  if (failure) throw failure;
  return { finished: finishedNow, complete: done === total, stopped: inner.signal.aborted };
}
