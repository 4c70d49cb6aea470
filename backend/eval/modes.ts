// Evaluation under every verdict mode: each answer is judged by every rule of the registry
// (lean/verdictModes.ts) from its one Lean answer, and metrics, reports and summaries iterate the registry.
// Nothing here names a mode: a new one is an entry of `verdictModeRules` and nothing else.
import type { EvalAttemptRecord, ModeJudgement, Verdict, VerdictMode } from '../protocol';
import { DEFAULT_VERDICT_MODE, VERDICT_MODES, verdictModeRules } from '../lean/verdictModes';

/** Every mode's judgement of one answer (null verdict: nothing was extracted, so nothing reached Lean). */
export function judgeInEveryMode(verdict: Verdict | null): Record<VerdictMode, ModeJudgement> {
  return Object.fromEntries(VERDICT_MODES.map((m) => [m, verdictModeRules[m].judge(verdict)])) as Record<
    VerdictMode,
    ModeJudgement
  >;
}

/**
 * One mode's judgement of a stored answer; null when the run was stored before that mode was measured. The
 * default mode's is the record's `valid` flag when the record carries no judgements at all.
 */
export function judgementOf(a: Pick<EvalAttemptRecord, 'valid' | 'modes'>, mode: VerdictMode): ModeJudgement | null {
  return a.modes?.[mode] ?? (mode === DEFAULT_VERDICT_MODE ? { valid: a.valid, reason: null } : null);
}

/** The modes in a report's order: the headline's first, then the registry's order. */
export function modesHeadlineFirst(headline: VerdictMode = DEFAULT_VERDICT_MODE): VerdictMode[] {
  return [headline, ...VERDICT_MODES.filter((m) => m !== headline)];
}

/** The modes other than the default, whose figures are set beside the default's. */
export function otherModes(): VerdictMode[] {
  return VERDICT_MODES.filter((m) => m !== DEFAULT_VERDICT_MODE);
}
