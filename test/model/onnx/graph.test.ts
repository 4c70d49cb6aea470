// The generated ONNX graph against an independent plain-JS Qwen3 forward pass.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeTinyModel } from '../../fixtures/models/tinyModel';
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
  const m = writeTinyModel(tempDir(), { seed: 4, shape: { tieWordEmbeddings: false, heads: 4, kvHeads: 1, layers: 3, ropeTheta: 10_000 } });
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
