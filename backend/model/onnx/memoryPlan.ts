// What the in-process engine decodes with by default (KIMINA_KV_CACHE=auto) on a machine of a given memory, at
// the recipe's longest answers (24,576 tokens): the C API path's float32 cache where one such answer fits half
// the memory beside the weights, else the split graph's float16; and the row counts the scheduler may choose
// from, those whose caches all fit there (schedule.ts, rowsThatFit).
import { RECIPE_ANSWERS, rowsThatFit } from '../schedule';

type CachePrecision = 'fp32' | 'fp16' | 'int8';

/** The shape fields a KV cache's size depends on. */
interface CacheShape {
  layers: number;
  kvHeads: number;
  headDim: number;
}

/** Bytes one token of one row takes in the cache: keys and values of every layer. */
export function cacheBytesPerToken(shape: CacheShape, precision: CachePrecision): number {
  return shape.layers * 2 * shape.kvHeads * shape.headDim * { fp32: 4, fp16: 2, int8: 1 }[precision];
}

/** Rows of the recipe's longest answers whose caches fit half the memory beside the weights. */
export function recipeRowsThatFit(
  shape: CacheShape,
  precision: CachePrecision,
  weightBytes: number,
  totalMemory: number,
): number {
  return rowsThatFit(cacheBytesPerToken(shape, precision), RECIPE_ANSWERS.maxTokens, totalMemory, weightBytes);
}

/** The row counts the scheduler chooses among: 1, 2, 4, 8, those that fit (one at the least). */
export function rowCandidates(fit: number): number[] {
  return [1, 2, 4, 8].filter((r) => r <= Math.max(1, fit));
}

export interface DefaultPlan {
  path: 'c-api-gqa' | 'node-split';
  cache: 'fp32' | 'fp16';
  /** Row counts the scheduler may choose; the split path has no calibration and decodes a round at once. */
  candidates: number[];
}

/** The default where the model folder has the C API path's graph and speculation is off (its default). */
export function defaultPlan(shape: CacheShape, weightBytes: number, totalMemory: number): DefaultPlan {
  const fp32 = recipeRowsThatFit(shape, 'fp32', weightBytes, totalMemory);
  if (fp32 >= 1) return { path: 'c-api-gqa', cache: 'fp32', candidates: rowCandidates(fp32) };
  return {
    path: 'node-split',
    cache: 'fp16',
    candidates: rowCandidates(recipeRowsThatFit(shape, 'fp16', weightBytes, totalMemory)),
  };
}
