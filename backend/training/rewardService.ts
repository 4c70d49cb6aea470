// The reward service: score = format reward (every assistant turn) x strict Lean verdict of the extracted proof,
// as the recipe's reward.py (kimina-format.md §5), batched for the trainer, with what the metrics need.
import type { FormatErrorName, RewardItem, RewardResult } from '../protocol';
import { checkConversation, FORMAT_ERROR_TEXT } from '../prover/format';
import { extractProof } from '../prover/extract';
import { buildFeedback } from '../prover/feedback';
import { splitThink } from '../prover/thinkStream';
import { QueueFull } from '../lean/errors';
import type { LeanVerifier } from '../lean/types';
import { recipeVerdictOf, type VerdictMode } from '../eval/verdictModes';

/** A scored answer: the trainer's result plus the thinking the monitor shows. */
export interface ScoredItem extends RewardResult { think: string }

/** Anything that scores a batch; the Lean-backed one below, or a test double. `mode` defaults to strict. */
export type RewardScorer = (items: RewardItem[], mode?: VerdictMode) => Promise<ScoredItem[]>;

export interface LeanRewardOptions {
  verifier: LeanVerifier;
  /** Seconds per Lean check (the recipe: 60). */
  timeoutS?: number;
  /** Lean checks in flight at once; the verifier's own queue bounds it too. */
  concurrency?: number;
}

export async function scoreItem(item: RewardItem, options: LeanRewardOptions, mode: VerdictMode = 'strict'): Promise<ScoredItem> {
  const messages = [...item.previous, item.response].map((content) => ({ role: 'assistant' as const, content }));
  const format = checkConversation(messages, item.formalStatement);
  const { think } = splitThink(item.response);
  const extraction = extractProof(item.response, item.formalStatement);
  if (!extraction.ok) {
    // The recipe's 'filtered proof.': nothing reaches Lean, no fix prompt.
    return { score: 0, acc: 0, formatError: format.error, formatErrorText: FORMAT_ERROR_TEXT[format.error], verdict: null, feedback: null, think, code: null };
  }
  const outcome = await checkWithRetry(options.verifier, extraction.code, options.timeoutS ?? 60);
  // recipe mode: kimina-client's rule on the same Lean answer (code our filter refused before Lean scores 0).
  const acc = (mode === 'recipe' ? recipeVerdictOf(outcome.verdict).valid === true : outcome.verdict.status === 'valid') ? 1 : 0;
  return {
    score: acc === 1 && format.ok ? 1 : 0,
    acc,
    formatError: format.error,
    formatErrorText: FORMAT_ERROR_TEXT[format.error],
    verdict: outcome.verdict.status,
    feedback: acc === 1 ? null : buildFeedback(extraction.code, outcome.verdict, outcome.response),
    think,
    code: extraction.code,
  };
}

async function checkWithRetry(verifier: LeanVerifier, code: string, timeout: number) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await verifier.check(code, { timeout });
    } catch (err) {
      if (!(err instanceof QueueFull) || attempt >= 20) throw err;
      await new Promise((r) => setTimeout(r, Math.min(5000, 250 * 2 ** attempt)));
    }
  }
}

/** Scores a batch with bounded concurrency; results keep the items' order. */
export function leanRewardScorer(options: LeanRewardOptions): RewardScorer {
  const limit = Math.max(1, options.concurrency ?? 8);
  return async (items, mode = 'strict') => {
    const out = new Array<ScoredItem>(items.length);
    let next = 0;
    const lane = async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await scoreItem(items[i], options, mode);
      }
    };
    await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
    return out;
  };
}

/**
 * Per-batch reward metrics with the recipe's names: `acc/turn_k` (Lean-valid share), `score/turn_k`,
 * `format_error/turn_k/<text>` counts (every error text present, zeros included) and `format_error_rate/turn_k`.
 */
export function rewardMetrics(items: RewardItem[], results: Pick<RewardResult, 'acc' | 'score' | 'formatError'>[]): Record<string, number> {
  const out: Record<string, number> = {};
  const turns = [...new Set(items.map((i) => i.turn))].sort();
  for (const turn of turns) {
    const idx = items.map((it, i) => (it.turn === turn ? i : -1)).filter((i) => i >= 0);
    const n = idx.length;
    const p = `turn_${turn}`;
    out[`acc/${p}`] = idx.reduce((s, i) => s + results[i].acc, 0) / n;
    out[`score/${p}`] = idx.reduce((s, i) => s + results[i].score, 0) / n;
    out[`count/${p}`] = n;
    for (const name of Object.keys(FORMAT_ERROR_TEXT) as FormatErrorName[]) out[`format_error/${p}/${FORMAT_ERROR_TEXT[name]}`] = 0;
    for (const i of idx) out[`format_error/${p}/${FORMAT_ERROR_TEXT[results[i].formatError]}`] += 1;
    out[`format_error_rate/${p}`] = 1 - out[`format_error/${p}/${FORMAT_ERROR_TEXT.NONE}`] / n;
  }
  return out;
}
