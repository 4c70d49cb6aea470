// The reward service: score = format reward (every assistant turn) x strict Lean verdict of the extracted proof,
// as the recipe's reward.py (kimina-format.md §5), batched for the trainer, with what the metrics need.
import type { FormatErrorName, RewardItem, RewardResult } from '../protocol';
import { checkConversation, FORMAT_ERROR_TEXT } from '../prover/format';
import { extractProof } from '../prover/extract';
import { buildFeedback } from '../prover/feedback';
import { splitThink } from '../prover/thinkStream';
import { trustedTheoremName } from '../prover/trustedName';
import type { CheckOutcome, LeanVerifier } from '../lean/types';
import type { BatchVerifier } from '../lean/verifier';
import { DEFAULT_VERDICT_MODE, verdictModeRules, type VerdictMode } from '../lean/verdictModes';

/** A scored answer: the trainer's result plus the thinking the monitor shows. */
export interface ScoredItem extends RewardResult {
  think: string;
}

/** Who asks for a score, for the verifier's fair sharing (lean/admission.ts). */
interface ScoreContext {
  client?: string;
  /** `strict` (default): our verdict; `recipe`: kimina-client's rule on the same Lean answer. */
  mode?: VerdictMode;
}

/** Anything that scores a batch; the Lean-backed one below, or a test double. */
export type RewardScorer = (items: RewardItem[], context?: ScoreContext) => Promise<ScoredItem[]>;

/**
 * Answers per reward request, at most (the verl recipe and the local trainer send 64; more is refused with 413):
 * the admission's default batch limit (KIMINA_MAX_BATCH), so an accepted request is never too large to admit.
 */
export const MAX_REWARD_ITEMS = 128;

export interface LeanRewardOptions {
  /** With checkBatch (the server's admission), a request's checks are admitted together or refused together. */
  verifier: LeanVerifier & Partial<Pick<BatchVerifier, 'checkBatch'>>;
  /** Seconds per Lean check (the recipe: 60). */
  timeoutS?: number;
  /** Lean checks in flight at once when the verifier has no checkBatch. */
  concurrency?: number;
}

interface Prepared {
  format: ReturnType<typeof checkConversation>;
  think: string;
  code: string | null;
  /** The trusted statement's theorem, always audited (an answer cannot rename, sorry or shadow it unseen). */
  theorems: string[] | undefined;
}

function prepare(item: RewardItem): Prepared {
  const messages = [...item.previous, item.response].map((content) => ({ role: 'assistant' as const, content }));
  const format = checkConversation(messages, item.formalStatement);
  const { think } = splitThink(item.response);
  const extraction = extractProof(item.response, item.formalStatement);
  const trusted = trustedTheoremName(item.formalStatement);
  return { format, think, code: extraction.ok ? extraction.code : null, theorems: trusted ? [trusted] : undefined };
}

function scored(p: Prepared, outcome: CheckOutcome | null, mode: VerdictMode = DEFAULT_VERDICT_MODE): ScoredItem {
  const base = { formatError: p.format.error, formatErrorText: FORMAT_ERROR_TEXT[p.format.error], think: p.think };
  // The recipe's 'filtered proof.': nothing reaches Lean, no fix prompt.
  if (p.code === null || outcome === null)
    return { ...base, score: 0, acc: 0, verdict: null, feedback: null, code: null };
  // recipe mode: kimina-client's rule on the same Lean answer (code our filter refused before Lean scores 0).
  const acc = verdictModeRules[mode].accepts(outcome.verdict) ? 1 : 0;
  return {
    ...base,
    score: acc === 1 && p.format.ok ? 1 : 0,
    acc,
    verdict: outcome.verdict.status,
    feedback: acc === 1 ? null : buildFeedback(p.code, outcome.verdict, outcome.response),
    code: p.code,
  };
}

async function scoreItem(
  item: RewardItem,
  options: LeanRewardOptions,
  context: ScoreContext = {},
): Promise<ScoredItem> {
  const p = prepare(item);
  if (p.code === null) return scored(p, null);
  return scored(
    p,
    await options.verifier.check(p.code, {
      timeout: options.timeoutS ?? 60,
      client: context.client,
      theorems: p.theorems,
    }),
    context.mode,
  );
}

/**
 * Scores a batch; results keep the items' order. A full verifier queue is not retried here: QueueFull reaches the
 * client as HTTP 429 with Retry-After, and the client decides when to come back.
 */
export function leanRewardScorer(options: LeanRewardOptions): RewardScorer {
  const limit = Math.max(1, options.concurrency ?? 8);
  return async (items, context = {}) => {
    if (items.length > MAX_REWARD_ITEMS)
      throw new Error(`at most ${MAX_REWARD_ITEMS} answers per reward request, got ${items.length}`);
    const prepared = items.map(prepare);
    const checkBatch = options.verifier.checkBatch?.bind(options.verifier);
    if (checkBatch) {
      const toCheck = prepared.flatMap((p, i) => (p.code === null ? [] : [i]));
      const outcomes = await checkBatch(
        toCheck.map((i) => prepared[i].code!),
        {
          timeout: options.timeoutS ?? 60,
          client: context.client,
          theoremsEach: toCheck.map((i) => prepared[i].theorems),
        },
      );
      const byItem = new Map(toCheck.map((i, k) => [i, outcomes[k]]));
      return prepared.map((p, i) => scored(p, byItem.get(i) ?? null, context.mode));
    }
    const out = new Array<ScoredItem>(items.length);
    let next = 0;
    const lane = async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await scoreItem(items[i], options, context);
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
export function rewardMetrics(
  items: RewardItem[],
  results: Pick<RewardResult, 'acc' | 'score' | 'formatError'>[],
): Record<string, number> {
  const out: Record<string, number> = {};
  const turns = [...new Set(items.map((i) => i.turn))].sort();
  for (const turn of turns) {
    const idx = items.map((it, i) => (it.turn === turn ? i : -1)).filter((i) => i >= 0);
    const n = idx.length;
    const p = `turn_${turn}`;
    out[`acc/${p}`] = idx.reduce((s, i) => s + results[i].acc, 0) / n;
    out[`score/${p}`] = idx.reduce((s, i) => s + results[i].score, 0) / n;
    out[`count/${p}`] = n;
    for (const name of Object.keys(FORMAT_ERROR_TEXT) as FormatErrorName[])
      out[`format_error/${p}/${FORMAT_ERROR_TEXT[name]}`] = 0;
    for (const i of idx) out[`format_error/${p}/${FORMAT_ERROR_TEXT[results[i].formatError]}`] += 1;
    out[`format_error_rate/${p}`] = 1 - out[`format_error/${p}/${FORMAT_ERROR_TEXT.NONE}`] / n;
  }
  return out;
}
