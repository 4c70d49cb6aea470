// `node --import tsx bench/memoryCapi.ts [rows] [tokens] [fp32|int8]`: resident memory of the C API path
// decoding `rows` rows holding `tokens` tokens each (default 1 × 24,576, float32: the 16 GB laptop's default),
// every page of the cache written, two decode steps run; beside the cache size computed.
import { ensureOnnxModel, QWEN3_06B } from './decodeModel';
import { nativeStateWithCached, openNative } from './nativeDecode';
import { GqaCache } from '../backend/model/onnx/gqaCache';

const rows = Number(process.argv[2] ?? 1);
const tokens = Number(process.argv[3] ?? 24_576);
const int8 = (process.argv[4] ?? 'fp32') === 'int8';
const gib = (b: number) => `${(b / 2 ** 30).toFixed(2)} GiB`;

(async () => {
  const dir = ensureOnnxModel(4, console.error);
  const before = process.memoryUsage().rss;
  const { decoder, release } = openNative(dir, 2, int8);
  const loaded = process.memoryUsage().rss;
  const state = nativeStateWithCached(decoder, rows, tokens, 4);
  const token = () => Array.from({ length: rows }, (_, r) => [(r * 7919 + 13) % 150000]);
  const t = performance.now();
  decoder.run(state, token());
  decoder.run(state, token());
  const ms = (performance.now() - t) / 2;
  const rss = process.memoryUsage().rss;
  const cache = GqaCache.bytesPerToken({ ...QWEN3_06B, int8 }) * rows * tokens;
  console.log(
    `${rows} row(s) x ${tokens} tokens, ${int8 ? 'int8' : 'fp32'} cache: resident ${gib(rss)} (process before the model ${gib(before)}, model loaded ${gib(loaded)}); cache computed ${gib(cache)}; step ${ms.toFixed(0)} ms`,
  );
  state.cache.release();
  await release();
})();
