// `npm run bench:decode:keys`: issue 32's comparison at the lengths a Kimina answer passes through, every
// comparator at its best settings per point. One row decoding, 2 threads, random weights at Qwen3-0.6B shapes
// with 4-bit matrices, engines interleaved within each round (the machine may be shared), each figure the
// fastest 4 consecutive steps (bestWindow.ts), median over rounds:
// - ours, the C API path (GroupQueryAttention, cache appended in place), float32 and int8 cache;
// - ours, the split-cache path through onnxruntime-node (the fallback);
// - llama.cpp (node-llama-cpp 3.21.1, Q4_0 GGUF) with flash attention off, on, and on with a q8_0 cache
//   (llama.cpp quantizes V only with flash attention on); 'auto', node-llama-cpp's default, is not a setting
//   of its own: it resolves to on for these CPUs (engines.md);
// - onnxruntime-genai 0.18 when bench/decode-setup could install it (bench/genai/.venv).
// Every line gives the bytes a step must read (weights + that engine's cache at that length) and the share of
// the read bandwidth measured at the start. Then the memory of 8 × 24,576 tokens of cache per cache type
// (computed), the headline: the expected time to the first verified proof from each engine's measured step
// cost (schedule.ts: a and b fitted to its 32- and longest-point figures, one row at a time, the recipe's
// answer lengths, success 0.4 per sample, Lean 10 s), and the last line of keys (ours over theirs).
// Env: KIMINA_KEYS_POINTS (default 32,4096,12288), KIMINA_KEYS_ROUNDS (2), KIMINA_KEYS_STEPS (8),
// KIMINA_BENCH_THREADS (2), KIMINA_KEYS_ONLY (capi,capi8,split,llama,genai), KIMINA_KEYS_LLAMA (off,on,q8). Stated wall time: about
// 15 minutes on an idle 2-core machine with the defaults (llama.cpp's prefill to 12,288 dominates).
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { ensureOnnxModel, QWEN3_06B } from './decodeModel';
import { measureOurs, openOurs } from './oursDecode';
import { measureNative, openNative } from './nativeDecode';
import { ensureGguf, loadLlamaModule, measureLlama, type LlamaSettings } from './llamaDecode';
import { ensureGenaiModel, GENAI_PYTHON, measureGenai } from './genaiDecode';
import { readBandwidth } from './bandwidth';
import { Q4_BLOCK } from '../backend/model/onnx/quantize';
import { expectedFirstProof, RECIPE_ANSWERS, type StepCost } from '../backend/model/schedule';

const points = (process.env.KIMINA_KEYS_POINTS ?? '32,4096,12288').split(',').map(Number);
const rounds = Number(process.env.KIMINA_KEYS_ROUNDS ?? 2);
const steps = Number(process.env.KIMINA_KEYS_STEPS ?? 8);
const threads = Number(process.env.KIMINA_BENCH_THREADS ?? 2);
const only = new Set((process.env.KIMINA_KEYS_ONLY ?? 'capi,capi8,split,llama,genai').split(','));
const log = (s: string) => console.error(s);
const load = () =>
  loadavg()
    .map((x) => x.toFixed(1))
    .join(' ');

const s = QWEN3_06B;
const kvElements = s.layers * 2 * s.kvHeads * s.headDim;
/** KV cache bytes per token and row by cache type (q8_0: 34 bytes per block of 32). */
const KV_BYTES: Record<string, number> = {
  fp32: kvElements * 4,
  f16: kvElements * 2,
  int8: kvElements,
  q8_0: (kvElements / 32) * 34,
};
/** 4-bit weights read per step (MatMulNBits: 4 bits + a float32 scale per 32; Q4_0: 4 bits + an f16 scale per 32). */
function weightBytes(scaleBytes: number): number {
  const q4 = (out: number, inDim: number) => (out * inDim) / 2 + ((out * inDim) / Q4_BLOCK) * scaleBytes;
  const D = s.headDim;
  const layer =
    q4((s.heads + 2 * s.kvHeads) * D, s.hiddenSize) +
    q4(s.hiddenSize, s.heads * D) +
    q4(2 * s.intermediateSize, s.hiddenSize) +
    q4(s.hiddenSize, s.intermediateSize);
  return s.layers * layer + q4(s.vocabSize, s.hiddenSize);
}

interface Engine {
  name: string;
  cache: keyof typeof KV_BYTES;
  weights: number;
  series: Map<number, number[]>;
}
const engines: Engine[] = [];
const engine = (name: string, cache: keyof typeof KV_BYTES, scaleBytes = 4): Engine => {
  const e = { name, cache, weights: weightBytes(scaleBytes), series: new Map<number, number[]>() };
  engines.push(e);
  return e;
};
const add = (e: Engine, cached: number, tps: number) => e.series.set(cached, [...(e.series.get(cached) ?? []), tps]);
const median = (xs: number[] | undefined) => {
  if (!xs || xs.length === 0) return NaN;
  const v = [...xs].sort((a, b) => a - b);
  return v.length % 2 ? v[(v.length - 1) / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
};

async function main(): Promise<void> {
  const t0 = Date.now();
  const bandwidth = await readBandwidth(threads);
  log(`read bandwidth ${(bandwidth / 1e9).toFixed(1)} GB/s (${threads} threads); load ${load()}`);
  const dir = ensureOnnxModel(4, log);
  const capi = only.has('capi') ? openNative(dir, threads) : undefined;
  const capi8 = only.has('capi8') ? openNative(dir, threads, true) : undefined;
  const split = only.has('split') ? await openOurs(dir, threads) : undefined;
  const llamaMod = only.has('llama') ? await loadLlamaModule() : undefined;
  if (only.has('llama') && !llamaMod) log('llama.cpp: not installed (run bash bench/decode-setup); skipped');
  const gguf = llamaMod ? ensureGguf(log) : undefined;
  const genaiReady = only.has('genai') && existsSync(GENAI_PYTHON);
  if (only.has('genai') && !genaiReady)
    log('onnxruntime-genai: bench/genai/.venv missing (bench/decode-setup); skipped');
  const genaiModel = genaiReady ? ensureGenaiModel(log) : undefined;

  const eCapi = capi && engine('ours, C API path, fp32 cache', 'fp32');
  const eCapi8 = capi8 && engine('ours, C API path, int8 cache', 'int8');
  const eSplit = split && engine('ours, split path (onnxruntime-node)', 'fp32');
  const llamaRuns: { e: Engine; settings: LlamaSettings }[] = llamaMod
    ? [
        { e: engine('llama.cpp, flash attention off, f16 cache', 'f16', 2), settings: { flashAttention: false } },
        { e: engine('llama.cpp, flash attention on, f16 cache', 'f16', 2), settings: { flashAttention: true } },
        {
          e: engine('llama.cpp, flash attention on, q8_0 cache', 'q8_0', 2),
          settings: { flashAttention: true, kvCache: 'q8_0' },
        },
      ]
    : [];
  // KIMINA_KEYS_LLAMA=off,on,q8 (default all): which llama.cpp settings run (a cut-down run names what it left out).
  const llamaWanted = new Set((process.env.KIMINA_KEYS_LLAMA ?? 'off,on,q8').split(','));
  const keptLlama = llamaRuns.filter(
    (r) =>
      llamaWanted.has(r.settings.kvCache === 'q8_0' ? 'q8' : r.settings.flashAttention ? 'on' : 'off') ||
      !engines.splice(engines.indexOf(r.e), 1),
  );
  llamaRuns.splice(0, llamaRuns.length, ...keptLlama);
  const eGenai = genaiModel && engine('onnxruntime-genai 0.18 (Python)', 'fp32');

  for (let round = 0; round < rounds; round++) {
    for (const cached of points) {
      if (capi && eCapi) add(eCapi, cached, (await measureNative(capi.decoder, cached, 1, steps)).tokensPerSecond);
      if (capi8 && eCapi8) add(eCapi8, cached, (await measureNative(capi8.decoder, cached, 1, steps)).tokensPerSecond);
      if (split && eSplit) add(eSplit, cached, (await measureOurs(split.decoder, cached, 1, steps)).tokensPerSecond);
      log(`round ${round}, ${cached} cached: ours done (load ${load()})`);
    }
    for (const { e, settings } of llamaRuns) {
      const m = await measureLlama(llamaMod!, gguf!, points, steps, threads, () => undefined, settings);
      for (const [cached, tps] of m) add(e, cached, tps);
      log(`round ${round}: ${e.name} done (load ${load()})`);
    }
    if (genaiModel && eGenai) {
      try {
        const m = measureGenai(genaiModel, { points }, steps, threads, log);
        if (m.error) throw new Error(m.error);
        for (const [cached, tps] of Object.entries(m.decode)) add(eGenai, Number(cached), tps);
      } catch (err) {
        log(`onnxruntime-genai failed: ${(err as Error).message.split('\n')[0]}`);
      }
    }
  }

  console.log(
    `\n## Decode, one row, tokens/s (median of ${rounds} rounds); bytes read per step; share of ${(bandwidth / 1e9).toFixed(1)} GB/s`,
  );
  console.log('| engine | ' + points.map((p) => `${p} cached`).join(' | ') + ' |');
  console.log('|---|' + points.map(() => '---').join('|') + '|');
  for (const e of engines) {
    const cells = points.map((p) => {
      const tps = median(e.series.get(p));
      const bytes = e.weights + KV_BYTES[e.cache] * p;
      return `${tps.toFixed(1)} (${(bytes / 1e6).toFixed(0)} MB, ${((tps * bytes * 100) / bandwidth).toFixed(0)}%)`;
    });
    console.log(`| ${e.name} | ${cells.join(' | ')} |`);
  }

  console.log('\n## KV cache of 8 rows × 24,576 tokens (Qwen3-0.6B / 1.7B: 28 layers, 8 KV heads of 128), computed');
  for (const [type, bytes] of Object.entries(KV_BYTES))
    console.log(
      `- ${type}: ${((bytes * 8 * 24_576) / 2 ** 30).toFixed(1)} GiB (one row: ${((bytes * 24_576) / 2 ** 30).toFixed(2)} GiB)`,
    );

  // Per-step cost from the 32-point and the longest point (one row): a + b·cached.
  const costOf = (e: Engine): StepCost | undefined => {
    const lo = Math.min(...points);
    const hi = Math.max(...points);
    const msLo = 1000 / median(e.series.get(lo));
    const msHi = 1000 / median(e.series.get(hi));
    if (!(msLo > 0 && msHi > 0) || hi === lo) return undefined;
    const b = Math.max(0, (msHi - msLo) / (hi - lo));
    return { a: Math.max(0, msLo - b * lo), m: 0, b };
  };
  console.log(
    `\n## Expected time to the first verified proof, one row at a time (answers: Gamma(shape ${RECIPE_ANSWERS.shape}) of mean ${RECIPE_ANSWERS.meanTokens}, capped at ${RECIPE_ANSWERS.maxTokens} (a capped answer fails), prompt ${RECIPE_ANSWERS.promptTokens}, success ${RECIPE_ANSWERS.success} per sample, Lean ${RECIPE_ANSWERS.checkSeconds} s; step cost fitted to ${Math.min(...points)} and ${Math.max(...points)} cached)`,
  );
  const firstProof = new Map<Engine, number>();
  for (const e of engines) {
    const cost = costOf(e);
    if (!cost) continue;
    const est = expectedFirstProof(cost, 1);
    firstProof.set(e, est.expectedSeconds);
    console.log(
      `- ${e.name}: ${(est.expectedSeconds / 60).toFixed(0)} min (one mean answer ${(est.meanAnswerSeconds / 60).toFixed(1)} min; a ${cost.a.toFixed(1)} ms, b ${(cost.b * 1000).toFixed(2)} µs per cached token)`,
    );
  }

  // Keys: ours (the C API path, the better of its caches per point: both are selectable) over the best llama.cpp
  // setting per point (named) and over onnxruntime-genai.
  const ours = [eCapi, eCapi8].filter((e): e is Engine => !!e);
  const bestOf = (es: Engine[], p: number) =>
    es.reduce<{ e?: Engine; tps: number }>(
      (b, e) => (median(e.series.get(p)) > b.tps ? { e, tps: median(e.series.get(p)) } : b),
      { tps: 0 },
    );
  const keyPoints = [32, 4096, 12288];
  const llamaEngines = llamaRuns.map((r) => r.e);
  const keys: string[] = [];
  const notes: string[] = [];
  for (const p of keyPoints) {
    const o = bestOf(ours, p);
    const l = bestOf(llamaEngines, p);
    keys.push(`vs_llama@${p}=${(o.tps / l.tps).toFixed(2)}`);
    notes.push(
      `@${p}: ours ${o.e?.name.replace('ours, C API path, ', '') ?? 'n/a'}, llama ${l.e?.name.replace('llama.cpp, ', '') ?? 'n/a'}`,
    );
  }
  for (const p of keyPoints) {
    const o = bestOf(ours, p);
    const g = eGenai ? median(eGenai.series.get(p)) : NaN;
    keys.push(`vs_genai@${p}=${(o.tps / g).toFixed(2)}`);
  }
  const oursFirst = Math.min(...ours.map((e) => firstProof.get(e) ?? Infinity));
  const llamaFirst = Math.min(...llamaEngines.map((e) => firstProof.get(e) ?? Infinity));
  keys.push(`first_proof_vs_llama=${(llamaFirst / oursFirst).toFixed(2)}`);
  console.log(
    `\n(settings per key: ${notes.join('; ')}; wall ${((Date.now() - t0) / 60000).toFixed(1)} min; load ${load()})`,
  );
  console.log(keys.join(' '));
  await capi?.release();
  await capi8?.release();
  await split?.release();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
