// The generated ONNX graph against an independent plain-JS Qwen3 forward pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ort from 'onnxruntime-node';
import { writeTinyModel } from '../../../backend/demo/models/tinyModel';
import { GraphBuilder } from '../../../backend/model/onnx/graphBuilder';
import { buildQwen3Graph } from '../../../backend/model/onnx/qwen3Graph';
import { referenceLogits } from './referenceQwen3';
import { loadDecoder, maxAbsDiff, q4EffectiveWeights, tempDir } from './helpers';

const prompt = [5, 17, 42, 99, 3, 250, 7, 7, 120];

test('fp32 graph matches the reference forward pass (tied embeddings, GQA 2:1)', async () => {
  const m = writeTinyModel(tempDir(), { seed: 3 });
  const decoder = await loadDecoder(m.dir);
  const logits = await decoder.feed(decoder.newState(1), [prompt]);
  const ref = referenceLogits(m.shape, m.weights, prompt);
  assert.ok(maxAbsDiff(logits, ref) < 1e-4, `max diff ${maxAbsDiff(logits, ref)}`);
});

test('fp32 graph matches the reference with an untied lm_head, 4 query heads per KV head and 3 layers', async () => {
  const m = writeTinyModel(tempDir(), {
    seed: 4,
    shape: { tieWordEmbeddings: false, heads: 4, kvHeads: 1, layers: 3, ropeTheta: 10_000 },
  });
  const decoder = await loadDecoder(m.dir);
  const logits = await decoder.feed(decoder.newState(1), [prompt]);
  const ref = referenceLogits(m.shape, m.weights, prompt);
  assert.ok(maxAbsDiff(logits, ref) < 1e-4, `max diff ${maxAbsDiff(logits, ref)}`);
});

test('4-bit graph computes with the dequantized weights (MatMulNBits layout, fp16 embedding)', async () => {
  const m = writeTinyModel(tempDir(), { seed: 5, quant: 'q4' });
  const decoder = await loadDecoder(m.dir);
  const logits = await decoder.feed(decoder.newState(1), [prompt]);
  const eff = q4EffectiveWeights(m.shape, m.weights);
  const ref = referenceLogits(eff.shape, eff.weights, prompt);
  assert.ok(maxAbsDiff(logits, ref) < 1e-3, `max diff ${maxAbsDiff(logits, ref)}`);
  // And the quantization is not a no-op: the unquantized model differs.
  assert.ok(maxAbsDiff(logits, referenceLogits(m.shape, m.weights, prompt)) > 1e-3);
});

test("the benchmark's optimum-layout baseline (Concat cache) computes the same model", async () => {
  const m = writeTinyModel(tempDir(), { seed: 6 });
  const g = new GraphBuilder('baseline');
  buildQwen3Graph(g, m.shape, m.weights, { quant: 'fp32', layout: 'optimum' });
  const session = await ort.InferenceSession.create(g.encode(), { intraOpNumThreads: 1 });
  const { kvHeads, headDim, layers } = m.shape;
  const int64 = (v: number[], dims: number[]) => new ort.Tensor('int64', BigInt64Array.from(v.map(BigInt)), dims);
  let past: Record<string, ort.Tensor> = {};
  for (let l = 0; l < layers; l++) {
    for (const kind of ['key', 'value'])
      past[`past_key_values.${l}.${kind}`] = new ort.Tensor('float32', new Float32Array(0), [1, kvHeads, 0, headDim]);
  }
  const first = await session.run({
    input_ids: int64(prompt, [1, prompt.length]),
    attention_mask: int64(
      prompt.map(() => 1),
      [1, prompt.length],
    ),
    position_ids: int64(
      prompt.map((_, i) => i),
      [1, prompt.length],
    ),
    ...past,
  });
  assert.ok(maxAbsDiff(first.logits.data as Float32Array, referenceLogits(m.shape, m.weights, prompt)) < 1e-4);
  past = {};
  for (let l = 0; l < layers; l++) {
    for (const kind of ['key', 'value']) past[`past_key_values.${l}.${kind}`] = first[`present.${l}.${kind}`];
  }
  const next = [...prompt, 77];
  const second = await session.run({
    input_ids: int64([77], [1, 1]),
    attention_mask: int64(
      next.map(() => 1),
      [1, next.length],
    ),
    position_ids: int64([prompt.length], [1, 1]),
    ...past,
  });
  assert.ok(maxAbsDiff(second.logits.data as Float32Array, referenceLogits(m.shape, m.weights, next)) < 1e-4);
  await session.release();
});
