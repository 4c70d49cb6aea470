// `npm run bench:decode`: decode speed of our split-cache ONNX engine against llama.cpp (node-llama-cpp
// 3.21.1, Q4_0 GGUF) and transformers.js 4.3.2 (Optimum-style Concat-cache export), all on the same
// random weights at Qwen3-0.6B shapes with 4-bit matrices, 2 threads, rounds interleaved (the machine
// may be shared), each measurement the fastest 4 consecutive steps (bench/bestWindow.ts), min–max
// over rounds; the final ratios use the best of the rounds. Ends with `ratio@4096=<ours/llama.cpp> batch8=<8 rows / 1 row>`.
// Env: KIMINA_BENCH_ROUNDS (default 2), KIMINA_BENCH_STEPS (default 8), KIMINA_BENCH_THREADS (default 2),
// KIMINA_BENCH_ONLY=ours,llama,tfjs.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { CACHE_DIR, ensureOnnxModel } from './decodeModel';
import { measureOurs, openOurs } from './oursDecode';
import { ensureGguf, loadLlamaModule, measureLlama } from './llamaDecode';
import { ensureOptimumModel, loadTransformersModule, measureTransformers } from './transformersDecode';
import { maxEventLoopStall } from './responsiveness';

const POINTS = [32, 512, 2048, 4096];
const rounds = Number(process.env.KIMINA_BENCH_ROUNDS ?? 2);
const steps = Number(process.env.KIMINA_BENCH_STEPS ?? 12);
const threads = Number(process.env.KIMINA_BENCH_THREADS ?? 2);
const only = new Set((process.env.KIMINA_BENCH_ONLY ?? 'ours,llama,tfjs').split(','));
const log = (s: string) => console.error(s);

type Series = Map<number, number[]>;
const results: Record<string, Series> = { ours: new Map(), 'llama.cpp': new Map(), 'transformers.js': new Map() };
const add = (name: string, m: Map<number, number>) => {
  for (const [k, v] of m) results[name].set(k, [...(results[name].get(k) ?? []), v]);
};
const range = (xs: number[] | undefined) => (!xs || xs.length === 0 ? 'n/a' : Math.min(...xs) === Math.max(...xs) ? xs[0].toFixed(1) : `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`);
const best = (xs: number[] | undefined) => (xs && xs.length > 0 ? Math.max(...xs) : NaN);

async function main(): Promise<void> {
  const loadBefore = loadavg()[0];
  const oursDir = ensureOnnxModel(4, log);
  const llama = only.has('llama') ? await loadLlamaModule() : undefined;
  const tf = only.has('tfjs') ? await loadTransformersModule() : undefined;
  if (only.has('llama') && !llama) log('llama.cpp: node-llama-cpp is not installed (run bench/decode-setup); skipped');
  if (only.has('tfjs') && !tf) log('transformers.js: not installed (run bench/decode-setup); skipped');
  const gguf = llama ? ensureGguf(log) : '';
  const optimumDir = tf ? ensureOptimumModel(log) : '';
  const batch8: number[] = [];
  const batch1: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    log(`round ${r}/${rounds}`);
    if (only.has('ours')) {
      const { decoder, release } = await openOurs(oursDir, threads);
      const m = new Map<number, number>();
      for (const c of POINTS) m.set(c, (await measureOurs(decoder, c, 1, steps)).tokensPerSecond);
      add('ours', m);
      batch1.push((await measureOurs(decoder, 512, 1, steps)).tokensPerSecond);
      batch8.push((await measureOurs(decoder, 512, 8, steps)).tokensPerSecond);
      await release();
      log(`  ours: ${POINTS.map((c) => `${c}: ${m.get(c)!.toFixed(1)}`).join(', ')}; batch 8 at 512: ${batch8.at(-1)!.toFixed(1)} tok/s aggregate`);
    }
    if (llama) add('llama.cpp', await measureLlama(llama, gguf, POINTS, steps, threads, log));
    if (tf) add('transformers.js', await measureTransformers(tf, optimumDir, POINTS, steps, threads, log));
    if (only.has('ours')) {
      // Ours again at the end of the round, so each engine meets the same range of machine load.
      const { decoder, release } = await openOurs(oursDir, threads);
      const m = new Map<number, number>();
      for (const c of POINTS) m.set(c, (await measureOurs(decoder, c, 1, steps)).tokensPerSecond);
      add('ours', m);
      await release();
    }
  }
  const stall = { inThread: await maxEventLoopStall(oursDir, true, 12, threads), worker: await maxEventLoopStall(oursDir, false, 12, threads) };

  const load = `load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end, on ${cpus().length} cores`;
  console.log(`\ndecode tokens/s at N cached tokens (random Qwen3-0.6B-shaped weights, 4-bit, ${threads} threads, ${rounds} round(s), min–max; ${load})\n`);
  console.log(`| engine | ${POINTS.join(' | ')} |`);
  console.log(`|---|${POINTS.map(() => '---').join('|')}|`);
  for (const [name, series] of Object.entries(results)) {
    if (series.size > 0) console.log(`| ${name} | ${POINTS.map((c) => range(series.get(c))).join(' | ')} |`);
  }
  const ratio = best(results.ours.get(4096)) / best(results['llama.cpp'].get(4096));
  const b8 = best(batch8) / best(batch1);
  console.log(`\nours, 8 rows decoded together at 512 cached tokens: ${range(batch8)} tok/s aggregate vs ${range(batch1)} for 1 row`);
  console.log(`event loop stall while generating: ${stall.inThread.stallMs.toFixed(0)} ms on the calling thread, ${stall.worker.stallMs.toFixed(0)} ms with the worker thread`);
  writeFileSync(join(CACHE_DIR, 'decode-results.json'), JSON.stringify({
    date: new Date().toISOString(), threads, rounds, steps, load,
    results: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Object.fromEntries(v)])), batch1, batch8, stall,
  }, null, 2));
  console.log(`ratio@4096=${Number.isFinite(ratio) ? ratio.toFixed(2) : 'n/a'} batch8=${Number.isFinite(b8) ? b8.toFixed(2) : 'n/a'}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
