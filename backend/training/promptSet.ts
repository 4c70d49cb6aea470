// The prompt set as the recipe builds it (training-recipe.md §5): estimate each prompt's win rate with the
// current model, drop the easy ones (> 0.5), duplicate the hard ones, and split train / held-out by statement.
import { createHash } from 'node:crypto';
import type { ChatMessage, TrainingPrompt } from '../protocol';
import type { Engine, SamplingOptions } from '../model/engine';
import type { RewardScorer } from './rewardService';

export function statementKey(statement: string): string {
  return statement.replace(/\s+/g, ' ').trim();
}

/** A stable number in [0, 1) per statement, so the split does not move when prompts are added. */
export function splitFraction(statement: string, seed = 0): number {
  const h = createHash('sha256')
    .update(`${seed}:${statementKey(statement)}`)
    .digest();
  return h.readUInt32BE(0) / 2 ** 32;
}

export function splitHeldOut<T extends TrainingPrompt>(
  prompts: T[],
  share: number,
  seed = 0,
): { train: T[]; heldOut: T[] } {
  const train: T[] = [];
  const heldOut: T[] = [];
  for (const p of prompts) (splitFraction(p.formalStatement, seed) < share ? heldOut : train).push(p);
  if (train.length === 0 && heldOut.length > 0) train.push(heldOut.pop() as T);
  return { train, heldOut };
}

export interface WinRateOptions {
  engine: Pick<Engine, 'generate'>;
  scorer: RewardScorer;
  samples: number;
  sampling: SamplingOptions;
}

/** Win rate of each prompt: the share of `samples` answers that score 1 (format and Lean). */
export async function estimateWinRates(prompts: TrainingPrompt[], options: WinRateOptions): Promise<number[]> {
  const rates: number[] = [];
  for (const p of prompts) {
    const conversations: ChatMessage[][] = Array.from({ length: options.samples }, () => p.prompt);
    const gens = await options.engine.generate(conversations, options.sampling);
    const scored = await options.scorer(
      gens.map((g) => ({
        promptId: p.id,
        turn: 1,
        formalStatement: p.formalStatement,
        previous: [],
        response: g.text,
      })),
    );
    rates.push(scored.reduce((s, r) => s + r.score, 0) / Math.max(1, scored.length));
  }
  return rates;
}

export interface FilterOptions {
  /** Prompts the model already wins more often than this are dropped (the recipe: 0.5). */
  maxWinRate: number;
  /** Prompts never won are repeated this many times in total (1 = no duplication). */
  hardCopies: number;
}

export function filterByWinRate<T extends TrainingPrompt>(prompts: T[], rates: number[], options: FilterOptions): T[] {
  if (rates.length !== prompts.length) throw new Error(`${rates.length} win rates for ${prompts.length} prompts`);
  const out: T[] = [];
  prompts.forEach((p, i) => {
    const rate = rates[i];
    if (rate > options.maxWinRate) return;
    const copies = rate === 0 ? Math.max(1, options.hardCopies) : 1;
    for (let c = 0; c < copies; c++) out.push({ ...p, id: c === 0 ? p.id : `${p.id}#${c + 1}`, winRate: rate });
  });
  return out;
}

/** JSON Lines rows the Python trainer reads (prompt_id, prompt, formal_statement). */
export function trainerRows(prompts: TrainingPrompt[]): string {
  return (
    prompts
      .map((p) => JSON.stringify({ prompt_id: p.id, prompt: p.prompt, formal_statement: p.formalStatement }))
      .join('\n') + (prompts.length ? '\n' : '')
  );
}
