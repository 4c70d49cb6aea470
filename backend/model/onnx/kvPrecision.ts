// Which KV cache the engine decodes with: float32 (fastest on CPUs) or float16 (half the memory).
import { KvCache, type CacheShape } from './kvCache';

/** int8: the C API path's GQA graph with an int8 cache (kvInt8.ts); elsewhere the split graph's float16. */
type KvCachePrecision = 'fp32' | 'fp16' | 'int8';
export type KvCacheSetting = KvCachePrecision | 'auto';

/** What 'auto' plans for: 8 samples (pass@8 on one theorem) of 8,192 tokens each. */
const AUTO_ROWS = 8;
const AUTO_TOKENS = 8192;
/** 'auto' takes float16 when the float32 cache of AUTO_ROWS × AUTO_TOKENS would exceed this share of memory. */
const AUTO_MEMORY_SHARE = 0.4;

export interface KvCacheChoice {
  precision: KvCachePrecision;
  why: string;
}

const gib = (bytes: number) => `${(bytes / 2 ** 30).toFixed(1)} GiB`;

export function chooseKvCache(
  setting: KvCacheSetting,
  shape: Omit<CacheShape, 'half'>,
  totalMemory: number,
): KvCacheChoice {
  if (setting !== 'auto') return { precision: setting, why: 'KIMINA_KV_CACHE' };
  const need = KvCache.bytesPerToken(shape) * AUTO_ROWS * AUTO_TOKENS;
  const limit = AUTO_MEMORY_SHARE * totalMemory;
  return need > limit
    ? {
        precision: 'fp16',
        why: `a float32 cache of ${AUTO_ROWS} × ${AUTO_TOKENS} tokens takes ${gib(need)}, more than ${AUTO_MEMORY_SHARE * 100}% of ${gib(totalMemory)}`,
      }
    : {
        precision: 'fp32',
        why: `a float32 cache of ${AUTO_ROWS} × ${AUTO_TOKENS} tokens takes ${gib(need)}, within ${AUTO_MEMORY_SHARE * 100}% of ${gib(totalMemory)}`,
      };
}
