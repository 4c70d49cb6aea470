// The session's thread-pool settings change speed only: with 2 threads, every logit of a step is bit-identical
// with and without dynamic block sizes (session.ts), for the float32 graph, the 4-bit graph at both accuracy
// levels and the float16-cache graph, one row and several, one token and a chunk, empty and filled caches.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeTinyModel } from '../../../backend/demo/models/tinyModel';
import { Decoder } from '../../../backend/model/onnx/decoder';
import { graphPath, readModelFolder } from '../../../backend/model/onnx/modelFolder';
import { createSession } from '../../../backend/model/onnx/session';
import { tempDir } from './helpers';

// wide enough that two threads split every matmul into several blocks
const shape = { hiddenSize: 1024, intermediateSize: 3072, layers: 2, heads: 16, kvHeads: 8, headDim: 64 };

async function decoders(dir: string, kvCache: 'fp32' | 'fp16'): Promise<[Decoder, Decoder]> {
  const folder = readModelFolder(dir);
  const open = async (dynamicBlocks: boolean) =>
    new Decoder((await createSession(graphPath(folder, kvCache), { threads: 2, dynamicBlocks })).session, folder.shape);
  return [await open(true), await open(false)];
}

for (const variant of [
  { name: 'float32 weights', options: {}, kvCache: 'fp32' as const },
  { name: '4-bit, accuracy level 0', options: { quant: 'q4' as const }, kvCache: 'fp32' as const },
  {
    name: '4-bit, accuracy level 4 (int8 activations)',
    options: { quant: 'q4' as const, accuracyLevel: 4 as const },
    kvCache: 'fp32' as const,
  },
  {
    name: '4-bit, float16 KV cache',
    options: { quant: 'q4' as const, accuracyLevel: 4 as const },
    kvCache: 'fp16' as const,
  },
]) {
  test(`dynamic blocks leave every logit bit-identical: ${variant.name}`, async () => {
    const dir = writeTinyModel(tempDir(), { seed: 5, shape, ...variant.options }).dir;
    const [withBlocks, without] = await decoders(dir, variant.kvCache);
    for (const rows of [1, 4]) {
      const a = withBlocks.newState(rows);
      const b = without.newState(rows);
      const prompts = Array.from({ length: rows }, (_, r) =>
        Array.from({ length: 9 }, (_, i) => 5 + ((i * 37 + r * 11) % 200)),
      );
      for (let step = 0; step < 4; step++) {
        // a 9-token chunk first, then one token per row
        const feed = step === 0 ? prompts : prompts.map((p, r) => [((p[step] * 7 + r) % 200) + 3]);
        const x = await withBlocks.feed(a, feed);
        const y = await without.feed(b, feed);
        assert.equal(x.length, y.length);
        let differing = 0;
        for (let i = 0; i < x.length; i++)
          if (x[i] !== y[i] && !(Number.isNaN(x[i]) && Number.isNaN(y[i]))) differing++;
        assert.equal(differing, 0, `${rows} rows, step ${step}: ${differing} of ${x.length} logits differ`);
      }
    }
  });
}
