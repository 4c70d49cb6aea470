// Decoding one wave of a round: its lanes' conversations in one `engine.generate` call, streaming think/text
// deltas and progress (with the wave), and telling the caller when an answer's final `lean4` block is complete.
import type { Generation } from '../model/engine';
import type { ProveWave } from '../protocol';
import type { Lane, ProveContext } from './context';
import { ProveRequestError } from './request';
import { ThinkSplitter } from './thinkStream';

const CLOSE_THINK = '</think>';
const finalBlock = /```lean4\n[\s\S]*?\n```/;

export interface RoundGeneration {
  generations: Generation[];
  generateMs: number;
}

/** Calls `onComplete(k, text)` once per lane, when a strict `lean4` block after `</think>` has closed. */
class CompletionWatch {
  private readonly texts: string[];
  private readonly thinkEnd: number[];
  private readonly done: boolean[];
  constructor(
    n: number,
    private readonly onComplete: (k: number, text: string) => void,
  ) {
    this.texts = Array(n).fill('');
    this.thinkEnd = Array(n).fill(-1);
    this.done = Array(n).fill(false);
  }

  push(k: number, delta: string): void {
    if (this.done[k]) return;
    const before = this.texts[k].length;
    this.texts[k] += delta;
    const text = this.texts[k];
    if (this.thinkEnd[k] < 0) {
      const at = text.indexOf(CLOSE_THINK, Math.max(0, before - CLOSE_THINK.length));
      if (at < 0) return;
      this.thinkEnd[k] = at + CLOSE_THINK.length;
    } else if (!delta.includes('`')) return;
    if (finalBlock.test(text.slice(this.thinkEnd[k]))) {
      this.done[k] = true;
      this.onComplete(k, text);
    }
  }
}

/** The request's maxTokens, cut to what the model's context leaves after the longest prompt. */
async function tokenBudget(ctx: ProveContext, lanes: Lane[]): Promise<number> {
  const limit = ctx.deps.engine.maxContext;
  if (!limit) return ctx.settings.maxTokens;
  let longest = 0;
  for (const lane of lanes) longest = Math.max(longest, await ctx.deps.engine.countPromptTokens(lane.conversation));
  const room = limit - longest;
  if (room <= 0)
    throw new ProveRequestError(`the prompt (${longest} tokens) does not fit the model's context of ${limit} tokens`);
  return Math.min(ctx.settings.maxTokens, room);
}

export async function generateRound(
  ctx: ProveContext,
  lanes: Lane[],
  signal: AbortSignal,
  onComplete: (k: number, text: string) => void,
  wave?: ProveWave,
  /** The wave's first lane in its round: engines draw row r from (seed, r), so a later wave's seed moves on by it. */
  seedOffset = 0,
): Promise<RoundGeneration> {
  const splitters = lanes.map(() => new ThinkSplitter());
  const watch = new CompletionWatch(lanes.length, onComplete);
  const started = Date.now();
  let roundTokens = 0;
  let lastProgress = 0;
  const relay = (k: number, parts: { think: string; text: string }) => {
    const { sample, turn } = lanes[k];
    if (parts.think) ctx.emit({ type: 'think', id: ctx.id, sample, turn, delta: parts.think });
    if (parts.text) ctx.emit({ type: 'text', id: ctx.id, sample, turn, delta: parts.text });
  };
  const progress = (force: boolean) => {
    const now = Date.now();
    if (!force && now - lastProgress < 250) return;
    lastProgress = now;
    const seconds = Math.max(1e-3, (now - started) / 1000);
    ctx.tokensPerSecond = roundTokens / seconds;
    ctx.emit({
      type: 'progress',
      id: ctx.id,
      tokens: ctx.tokens,
      tokensPerSecond: ctx.tokensPerSecond,
      ...(wave ? { wave } : {}),
    });
  };
  // A wave after the first says so before its first token (a terminal follows one of its samples from there).
  if (wave && wave.index > 1)
    ctx.emit({ type: 'progress', id: ctx.id, tokens: ctx.tokens, tokensPerSecond: ctx.tokensPerSecond ?? 0, wave });
  const maxTokens = await tokenBudget(ctx, lanes);
  const generations = await ctx.deps.engine.generate(
    lanes.map((l) => l.conversation),
    {
      maxTokens,
      temperature: ctx.settings.temperature,
      topP: ctx.settings.topP,
      seed: ctx.deps.options?.seed === undefined ? undefined : ctx.deps.options.seed + seedOffset,
      signal,
    },
    (k, delta) => {
      if (k < 0 || k >= lanes.length) return;
      roundTokens++;
      ctx.tokens++;
      relay(k, splitters[k].push(delta));
      watch.push(k, delta);
      progress(false);
    },
  );
  if (generations.length !== lanes.length)
    throw new Error(`the engine returned ${generations.length} answers for ${lanes.length} prompts`);
  splitters.forEach((s, k) => relay(k, s.flush()));
  // Engines report exact token counts at the end; the streamed count was one per delta.
  const exact = generations.reduce((n, g) => n + g.tokens, 0);
  ctx.tokens += exact - roundTokens;
  roundTokens = exact;
  progress(true);
  return { generations, generateMs: Date.now() - started };
}
