// Builds a run's report from the store: metrics, per-problem outcomes and the run summary.
import type { EvalReport } from '../protocol';
import type { EvalStore } from '../store/eval';
import { comparability } from './comparable';
import { computeMetrics, onlyAcceptedBy, problemOutcomes } from './metrics';

export function buildReport(store: EvalStore, run: string): EvalReport {
  const summary = store.summary(run);
  const problems = store.problems(run);
  const attempts = store.attempts(run);
  const metrics = computeMetrics(summary.config, problems, attempts, summary.wallSeconds);
  return {
    run: summary,
    metrics,
    problems: problemOutcomes(summary.config, problems, attempts),
    onlyAcceptedBy: onlyAcceptedBy(attempts),
    comparability: comparability(summary.config, metrics.problems),
  };
}
