// One call for other parts of the backend (training checkpoints, HTTP): evaluate an engine on
// benchmark problems with the prove loop, resumable under `run`, and return the report.
import type { BenchmarkProblem, EvalConfig, EvalProgress, EvalReport } from '../protocol';
import type { Engine } from '../model/engine';
import type { LeanVerifier } from '../lean/types';
import type { EvalStore } from '../store/eval';
import { proveAttempter } from './proveAttempt';
import { buildReport } from './report';
import { runEvaluation } from './runner';

export interface EvaluateOptions {
  store: EvalStore;
  /** Run name; an existing run with the same settings resumes. */
  run: string;
  config: EvalConfig;
  problems: BenchmarkProblem[];
  engine: Engine;
  verifier: LeanVerifier;
  /** Samples proved at once (default 8). */
  parallel?: number;
  seed?: number;
  signal?: AbortSignal;
  onProgress?: (p: EvalProgress) => void;
}

export async function evaluate(o: EvaluateOptions): Promise<EvalReport & { stopped: boolean }> {
  o.store.openRun(o.run, o.config, o.problems);
  const parallel = o.parallel ?? 8;
  const { stopped } = await runEvaluation({
    store: o.store,
    run: o.run,
    signal: o.signal,
    onProgress: o.onProgress,
    only: o.problems.map((p) => p.id),
    concurrency: Math.max(1, Math.ceil(parallel / o.config.samples) + 1),
    attempt: proveAttempter({
      deps: {
        engine: o.engine,
        verifier: o.verifier,
        options: { verifyTimeout: o.config.leanTimeout, infotree: o.config.goals ? 'original' : null },
      },
      temperature: o.config.temperature,
      topP: o.config.topP,
      maxTokens: o.config.maxTokens,
      parallel,
      seed: o.seed,
    }),
  });
  return { ...buildReport(o.store, o.run), stopped };
}
