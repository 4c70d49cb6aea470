// Verdict modes (of an evaluation, a training reward). `strict` (the default) is our verifier's verdict. `recipe` is kimina-client's
// rule, with which the published Kimina-Prover-RL figures were counted (`ReplResponse.analyze`): Lean answered,
// no message of severity error, and an empty `sorries` list. Nothing else is looked at: no axiom audit, no
// `admit`/`sorryAx` warning, no refusal of code that can change the rules.
// Every check is judged both ways from the one Lean answer the strict check already holds, so a report can give
// both figures and list what only the recipe rule accepts (a direct measure of what the strict verdict refuses).
import type { Verdict, VerdictMode, VerdictStatus } from '../protocol';

export type { VerdictMode } from '../protocol';
export const VERDICT_MODES: VerdictMode[] = ['strict', 'recipe'];

export interface RecipeVerdict {
  /** null: unknown, because Lean never ran the code (our filter refused it before Lean). */
  valid: boolean | null;
  /** Why the strict verdict differs, when it does. */
  reason: string | null;
}

/** kimina-client's rule on the Lean answer behind a strict verdict; null verdict = nothing was extracted. */
export function recipeVerdictOf(verdict: Verdict | null): RecipeVerdict {
  if (!verdict) return { valid: false, reason: null };
  // Refused by our filter before Lean (no audit ran); an axiom-audit refusal did run in Lean and is judged below.
  if (verdict.status === 'rejected' && verdict.axioms === undefined)
    return { valid: null, reason: `not run in Lean: ${verdict.reason}` };
  if (verdict.status === 'timeout_error' || verdict.status === 'server_error' || verdict.status === 'repl_error')
    return { valid: false, reason: null };
  const valid = !verdict.messages.some((m) => m.severity === 'error') && verdict.sorries.length === 0;
  return {
    valid,
    reason: valid && verdict.status !== 'valid' ? `strict verdict ${verdict.status}: ${verdict.reason}` : null,
  };
}

export function parseVerdictMode(raw: string | undefined, fallback: VerdictMode = 'strict'): VerdictMode {
  if (raw === undefined) return fallback;
  if (raw !== 'strict' && raw !== 'recipe') throw new Error(`verdict mode must be strict or recipe, got '${raw}'`);
  return raw;
}

/** A verdict as the chosen mode gives it: in `recipe` mode the recipe rule's status, with the strict one beside it when they differ. */
export function verdictInMode(
  verdict: Verdict,
  mode: VerdictMode,
): Verdict & { mode: VerdictMode; strictStatus?: VerdictStatus } {
  if (mode === 'strict') return { ...verdict, mode };
  const recipe = recipeVerdictOf(verdict);
  if (recipe.valid !== true || verdict.status === 'valid') return { ...verdict, mode };
  return {
    ...verdict,
    mode,
    status: 'valid',
    strictStatus: verdict.status,
    reason: `Valid by kimina-client's rule (no error message, no sorries listed); ${recipe.reason}`,
  };
}
