// Resident memory of the ONNX engine with 8 rows × 8,192 tokens of KV cache, for the Qwen3-0.6B and
// 1.7B shapes at 4-bit, with the float32 and the float16 cache; and what the float16 cache costs in
// speed (1 row at 4096 cached tokens, 8 rows at 512). Each memory figure comes from its own process
// (peak resident set, VmHWM), which loads the model, fills the cache (every page written, as a long
// decode would) and decodes a few steps. With a shared prompt (pass@n's rows of one proof, or of its fix
// turn, whose prompt holds the first answer): each row's 8,192 positions are a 4,096-token prompt held
// once (the shared prefix) and 4,096 tokens of its own.
// `node --import tsx bench/memoryDecode.ts` prints the table; bench/decode.ts runs it as its `memory` part.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { ensureOnnxModel, QWEN3_06B, QWEN3_17B } from './decodeModel';
import { measureOurs, openOurs, stateWithCached, stateWithShared } from './oursDecode';
import { KvCache } from '../backend/model/onnx/kvCache';
import type { Qwen3Shape } from '../backend/model/onnx/qwen3Config';

export const MEMORY_ROWS = 8;
export const MEMORY_TOKENS = 8192;
/** The shared prompt's length in the shared-prompt rows (the rest of each row's positions is its own). */
export const MEMORY_SHARED_PROMPT = 4096;
const GIB = 2 ** 30;
const shapes: Record<string, Qwen3Shape> = { '0.6B': QWEN3_06B, '1.7B': QWEN3_17B };

interface ChildResult {
  peakBytes: number;
  rssBytes: number;
  cacheBytes: number;
  msPerStep: number;
}

function peakResident(): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.memoryUsage().rss;
}

/** In the child: one model, one cache precision, 8 rows × 8,192 tokens. */
async function child(
  size: string,
  kvCache: 'fp32' | 'fp16',
  threads: number,
  accuracyLevel: number,
  layout: Layout,
): Promise<ChildResult> {
  const dir = ensureOnnxModel(accuracyLevel, () => undefined, shapes[size]);
  const { decoder, release } = await openOurs(dir, threads, kvCache);
  const state =
    layout === 'shared'
      ? stateWithShared(decoder, MEMORY_ROWS, MEMORY_SHARED_PROMPT, MEMORY_TOKENS - MEMORY_SHARED_PROMPT - 4, 4)
      : stateWithCached(decoder, MEMORY_ROWS, MEMORY_TOKENS - 4, 4);
  const token = () => Array.from({ length: MEMORY_ROWS }, (_, b) => [100 + b]);
  await decoder.feed(state, token());
  const t = performance.now();
  for (let i = 0; i < 2; i++) await decoder.feed(state, token());
  const msPerStep = (performance.now() - t) / 2;
  const arrays = [state.cache, ...(state.shared ? [state.shared] : [])].flatMap((c) => [...c.keys, ...c.values]);
  const cacheBytes = arrays.reduce((a, k) => a + k.byteLength, 0);
  const result = { peakBytes: peakResident(), rssBytes: process.memoryUsage().rss, cacheBytes, msPerStep };
  await release();
  return result;
}

export type Layout = 'own' | 'shared';

export interface MemoryRow {
  size: string;
  kvCache: 'fp32' | 'fp16';
  layout: Layout;
  result?: ChildResult;
  error?: string;
}

/** Each (size, precision) in its own process; sizes' models are written first (in this process). */
export function measureMemory(
  threads: number,
  accuracyLevel: number,
  log: (s: string) => void,
  layouts: readonly Layout[] = ['own', 'shared'],
): MemoryRow[] {
  const rows: MemoryRow[] = [];
  for (const size of Object.keys(shapes)) {
    ensureOnnxModel(accuracyLevel, log, shapes[size]);
    const runs = (['fp32', 'fp16'] as const).flatMap((kvCache) =>
      (size === '0.6B' ? (['own', 'shared'] as const) : (['own'] as const))
        .filter((layout) => layouts.includes(layout))
        .map((layout) => ({ kvCache, layout })),
    );
    for (const { kvCache, layout } of runs) {
      const need = KvCache.bytesPerToken({ ...shapes[size], half: kvCache === 'fp16' }) * MEMORY_ROWS * MEMORY_TOKENS;
      if (need > 0.8 * totalmem()) {
        rows.push({
          size,
          kvCache,
          layout,
          error: `not run: the cache alone needs ${(need / GIB).toFixed(1)} GiB of this machine's ${(totalmem() / GIB).toFixed(1)} GiB`,
        });
        continue;
      }
      try {
        const out = execFileSync(
          process.execPath,
          ['--import', 'tsx', __filename, 'child', size, kvCache, String(threads), String(accuracyLevel), layout],
          { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 1 << 20 },
        );
        rows.push({ size, kvCache, layout, result: JSON.parse(out.trim().split('\n').at(-1)!) as ChildResult });
      } catch (e) {
        const err = e as { signal?: string; status?: number };
        rows.push({
          size,
          kvCache,
          layout,
          error: err.signal === 'SIGKILL' ? 'killed (out of memory?)' : `failed (${err.signal ?? err.status})`,
        });
      }
      const r = rows.at(-1)!;
      log(
        `  memory ${size} ${kvCache} ${layout}: ${r.result ? `peak ${(r.result.peakBytes / GIB).toFixed(2)} GiB, ${r.result.msPerStep.toFixed(0)} ms per step of ${MEMORY_ROWS} rows` : r.error}`,
      );
    }
  }
  return rows;
}

/** tokens/s with each cache: 1 row at 4096 cached tokens, 8 rows at 512 (0.6B shape). */
export async function measureHalfCost(
  dir: string,
  threads: number,
  steps: number,
): Promise<Record<string, { fp32: number; fp16: number }>> {
  const out: Record<string, { fp32: number; fp16: number }> = {};
  for (const [label, cached, rows] of [
    ['1 row @4096', 4096, 1],
    ['8 rows @512', 512, 8],
  ] as const) {
    const m = { fp32: 0, fp16: 0 };
    for (const kv of ['fp32', 'fp16'] as const) {
      const { decoder, release } = await openOurs(dir, threads, kv);
      m[kv] = (await measureOurs(decoder, cached, rows, steps)).tokensPerSecond;
      await release();
    }
    out[label] = m;
  }
  return out;
}

export function memoryTable(rows: MemoryRow[]): string {
  const gib = (b: number) => `${(b / GIB).toFixed(2)} GiB`;
  const prompt = (l: Layout) => (l === 'shared' ? `${MEMORY_SHARED_PROMPT} tokens shared` : 'each its own');
  const lines = [
    `| shape | KV cache | rows' prompt | cache (${MEMORY_ROWS} × ${MEMORY_TOKENS} tokens) | peak resident | fits 16 GB (peak ≤ 13 GiB, leaving 3 for the system and editor) | ms per step of ${MEMORY_ROWS} rows |`,
    '|---|---|---|---|---|---|---|',
  ];
  for (const r of rows) {
    lines.push(
      r.result
        ? `| ${r.size} | ${r.kvCache} | ${prompt(r.layout)} | ${gib(r.result.cacheBytes)} | ${gib(r.result.peakBytes)} | ${r.result.peakBytes <= 13 * GIB ? 'yes' : 'no'} | ${r.result.msPerStep.toFixed(0)} |`
        : `| ${r.size} | ${r.kvCache} | ${prompt(r.layout)} | | ${r.error} | | |`,
    );
  }
  return lines.join('\n');
}

if (require.main === module) {
  const [mode, size, kv, threads, level, layout] = process.argv.slice(2);
  const run =
    mode === 'child'
      ? child(size, kv as 'fp32' | 'fp16', Number(threads), Number(level), layout as Layout).then((r) =>
          console.log(JSON.stringify(r)),
        )
      : (async () => {
          const t = Number(process.env.KIMINA_BENCH_THREADS ?? 2);
          const rows = measureMemory(t, Number(process.env.KIMINA_BENCH_ACCURACY ?? 4), (s) => console.error(s));
          console.log(memoryTable(rows));
        })();
  run.catch((e) => {
    console.error(e);
    process.exit(1);
  });
}
