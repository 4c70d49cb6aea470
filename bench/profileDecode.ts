// `node --import tsx bench/profileDecode.ts [cached=32] [threads=2] [accuracy level=4] [rows=1]`: where one decode step's time goes
// on the benchmark's 0.6B-shaped model: onnxruntime's own profile (per operator type, summed over the
// steps) against the wall time of session.run, the rest of Decoder.feed (feeds, cache writes) and
// sampling in JS (greedy and temperature + top-p over the full vocabulary).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { Decoder } from '../backend/model/onnx/decoder';
import { readModelFolder } from '../backend/model/onnx/modelFolder';
import { rowRandom, sampleToken } from '../backend/model/onnx/sampler';
import { ensureOnnxModel } from './decodeModel';
import { stateWithCached } from './oursDecode';

async function main(): Promise<void> {
  const cached = Number(process.argv[2] ?? 32);
  const threads = Number(process.argv[3] ?? 2);
  const level = Number(process.argv[4] ?? 4);
  const rows = Number(process.argv[5] ?? 1);
  const dir = mkdtempSync(join(tmpdir(), 'kimina-profile-'));
  const prefix = join(dir, 'ort');
  const folder = readModelFolder(ensureOnnxModel(level, (s) => console.error(s)));
  const session = await ort.InferenceSession.create(folder.onnxPath, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    enableProfiling: true,
    profileFilePrefix: prefix,
    logSeverityLevel: 3,
  });
  const decoder = new Decoder(session, folder.shape);
  const state = stateWithCached(decoder, rows, cached, 64);
  const run = session.run.bind(session) as (
    feeds: ort.InferenceSession.FeedsType,
  ) => Promise<ort.InferenceSession.ReturnType>;
  let runMs = 0;
  (session as unknown as { run: typeof run }).run = async (feeds) => {
    const t = performance.now();
    const r = await run(feeds);
    runMs += performance.now() - t;
    return r;
  };
  const steps = 20;
  const tokens = (i: number) => Array.from({ length: rows }, (_, b) => [100 + i + b]);
  await decoder.feed(state, tokens(0));
  runMs = 0;
  let feedMs = 0,
    greedyMs = 0,
    sampleMs = 0;
  const random = rowRandom(1, 0);
  for (let i = 0; i < steps; i++) {
    let t = performance.now();
    const logits = (await decoder.feed(state, tokens(i + 1))).subarray(0, folder.shape.vocabSize);
    feedMs += performance.now() - t;
    t = performance.now();
    sampleToken(logits, 0, 1, random);
    greedyMs += performance.now() - t;
    t = performance.now();
    sampleToken(logits, 1, 0.95, random);
    sampleMs += performance.now() - t;
  }
  const stepRunMs = runMs;
  // Sampling from the softmax the graph computes (what decoding at a temperature does).
  let probsMs = 0;
  for (let i = 0; i < 5; i++) {
    const { scores } = await decoder.feedScores(state, tokens(100 + i), 1, 1);
    const t = performance.now();
    sampleToken(scores.subarray(0, folder.shape.vocabSize), 1, 0.95, random, 'probs');
    probsMs += performance.now() - t;
  }
  (session as unknown as { endProfiling(): void }).endProfiling();
  const name = readdirSync(dir).find((f) => f.endsWith('.json'));
  if (!name) throw new Error('onnxruntime wrote no profile');
  const file = join(dir, name);
  const events = JSON.parse(readFileSync(file, 'utf8')) as {
    cat: string;
    name: string;
    dur: number;
    args?: { op_name?: string };
  }[];
  rmSync(dir, { recursive: true, force: true });
  const byOp = new Map<string, number>();
  let kernelUs = 0;
  let modelRunUs = 0;
  const runs = events.filter((e) => e.cat === 'Session' && e.name === 'model_run');
  for (const e of runs.slice(1, steps + 1)) modelRunUs += e.dur;
  const perStep = (us: number) => (us / 1000 / steps).toFixed(2);
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    const op = e.args?.op_name ?? '?';
    byOp.set(op, (byOp.get(op) ?? 0) + e.dur);
    kernelUs += e.dur;
  }
  // The warm-up run and the 5 sampling runs are in the profile too: scale kernel sums to per step.
  const scale = steps / (steps + 6);
  console.log(
    `decode step of ${rows} row(s) at ${cached} cached tokens, ${threads} threads, accuracy level ${level} (ms per step, ${steps} steps; sampling: one row):`,
  );
  console.log(
    `  Decoder.feed ${(feedMs / steps).toFixed(2)}; of which session.run ${(stepRunMs / steps).toFixed(2)}; ORT model_run ${perStep(modelRunUs)}; kernels ${perStep(kernelUs * scale)}`,
  );
  console.log(
    `  sampling in JS: greedy ${(greedyMs / steps).toFixed(2)}, temperature 1 + top-p 0.95 from logits ${(sampleMs / steps).toFixed(2)}, from the graph's softmax ${(probsMs / 5).toFixed(2)}`,
  );
  for (const [op, us] of [...byOp].sort((a, b) => b[1] - a[1]).slice(0, 14))
    console.log(`  ${op.padEnd(28)} ${perStep(us * scale)}`);
  await session.release();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
