// Verdict modes (of an evaluation, a training reward). `strict` (the default) is our verifier's verdict. `recipe` is kimina-client's
// rule, with which the published Kimina-Prover-RL figures were counted (`ReplResponse.analyze`): Lean answered,
// no message of severity error, and an empty `sorries` list. Nothing else is looked at: no axiom audit, no
// `admit`/`sorryAx` warning, no refusal of code that can change the rules.
// Every check is judged both ways from the one Lean answer the strict check already holds, so a report can give
// both figures and list what only the recipe rule accepts (a direct measure of what the strict verdict refuses).
// Each mode is one entry of `verdictModeRules`, keyed by the protocol's enum (so the compiler refuses a missing
// mode); every user (the reward, per-declaration checks, `kimina check` and its help, evaluation's per-mode
// judgements, metrics, reports and CLI summaries, comparability, request checks) iterates or asks the rules instead
// of comparing names. test/registries.test.ts checks the Python trainer's list and refuses a mode name compared
// as a literal anywhere else.
import { verdictModes, type ModeJudgement, type Verdict, type VerdictMode, type VerdictStatus } from '../protocol';

export type { VerdictMode } from '../protocol';
export const VERDICT_MODES: readonly VerdictMode[] = verdictModes;
/**
 * The mode of a request, a run or a check that names none: the verifier's own verdict. An evaluation record's
 * `valid` flag is this mode's judgement, so its figures are known even for runs stored before per-mode judgements.
 */
export const DEFAULT_VERDICT_MODE: VerdictMode = verdictModes[0];

/** kimina-client's rule on one answer (`valid` null: unknown, Lean never ran the code). */
export type RecipeVerdict = ModeJudgement;

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

export type VerdictInMode = Verdict & { mode: VerdictMode; strictStatus?: VerdictStatus };

/** What one verdict mode means, for every part that judges, counts or reports by mode. */
export interface VerdictModeRule {
  /** Whether an answer with this (strict) verdict counts as proved: the training reward, pass@k. */
  accepts(verdict: Verdict | null): boolean;
  /**
   * The same with its reason, as an evaluation stores it per answer (`EvalAttemptRecord.modes`): `valid` null when
   * this mode cannot tell (the answer never reached Lean), `reason` why the default mode's verdict differs.
   */
  judge(verdict: Verdict | null): ModeJudgement;
  /** The verdict as this mode gives it (the HTTP check's `mode`). */
  inMode(verdict: Verdict): VerdictInMode;
  /** Per-declaration checks audit each declaration's axioms and `sorry` warnings (lean/perDeclaration.ts). */
  auditsDeclarations: boolean;
  /** Counted the way the published Kimina-Prover-RL table was (eval/comparable.ts). */
  publishedRule: boolean;
  /** After `kimina check`'s count, e.g. " (recipe verdict: kimina-client's rule)". */
  countNote: string;
  /** Beside the mode's name in a report. */
  reportNote: string;
  /** How reports and summaries name it: "the strict verdict", "the recipe rule". */
  name: string;
  /** Whose rule it is: "ours", "kimina-client". */
  by: string;
  /** What it accepts, in a few words (reports). */
  criteria: string;
  /** Its lines in `kimina check --help` and `kimina eval --help`, after `--verdict NAME: `. */
  help: string;
}

export const verdictModeRules: Record<VerdictMode, VerdictModeRule> = {
  strict: {
    accepts: (verdict) => verdict?.status === 'valid',
    judge: (verdict) => ({ valid: verdict?.status === 'valid', reason: null }),
    inMode: (verdict) => ({ ...verdict, mode: 'strict' }),
    auditsDeclarations: true,
    publishedRule: false,
    countNote: '',
    reportNote: ' (ours: no sorry, audited axioms)',
    name: 'strict verdict',
    by: 'ours',
    criteria: 'no sorry in any form, audited axioms',
    help: 'no sorry in any form, audited axioms, no native_decide.',
  },
  recipe: {
    accepts: (verdict) => recipeVerdictOf(verdict).valid === true,
    judge: (verdict) => recipeVerdictOf(verdict),
    inMode: (verdict) => recipeInMode(verdict),
    auditsDeclarations: false,
    publishedRule: true,
    countNote: " (recipe verdict: kimina-client's rule)",
    reportNote: " (kimina-client's rule)",
    name: 'recipe rule',
    by: 'kimina-client',
    criteria: 'no Lean error, no entry in `sorries`',
    help: "kimina-client's rule, with which the published Kimina-Prover-RL figures were counted\n  (no error message, no sorry the REPL lists; nothing audited).",
  },
};

export function isVerdictMode(raw: unknown): raw is VerdictMode {
  return typeof raw === 'string' && Object.hasOwn(verdictModeRules, raw);
}

export function parseVerdictMode(raw: string | undefined, fallback: VerdictMode = DEFAULT_VERDICT_MODE): VerdictMode {
  if (raw === undefined) return fallback;
  if (!isVerdictMode(raw)) throw new Error(`verdict mode must be ${VERDICT_MODES.join(' or ')}, got '${raw}'`);
  return raw;
}

/** The modes, as a help text's choice: `strict|recipe`. */
export const verdictModeChoice = (): string => VERDICT_MODES.join('|');

/** The modes' help lines, `--verdict NAME (default): …`, one or more lines each. */
export function verdictModeHelp(): string {
  return VERDICT_MODES.map(
    (m) => `--verdict ${m}${m === DEFAULT_VERDICT_MODE ? ' (default)' : ''}: ${verdictModeRules[m].help}`,
  ).join('\n');
}

/** A verdict as the chosen mode gives it: in `recipe` mode the recipe rule's status, with the strict one beside it when they differ. */
export function verdictInMode(verdict: Verdict, mode: VerdictMode): VerdictInMode {
  return verdictModeRules[mode].inMode(verdict);
}

function recipeInMode(verdict: Verdict): VerdictInMode {
  const mode = 'recipe';
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
