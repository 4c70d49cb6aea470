// Decode speed of the GQA graph through onnxruntime's C API (backend/model/onnx/gqaDecoder.ts) at a given
// number of cached tokens, measured as oursDecode.ts measures the split-cache graph: the cache is filled
// directly (decode cost does not depend on its values), the fastest 4 consecutive steps count.
import { join } from 'node:path';
import { GqaDecoder, type GqaState } from '../backend/model/onnx/gqaDecoder';
import { ONNX_GQA8_FILE, ONNX_GQA_FILE, readModelFolder } from '../backend/model/onnx/modelFolder';
import { useHugePages } from '../backend/model/onnx/hugePages';
import { OrtNative } from '../backend/model/onnx/ortNative';
import { argmax, seededRandom } from '../backend/model/onnx/sampler';
import { bestWindowRate } from './bestWindow';
import type { Measure } from './oursDecode';

// The benchmarks' A/B knobs: another libonnxruntime build (KIMINA_ORT_LIBRARY=path), huge pages off
// (KIMINA_HUGE_PAGES=off; backend/model/onnx/hugePages.ts).
if (process.env.KIMINA_HUGE_PAGES === 'off') useHugePages(false);

/** The C API (with KIMINA_ORT_LIBRARY's build of libonnxruntime where it is set). */
export function loadNative(): OrtNative {
  return OrtNative.load(process.env.KIMINA_ORT_LIBRARY || undefined);
}

export function openNative(modelDir: string, threads: number, int8 = false) {
  const folder = readModelFolder(modelDir);
  const ort = loadNative();
  const file = join(modelDir, int8 ? ONNX_GQA8_FILE : ONNX_GQA_FILE);
  const decoder = new GqaDecoder(ort, ort.createSession(file, { threads }), folder.shape, { int8 });
  return { decoder, release: () => decoder.close() };
}

/** `rows` rows with `cached` tokens each (every page written: resident memory is what a real decode holds). */
export function nativeStateWithCached(decoder: GqaDecoder, rows: number, cached: number, room: number): GqaState {
  const state = decoder.newState(rows, cached + room);
  const random = seededRandom(cached);
  for (const arr of [...state.cache.keys, ...state.cache.values])
    for (let i = 0; i < arr.length; i += 7)
      arr[i] = arr instanceof Int8Array ? Math.floor(random() * 200) - 100 : random() - 0.5;
  state.cache.lengths.fill(cached);
  return state;
}

export async function measureNative(
  decoder: GqaDecoder,
  cached: number,
  batch: number,
  steps: number,
): Promise<Measure> {
  const state = nativeStateWithCached(decoder, batch, cached, steps + 2);
  try {
    const token = () => Array.from({ length: batch }, (_, b) => [(b * 7919 + 13) % 150000]);
    decoder.run(state, token()); // warm-up step
    const stepMs: number[] = [];
    for (let i = 0; i < steps; i++) {
      const t = performance.now();
      decoder.run(state, token());
      stepMs.push(performance.now() - t);
    }
    const tokensPerSecond = bestWindowRate(stepMs, 4, batch);
    return { tokensPerSecond, msPerToken: (1000 * batch) / tokensPerSecond };
  } finally {
    state.cache.release();
  }
}

export async function measureNativePrefill(
  decoder: GqaDecoder,
  length: number,
): Promise<{ tokensPerSecond: number; firstTokenMs: number }> {
  const prompt = Array.from({ length }, (_, i) => 1000 + ((i * 7919) % 100000));
  const t = performance.now();
  const state = decoder.newState(1, length + 1);
  const logits = await decoder.prefill(state, [prompt]);
  const prefillMs = performance.now() - t;
  argmax(logits!.subarray(0, decoder.shape.vocabSize));
  state.cache.release();
  return { tokensPerSecond: length / (prefillMs / 1000), firstTokenMs: performance.now() - t };
}
