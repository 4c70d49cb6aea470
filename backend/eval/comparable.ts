// Whether a run's figure may stand beside the published Kimina-Prover-RL table (training-recipe.md §11.1:
// RL-1.7B 76.23 % pass@32 and 77.87 % with one error-fix turn; RL-0.6B 71.30 %), and why not when it may not.
// The published figures: AI-MO/minif2f_test (244 problems, informal statements in the prompt), 32 samples,
// kimina-client's verdict, on the Lean of kimina-lean-server 2.0.0, answers up to 24,576 tokens.
import { existsSync, readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import type { Comparability, EvalConfig } from '../protocol';
import { DEFAULT_VERDICT_MODE, VERDICT_MODES, verdictModeRules } from '../lean/verdictModes';
import { MINIF2F_TEST_REPO, MINIF2F_TEST_ROWS, PUBLISHED_LEAN } from './recipeBenchmark';
import { BUILTIN_MINIF2F_NAME, BUILTIN_MINIF2F_NOT_PUBLISHED, isBuiltinMinif2f } from './builtin';

const PUBLISHED_SAMPLES = 32;
const PUBLISHED_MAX_TOKENS = 24576;

/**
 * The benchmark's name: AI-MO/minif2f_test for the file `kimina eval fetch` writes (minif2f_test.jsonl), the built-in
 * miniF2F-lean4's name for the repository's copy (data/minif2f-lean4), else the file or folder name.
 */
export function benchmarkName(path: string): string {
  const p = resolve(path);
  if (basename(p) === 'minif2f_test.jsonl') return MINIF2F_TEST_REPO;
  return isBuiltinMinif2f(p) ? BUILTIN_MINIF2F_NAME : basename(p);
}

/** The Lean version of a Lean project (its lean-toolchain), e.g. v4.15.0; null when unknown. */
export function leanVersionOf(project: string | undefined): string | null {
  if (!project) return null;
  const file = join(project, 'lean-toolchain');
  if (!existsSync(file)) return null;
  const text = readFileSync(file, 'utf8').trim();
  return /:(v?[\w.-]+)$/.exec(text)?.[1] ?? (text || null);
}

export function comparability(config: EvalConfig, problems: number): Comparability {
  const why: string[] = [];
  const name = config.benchmarkName ?? benchmarkName(config.benchmark);
  if (name === BUILTIN_MINIF2F_NAME || isBuiltinMinif2f(config.benchmark)) why.push(BUILTIN_MINIF2F_NOT_PUBLISHED);
  else if (name !== MINIF2F_TEST_REPO)
    why.push(
      `the benchmark is ${config.benchmarkName ?? benchmarkName(config.benchmark)}, not ${MINIF2F_TEST_REPO} (kimina eval fetch)`,
    );
  else if (problems !== MINIF2F_TEST_ROWS) why.push(`${problems} of the ${MINIF2F_TEST_ROWS} problems were measured`);
  if (config.samples < PUBLISHED_SAMPLES)
    why.push(`${config.samples} samples per problem; the table is pass@${PUBLISHED_SAMPLES}`);
  const mode = config.verdictMode ?? DEFAULT_VERDICT_MODE;
  if (!verdictModeRules[mode].publishedRule)
    why.push(
      `the headline uses the ${verdictModeRules[mode].name}; the table counted with kimina-client's rule (--verdict ${VERDICT_MODES.filter((m) => verdictModeRules[m].publishedRule).join('|')}; every mode's figures are in this report)`,
    );
  if (!config.lean)
    why.push(`the Lean version is unknown; the table used kimina-lean-server 2.0.0's Lean ${PUBLISHED_LEAN}`);
  else if (config.lean !== PUBLISHED_LEAN)
    why.push(
      `Lean ${config.lean}; the table used ${PUBLISHED_LEAN} (kimina-lean-server 2.0.0), and newer Mathlib renames lemmas the models learned`,
    );
  if (config.maxTokens < PUBLISHED_MAX_TOKENS)
    why.push(`answers are cut at ${config.maxTokens} tokens; the recipe allows ${PUBLISHED_MAX_TOKENS}`);
  if (config.fixTurns > 0 && config.goals)
    why.push("fix-turn feedback carries goal states, which the recipe's feedback never had (drop --goals)");
  return why.length === 0
    ? {
        comparable: true,
        why: `${MINIF2F_TEST_REPO}, pass@${PUBLISHED_SAMPLES}, kimina-client's rule, Lean ${PUBLISHED_LEAN}, as the published table`,
      }
    : { comparable: false, why: why.join('; ') };
}
