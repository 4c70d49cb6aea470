// The default decoding plan on a 16 GB laptop at the recipe's 24,576-token answers (issue 32): for the
// Qwen3-0.6B and 1.7B shapes (Kimina-Prover-RL-0.6B / -1.7B), the engine, cache type and rows at once that the
// engine would choose, and that they fit. Weights are the 4-bit folder's size computed from the tensor shapes
// (MatMulNBits: half a byte per weight plus a float32 scale per 32; the embedding in float16; norms in float32).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { qwen3TensorShapes, type Qwen3Shape } from '../../../backend/model/onnx/qwen3Config';
import { shapes } from './kiminaShapes';
import { cacheBytesPerToken, defaultPlan } from '../../../backend/model/onnx/memoryPlan';
import { GqaCache } from '../../../backend/model/onnx/gqaCache';
import { RECIPE_ANSWERS, scheduleOf, type StepCost } from '../../../backend/model/schedule';

const gib = 2 ** 30;
const LAPTOP = 16 * gib;

/** The 4-bit model folder's weights in bytes (the tied head is quantized once more from the embedding). */
function q4WeightBytes(s: Qwen3Shape): number {
  const q4 = (n: number) => n * (0.5 + 4 / 32);
  let bytes = 0;
  for (const [name, dims] of qwen3TensorShapes(s)) {
    const n = dims.reduce((x, y) => x * y, 1);
    if (name === 'model.embed_tokens.weight') bytes += n * 2 + q4(n);
    else if (dims.length === 1) bytes += n * 4;
    else bytes += q4(n);
  }
  return bytes;
}

// A CPU-like and a GPU-like calibrated cost (ms: a + m·(rows − 1) + b·cached): without the memory bound the
// GPU would take 8 rows (test/model/schedule.test.ts).
const CPU: StepCost = { a: 25, m: 20, b: 8e-3 };
const GPU: StepCost = { a: 8, m: 0.3, b: 2e-5 };

for (const [name, shape] of Object.entries(shapes)) {
  test(`16 GB laptop, ${name}: the default (C API path, float32 cache, one row) fits at 24,576-token answers`, () => {
    const weights = q4WeightBytes(shape);
    assert.ok(weights > 0.2 * gib && weights < 2 * gib, `${name} 4-bit weights: ${(weights / gib).toFixed(2)} GiB`);
    // The cache's bytes per token agree with the C API path's own cache.
    assert.equal(cacheBytesPerToken(shape, 'fp32'), GqaCache.bytesPerToken(shape));
    assert.equal(cacheBytesPerToken(shape, 'int8'), GqaCache.bytesPerToken({ ...shape, int8: true }));
    const plan = defaultPlan(shape, weights, LAPTOP);
    assert.equal(plan.path, 'c-api-gqa');
    assert.equal(plan.cache, 'fp32');
    // Only one float32 row of 24,576 tokens (5.25 GiB) fits half of 16 GiB beside the weights: two would not.
    assert.deepEqual(plan.candidates, [1]);
    for (const cost of [CPU, GPU]) {
      const rows = scheduleOf(cost, { candidates: plan.candidates })!.rows;
      assert.equal(rows, 1);
      const resident = weights + rows * cacheBytesPerToken(shape, plan.cache) * RECIPE_ANSWERS.maxTokens;
      assert.ok(resident <= 0.5 * LAPTOP, `${name}: ${(resident / gib).toFixed(2)} GiB`);
    }
    // A 32 GB machine leaves room for two rows; an 8 GB one not even for one float32 row: the split path's float16.
    assert.deepEqual(defaultPlan(shape, weights, 2 * LAPTOP).candidates, [1, 2]);
    assert.equal(defaultPlan(shape, weights, LAPTOP / 2).path, 'node-split');
  });
}
