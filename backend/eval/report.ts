// Builds a run's report from the store: metrics, per-problem outcomes and the run summary.
import type { EvalReport } from '../protocol';
import type { EvalStore } from '../store/eval';
import { computeMetrics, problemOutcomes } from './metrics';

export function buildReport(store: EvalStore, run: string): EvalReport {
  const summary = store.summary(run);
  const problems = store.problems(run);
  const attempts = store.attempts(run);
  return {
    run: summary,
    metrics: computeMetrics(summary.config, problems, attempts, summary.wallSeconds),
    problems: problemOutcomes(summary.config, problems, attempts),
  };
}
