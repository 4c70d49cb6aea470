// `npm run bench:decode`: decode speed of our split-cache ONNX engine against llama.cpp (node-llama-cpp
// 3.21.1, Q4_0 GGUF) and transformers.js 4.3.2 (Optimum-style Concat-cache export), all on the same
// random weights at Qwen3-0.6B shapes with 4-bit matrices, 2 threads, rounds interleaved (the machine
// may be shared), each measurement the fastest 4 consecutive steps (bench/bestWindow.ts), median (min–max)
// over rounds; the final ratios use the medians. Then: 1, 4, 8 and 16 rows decoding together
// (ours) against llama.cpp with 8 sequences; prefill of a 300- and an 8,000-token prompt and the time
// to the first token; speculative decoding by prompt lookup on Kimina-shaped answers (bench/specDecode.ts);
// resident memory with 8 rows × 8,192 tokens of cache for the 0.6B and 1.7B shapes, float32 and float16
// cache, and the float16 cache's cost in speed (bench/memoryDecode.ts).
// onnxruntime-genai 0.18.0 (bench/genaiDecode.ts: its model builder's int4 CPU graph of the same
// weights, decoded by onnxruntime-genai in Python; and that graph through onnxruntime-node) runs in the
// same rounds, threads, cached lengths, rows and prompt lengths.
// Rows of one prompt decode from a shared prefix (pass@n: one copy of the prompt's cache, read once per
// step for all rows); the old figure with every row holding its own copy is printed beside it.
// Then one line: ratio@32 ratio@512 ratio@4096 (ours / llama.cpp), batch8 (8 rows sharing a prompt /
// 1 row), batch8_independent (8 rows each with its own cache / 1 row), batch8_vs_llama,
// prefill_ratio@300 / @8000, vs_genai@32 / @512 / @4096 and vs_genai_batch8 (ours / onnxruntime-genai),
// spec_speedup and its acceptance rate; and last, issue 24's targets, each met or missed.
// Env: KIMINA_BENCH_ROUNDS (default 2), KIMINA_BENCH_STEPS (default 12), KIMINA_BENCH_THREADS (default 2),
// KIMINA_BENCH_ONLY=ours,llama,tfjs,genai, KIMINA_BENCH_PARTS=decode,batch,prefill,spec,memory,
// KIMINA_BENCH_ACCURACY (4), KIMINA_BENCH_MEMORY=own,shared (the memory part's layouts).
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cpus, loadavg } from 'node:os';
import { CACHE_DIR, ensureOnnxModel, QWEN3_06B } from './decodeModel';
import { measureOurs, measureOursPrefill, openOurs } from './oursDecode';
import { ensureGguf, loadLlamaModule, measureLlama, measureLlamaPrefill, measureLlamaSequences } from './llamaDecode';
import { kiminaAnswers, replay, teacherForced, verifyCost } from './specDecode';
import type { SpeculationOptions } from '../backend/model/onnx/decoder';
import { ensureOptimumModel, loadTransformersModule, measureTransformers } from './transformersDecode';
import { maxEventLoopStall } from './responsiveness';
import { measureHalfCost, measureMemory, memoryTable, type Layout, type MemoryRow } from './memoryDecode';
import { ensureGenaiModel, measureGenai, measureGenaiGraphInNode } from './genaiDecode';
import { readBandwidth } from './bandwidth';
import { KvCache } from '../backend/model/onnx/kvCache';
import { Q4_BLOCK } from '../backend/model/onnx/quantize';

/** Bytes one decode step must read at least: the 4-bit weights (with float32 scales) and the KV cache. */
function stepBytes(cachedPerRow: number, rows: number, shared: boolean): { weights: number; kv: number } {
  const s = QWEN3_06B;
  const q4 = (out: number, inDim: number) => (out * inDim) / 2 + ((out * inDim) / Q4_BLOCK) * 4;
  const D = s.headDim;
  const layer =
    q4((s.heads + 2 * s.kvHeads) * D, s.hiddenSize) +
    q4(s.hiddenSize, s.heads * D) +
    q4(2 * s.intermediateSize, s.hiddenSize) +
    q4(s.hiddenSize, s.intermediateSize);
  const weights = s.layers * layer + q4(s.vocabSize, s.hiddenSize);
  const perToken = KvCache.bytesPerToken({ layers: s.layers, kvHeads: s.kvHeads, headDim: D });
  return { weights, kv: perToken * cachedPerRow * (shared ? 1 : rows) };
}

const POINTS = [32, 512, 2048, 4096];
const rounds = Number(process.env.KIMINA_BENCH_ROUNDS ?? 2);
const steps = Number(process.env.KIMINA_BENCH_STEPS ?? 12);
const threads = Number(process.env.KIMINA_BENCH_THREADS ?? 2);
const only = new Set((process.env.KIMINA_BENCH_ONLY ?? 'ours,llama,tfjs,genai').split(','));
const parts = new Set((process.env.KIMINA_BENCH_PARTS ?? 'decode,batch,prefill,spec,memory').split(','));
const accuracyLevel = Number(process.env.KIMINA_BENCH_ACCURACY ?? 4);
const ROWS = [1, 4, 8, 16];
/** Memory rows: 'own' (every row its own cache) and 'shared' (a shared prompt); KIMINA_BENCH_MEMORY. */
const memoryLayouts = (process.env.KIMINA_BENCH_MEMORY ?? 'own,shared').split(',') as Layout[];
const PREFILL = [300, 8000];
const SPEC: SpeculationOptions = { maxDraft: 8 };
const log = (s: string) => console.error(s);

type Series = Map<number, number[]>;
const GENAI = 'onnxruntime-genai 0.18.0 (Python)';
const GENAI_NODE = "onnxruntime-genai's graph in onnxruntime-node";
const results: Record<string, Series> = {
  ours: new Map(),
  'llama.cpp': new Map(),
  'transformers.js': new Map(),
  [GENAI]: new Map(),
  [GENAI_NODE]: new Map(),
};
const add = (name: string, m: Map<number, number>) => {
  for (const [k, v] of m) results[name].set(k, [...(results[name].get(k) ?? []), v]);
};
const median = (xs: number[] | undefined) => {
  if (!xs || xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
/** "median (min–max)" over the rounds. */
const range = (xs: number[] | undefined) =>
  !xs || xs.length === 0
    ? 'n/a'
    : xs.length === 1
      ? xs[0].toFixed(1)
      : `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`;
/** The ratios use the median over the rounds (the machine is shared: one lucky round proves little). */
const best = median;

async function main(): Promise<void> {
  const loadBefore = loadavg()[0];
  const bandwidth = await readBandwidth(threads);
  log(`read bandwidth (onnxruntime ReduceSum over 512 MiB, ${threads} threads): ${(bandwidth / 1e9).toFixed(1)} GB/s`);
  const oursDir = ensureOnnxModel(accuracyLevel, log);
  const llama = only.has('llama') ? await loadLlamaModule() : undefined;
  const tf = only.has('tfjs') ? await loadTransformersModule() : undefined;
  if (only.has('llama') && !llama) log('llama.cpp: node-llama-cpp is not installed (run bench/decode-setup); skipped');
  if (only.has('tfjs') && !tf) log('transformers.js: not installed (run bench/decode-setup); skipped');
  const gguf = llama ? ensureGguf(log) : '';
  const optimumDir = tf ? ensureOptimumModel(log) : '';
  const genai = only.has('genai') ? ensureGenaiModel(log) : undefined;
  const genaiErrors = new Set<string>();
  const genaiNote = (e: string | undefined) => {
    if (e && !genaiErrors.has(e)) {
      genaiErrors.add(e);
      log(`onnxruntime-genai: ${e}`);
    }
  };
  genaiNote(genai?.error);
  const rows = new Map<number, number[]>();
  const independent8: number[] = [];
  const genaiRows8: number[] = [];
  const llamaSeq8: number[] = [];
  const prefill: Record<string, number[]> = {};
  const firstToken: number[] = [];
  const push = (m: Record<string, number[]>, k: string, v: number) => {
    (m[k] ??= []).push(v);
  };
  for (let r = 1; r <= rounds && parts.has('decode'); r++) {
    log(`round ${r}/${rounds}`);
    if (only.has('ours')) {
      const { decoder, release } = await openOurs(oursDir, threads);
      const m = new Map<number, number>();
      for (const c of POINTS) m.set(c, (await measureOurs(decoder, c, 1, steps)).tokensPerSecond);
      add('ours', m);
      await release();
      log(`  ours: ${POINTS.map((c) => `${c}: ${m.get(c)!.toFixed(1)}`).join(', ')}`);
    }
    if (llama) add('llama.cpp', await measureLlama(llama, gguf, POINTS, steps, threads, log));
    if (tf) add('transformers.js', await measureTransformers(tf, optimumDir, POINTS, steps, threads, log));
    if (genai?.dir) {
      const g = measureGenai(genai, { points: POINTS }, steps, threads, log);
      genaiNote(g.error);
      add(GENAI, new Map(Object.entries(g.decode).map(([k, v]) => [Number(k), v])));
      if (r === 1) {
        // The same graph through onnxruntime-node: its cache goes in and comes back (copied) every step.
        const n = await measureGenaiGraphInNode(genai, [32, 512, 4096], Math.min(steps, 6), threads);
        genaiNote(n.error);
        add(GENAI_NODE, new Map(Object.entries(n.decode).map(([k, v]) => [Number(k), v])));
        log(
          `  ${GENAI_NODE}: ${Object.entries(n.decode)
            .map(([k, v]) => `${k}: ${v.toFixed(1)}`)
            .join(', ')}`,
        );
      }
    }
    if (only.has('ours')) {
      // Ours again at the end of the round, so each engine meets the same range of machine load.
      const { decoder, release } = await openOurs(oursDir, threads);
      const m = new Map<number, number>();
      for (const c of POINTS) m.set(c, (await measureOurs(decoder, c, 1, steps)).tokensPerSecond);
      add('ours', m);
      await release();
      log(`  ours again: ${POINTS.map((c) => `${c}: ${m.get(c)!.toFixed(1)}`).join(', ')}`);
    }
  }
  // Rows decoded together at 512 cached tokens, and llama.cpp with 8 sequences, interleaved.
  for (let r = 1; r <= rounds && parts.has('batch'); r++) {
    if (only.has('ours')) {
      const { decoder, release } = await openOurs(oursDir, threads);
      // Rows continuing one prompt of 512 tokens held once (pass@n), and the old layout: each its own copy.
      // One row keeps its own cache, as the engine decodes a single request row.
      for (const n of ROWS)
        rows.set(n, [...(rows.get(n) ?? []), (await measureOurs(decoder, 512, n, steps, n > 1)).tokensPerSecond]);
      independent8.push((await measureOurs(decoder, 512, 8, steps, false)).tokensPerSecond);
      await release();
      log(
        `  ours at 512 cached, shared prompt: ${ROWS.map((n) => `${n} rows ${rows.get(n)!.at(-1)!.toFixed(1)}`).join(', ')} tok/s aggregate; 8 rows each with its own cache ${independent8.at(-1)!.toFixed(1)}`,
      );
    }
    if (genai?.dir) {
      const g = measureGenai(genai, { rows: [8], batchCached: 512 }, steps, threads, log);
      genaiNote(g.error);
      if (g.rows['8'] !== undefined) genaiRows8.push(g.rows['8']);
    }
    if (llama) {
      llamaSeq8.push(await measureLlamaSequences(llama, gguf, 512, 8, steps, threads));
      log(`  llama.cpp, 8 sequences at 512 cached: ${llamaSeq8.at(-1)!.toFixed(1)} tok/s aggregate`);
    }
  }
  if (parts.has('prefill')) {
    for (const n of PREFILL) {
      if (only.has('ours')) {
        const { decoder, release } = await openOurs(oursDir, threads);
        const p = await measureOursPrefill(decoder, n);
        await release();
        push(prefill, `ours@${n}`, p.tokensPerSecond);
        if (n === PREFILL[0]) firstToken.push(p.firstTokenMs);
        log(
          `  ours: prefill ${n} tokens at ${p.tokensPerSecond.toFixed(0)} tok/s, first token after ${p.firstTokenMs.toFixed(0)} ms`,
        );
      }
      if (llama) {
        push(prefill, `llama@${n}`, await measureLlamaPrefill(llama, gguf, n, threads));
        log(`  llama.cpp: prefill ${n} tokens at ${prefill[`llama@${n}`].at(-1)!.toFixed(0)} tok/s`);
      }
      if (genai?.dir) {
        const g = measureGenai(genai, { prefill: [n] }, steps, threads, log);
        genaiNote(g.error);
        if (g.prefill[String(n)] !== undefined) push(prefill, `genai@${n}`, g.prefill[String(n)]);
      }
    }
  }
  const spec = {
    plain: [] as number[],
    spec: [] as number[],
    acceptance: NaN,
    tokensPerStep: NaN,
    cost: {} as Record<string, number>,
  };
  if (parts.has('spec') && only.has('ours')) {
    const answers = await kiminaAnswers();
    let drafted = 0,
      accepted = 0,
      tokens = 0,
      passes = 0;
    for (const a of answers) {
      const t = teacherForced(a.prompt, a.answer, SPEC);
      drafted += t.drafted;
      accepted += t.accepted;
      tokens += t.tokens;
      passes += t.steps;
    }
    spec.acceptance = accepted / drafted;
    spec.tokensPerStep = tokens / passes;
    const { decoder, release } = await openOurs(oursDir, threads);
    for (const cached of [512, 4096])
      for (const k of [0, 2, 4, 8]) spec.cost[`${k}@${cached}`] = await verifyCost(decoder, cached, k, 3);
    for (let r = 0; r < rounds; r++) {
      let plainS = 0,
        specS = 0,
        n = 0;
      for (const a of answers) {
        n += a.answer.length - 1;
        plainS += (a.answer.length - 1) / (await replay(decoder, a.prompt, a.answer)).tokensPerSecond;
        specS += (a.answer.length - 1) / (await replay(decoder, a.prompt, a.answer, SPEC)).tokensPerSecond;
      }
      spec.plain.push(n / plainS);
      spec.spec.push(n / specS);
      log(`  speculation on the answer set: ${spec.spec.at(-1)!.toFixed(1)} vs ${spec.plain.at(-1)!.toFixed(1)} tok/s`);
    }
    await release();
  }
  let memory: MemoryRow[] = [];
  let halfCost: Awaited<ReturnType<typeof measureHalfCost>> = {};
  if (parts.has('memory') && only.has('ours')) {
    halfCost = await measureHalfCost(oursDir, threads, steps);
    log(
      `  float16 cache: ${Object.entries(halfCost)
        .map(([k, v]) => `${k} ${v.fp16.toFixed(1)} vs ${v.fp32.toFixed(1)} tok/s`)
        .join(', ')}`,
    );
    memory = measureMemory(threads, accuracyLevel, log, memoryLayouts);
  }
  const stall = {
    inThread: await maxEventLoopStall(oursDir, true, 12, threads),
    worker: await maxEventLoopStall(oursDir, false, 12, threads),
  };

  const load = `load average ${loadBefore.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end, on ${cpus().length} cores`;
  console.log(
    `\ndecode tokens/s at N cached tokens (random Qwen3-0.6B-shaped weights, 4-bit, ${threads} threads, ${rounds} round(s), median (min–max); ${load})\n`,
  );
  console.log(`| engine | ${POINTS.join(' | ')} |`);
  console.log(`|---|${POINTS.map(() => '---').join('|')}|`);
  for (const [name, series] of Object.entries(results)) {
    if (series.size > 0) console.log(`| ${name} | ${POINTS.map((c) => range(series.get(c))).join(' | ')} |`);
  }
  const ratioAt = (c: number) => best(results.ours.get(c)) / best(results['llama.cpp'].get(c));
  const fmt = (x: number) => (Number.isFinite(x) ? x.toFixed(2) : 'n/a');
  const b8 = best(rows.get(8)) / best(rows.get(1));
  const b8independent = best(independent8) / best(rows.get(1));
  const vsGenai = (c: number) => best(results.ours.get(c)) / best(results[GENAI].get(c));
  const vsGenaiBatch8 = best(rows.get(8)) / best(genaiRows8);
  if (rows.size > 0)
    console.log(
      `\nours, rows continuing one 512-token prompt held once (shared prefix, aggregate tok/s): ${ROWS.map((n) => `${n}: ${range(rows.get(n))}`).join(', ')}; 8 rows each with its own copy of the cache: ${range(independent8)}`,
    );
  if (genaiRows8.length > 0)
    console.log(`onnxruntime-genai, 8 rows at 512 cached tokens: ${range(genaiRows8)} tok/s aggregate`);
  for (const e of genaiErrors) console.log(`onnxruntime-genai: ${e}`);
  if (llamaSeq8.length > 0)
    console.log(`llama.cpp, 8 sequences at 512 cached tokens: ${range(llamaSeq8)} tok/s aggregate`);
  for (const n of PREFILL)
    if (prefill[`ours@${n}`] || prefill[`llama@${n}`])
      console.log(
        `prefill of ${n} tokens: ours ${range(prefill[`ours@${n}`])} tok/s, llama.cpp ${range(prefill[`llama@${n}`])} tok/s, onnxruntime-genai ${range(prefill[`genai@${n}`])} tok/s`,
      );
  if (firstToken.length > 0)
    console.log(
      `time to the first token after a ${PREFILL[0]}-token prompt (ours): ${firstToken.map((x) => x.toFixed(0)).join(', ')} ms`,
    );
  if (spec.plain.length > 0) {
    console.log(
      `speculation (prompt lookup, up to ${SPEC.maxDraft} drafts) on the Kimina answer set: acceptance ${fmt(spec.acceptance)}, ${fmt(spec.tokensPerStep)} tokens per forward pass; ${range(spec.spec)} vs ${range(spec.plain)} tok/s`,
    );
    console.log(
      `cost of one pass over 1+k tokens (ms): ${Object.entries(spec.cost)
        .map(([k, v]) => `k=${k} ${v.toFixed(1)}`)
        .join(', ')}`,
    );
  }
  if (Object.keys(halfCost).length > 0)
    console.log(
      `float16 KV cache against float32 (tok/s): ${Object.entries(halfCost)
        .map(([k, v]) => `${k} ${v.fp16.toFixed(1)} vs ${v.fp32.toFixed(1)} (${(v.fp16 / v.fp32).toFixed(2)}×)`)
        .join(', ')}`,
    );
  if (memory.length > 0)
    console.log(`\nresident memory, 4-bit weights, 8 rows × 8,192 tokens of cache:\n\n${memoryTable(memory)}\n`);
  console.log(
    `event loop stall while generating: ${stall.inThread.stallMs.toFixed(0)} ms on the calling thread, ${stall.worker.stallMs.toFixed(0)} ms with the worker thread`,
  );
  writeFileSync(
    join(CACHE_DIR, 'decode-results.json'),
    JSON.stringify(
      {
        date: new Date().toISOString(),
        threads,
        rounds,
        steps,
        load,
        accuracyLevel,
        results: Object.fromEntries(Object.entries(results).map(([k, v]) => [k, Object.fromEntries(v)])),
        rows: Object.fromEntries(rows),
        independent8,
        genaiRows8,
        genaiErrors: [...genaiErrors],
        llamaSeq8,
        prefill,
        firstToken,
        spec,
        stall,
        halfCost,
        memory,
      },
      null,
      2,
    ),
  );
  const line = [
    ...[32, 512, 4096].map((c) => `ratio@${c}=${fmt(ratioAt(c))}`),
    `batch8=${fmt(b8)}`,
    `batch8_independent=${fmt(b8independent)}`,
    `batch8_vs_llama=${fmt(best(rows.get(8)) / best(llamaSeq8))}`,
    ...PREFILL.map((n) => `prefill_ratio@${n}=${fmt(best(prefill[`ours@${n}`]) / best(prefill[`llama@${n}`]))}`),
    ...[32, 512, 4096].map((c) => `vs_genai@${c}=${fmt(vsGenai(c))}`),
    `vs_genai_batch8=${fmt(vsGenaiBatch8)}`,
    `ttft_ms=${firstToken.length ? Math.min(...firstToken).toFixed(0) : 'n/a'}`,
    `spec_speedup=${fmt(best(spec.spec) / best(spec.plain))}`,
    `acceptance=${fmt(spec.acceptance)}`,
  ];
  console.log(line.join(' '));
  // The bound each figure meets: bytes a step must read against the measured read bandwidth.
  const bound = (label: string, cached: number, rowsN: number, shared: boolean, measured: number) => {
    const b = stepBytes(cached, rowsN, shared);
    const limit = (bandwidth / (b.weights + b.kv)) * rowsN;
    return `${label}: ${((b.weights + b.kv) / 1e6).toFixed(0)} MB per step (weights ${(b.weights / 1e6).toFixed(0)}, KV ${(b.kv / 1e6).toFixed(0)}) -> at most ${limit.toFixed(1)} tok/s; measured ${Number.isFinite(measured) ? measured.toFixed(1) : 'n/a'} (${Number.isFinite(measured) ? ((100 * measured) / limit).toFixed(0) : '?'}% of the bound)`;
  };
  console.log(
    `bandwidth bound (read ${(bandwidth / 1e9).toFixed(1)} GB/s measured at the start):\n  ${[
      bound('1 row @32', 32, 1, false, best(results.ours.get(32))),
      bound('1 row @512', 512, 1, false, best(results.ours.get(512))),
      bound('1 row @4096', 4096, 1, false, best(results.ours.get(4096))),
      bound('8 rows @512, shared prompt', 512, 8, true, best(rows.get(8))),
      bound('8 rows @512, each its own cache', 512, 8, false, best(independent8)),
    ].join('\n  ')}`,
  );
  // Issue 24's targets, last.
  const figures = Object.fromEntries(line.map((kv) => kv.split('=')).map(([k, v]) => [k, Number(v)]));
  const targets: [string, number][] = [
    ['ratio@32', 1.0],
    ['ratio@512', 1.2],
    ['ratio@4096', 1.5],
    ['batch8', 3.0],
    ['batch8_vs_llama', 1.2],
    ['prefill_ratio@300', 1.0],
    ['prefill_ratio@8000', 1.0],
    ['vs_genai@32', 1.0],
    ['vs_genai@512', 1.0],
    ['vs_genai@4096', 1.0],
    ['vs_genai_batch8', 1.0],
  ];
  const met = targets.filter(([k, t]) => figures[k] >= t);
  console.log(
    `targets (issue 24): ${targets
      .map(
        ([k, t]) =>
          `${k} ${fmt(figures[k])} ${Number.isFinite(figures[k]) ? (figures[k] >= t ? '>=' : '<') : '?'} ${t.toFixed(1)}`,
      )
      .join(', ')}; met ${met.length} of ${targets.length}`,
  );
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
