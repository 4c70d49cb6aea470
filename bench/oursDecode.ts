// Decode speed of our split-cache ONNX graph at a given number of cached tokens. Decode cost does not
// depend on the cached values, so the cache is filled directly instead of by a long prefill.
import { Decoder, type BatchState } from '../backend/model/onnx/decoder';
import { graphPath, readModelFolder } from '../backend/model/onnx/modelFolder';
import { createSession } from '../backend/model/onnx/session';
import { argmax, seededRandom } from '../backend/model/onnx/sampler';
import { bestWindowRate } from './bestWindow';
import type { KvCache } from '../backend/model/onnx/kvCache';

export interface Measure {
  tokensPerSecond: number;
  msPerToken: number;
}

export async function openOurs(
  modelDir: string,
  threads: number,
  kvCache: 'fp32' | 'fp16' = 'fp32',
  sessionOptions: { spinning?: boolean } = {},
) {
  const folder = readModelFolder(modelDir);
  const { session } = await createSession(graphPath(folder, kvCache), { threads, ...sessionOptions });
  return { decoder: new Decoder(session, folder.shape), release: () => session.release() };
}

/** Writes values into the cache (every page: resident memory is then what a real decode holds). */
export function fillCache(cache: KvCache, seed: number): void {
  const random = seededRandom(seed);
  for (const arr of [...cache.keys, ...cache.values]) {
    const half = arr instanceof Uint16Array;
    for (let i = 0; i < arr.length; i += 7) arr[i] = half ? 0x3800 ^ Math.floor(random() * 1024) : random() - 0.5;
  }
}

/**
 * `rows` rows with `cached` tokens already in the cache and room for `room` more. The cache is filled
 * directly (decode cost does not depend on its values) instead of by a long prefill.
 */
export function stateWithCached(decoder: Decoder, rows: number, cached: number, room: number): BatchState {
  const state = decoder.newState(rows);
  state.cache.reserve(cached + room);
  fillCache(state.cache, cached);
  for (let b = 0; b < rows; b++) state.cache.bias.fill(0, b * state.cache.capacity, b * state.cache.capacity + cached);
  state.cache.length = cached;
  state.nextPosition = new Array(rows).fill(cached);
  return state;
}

/**
 * `rows` rows continuing one prompt of `shared` tokens held once (the shared prefix, as pass@n's samples
 * decode), each with `own` tokens of its own after it and room for `room` more. Without shared-prefix
 * inputs in the graph, the prompt is copied into every row (Decoder.shareRows).
 */
export function stateWithShared(decoder: Decoder, rows: number, shared: number, own: number, room: number): BatchState {
  const state = stateWithCached(decoder, 1, shared, 0);
  decoder.shareRows(state, rows);
  const cache = state.cache;
  cache.reserve(own + room);
  if (own > 0) {
    fillCache(cache, shared + own);
    for (let b = 0; b < rows; b++)
      cache.bias.fill(0, b * cache.capacity + cache.length, b * cache.capacity + cache.length + own);
    cache.length += own;
    state.nextPosition = state.nextPosition.map((p) => p + own);
  }
  return state;
}

/**
 * tokens/s for `batch` rows decoding together with `cached` tokens already in the cache (aggregate);
 * `shared`: the cached tokens are one prompt all rows share (stateWithShared), else each row's own.
 */
export async function measureOurs(
  decoder: Decoder,
  cached: number,
  batch: number,
  steps: number,
  shared = false,
): Promise<Measure> {
  const state = shared
    ? stateWithShared(decoder, batch, cached, 0, steps + 2)
    : stateWithCached(decoder, batch, cached, steps + 2);
  const token = () => Array.from({ length: batch }, (_, b) => [(b * 7919 + 13) % 150000]);
  await decoder.feed(state, token()); // warm-up step
  const stepMs: number[] = [];
  for (let i = 0; i < steps; i++) {
    const t = performance.now();
    await decoder.feed(state, token());
    stepMs.push(performance.now() - t);
  }
  const tokensPerSecond = bestWindowRate(stepMs, 4, batch);
  return { tokensPerSecond, msPerToken: (1000 * batch) / tokensPerSecond };
}

/** Prefill tokens/s for a prompt of `length` random tokens, and the time to the first sampled token (ms). */
export async function measureOursPrefill(
  decoder: Decoder,
  length: number,
): Promise<{ tokensPerSecond: number; firstTokenMs: number }> {
  const prompt = Array.from({ length }, (_, i) => 1000 + ((i * 7919) % 100000));
  const t = performance.now();
  const state = decoder.newState(1);
  const logits = await decoder.prefill(state, [prompt]);
  const prefillMs = performance.now() - t;
  argmax(logits!.subarray(0, decoder.shape.vocabSize));
  return { tokensPerSecond: length / (prefillMs / 1000), firstTokenMs: performance.now() - t };
}
