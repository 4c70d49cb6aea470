// The cost model and row choice for the first verified proof (backend/model/schedule.ts), against a scripted
// device: a step function with known a, m, b (and noise on some calls, as a shared machine adds).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  calibrate,
  chooseRows,
  expectedFirstProof,
  rowsThatFit,
  stepMs,
  waveFinishTimes,
  RECIPE_ANSWERS,
  type StepCost,
} from '../../backend/model/schedule';

/** A scripted device: exact cost plus, on every other call, a burst of extra time (another process). */
function scriptedDevice(cost: StepCost) {
  let calls = 0;
  const seen: [number, number][] = [];
  const time = async (rows: number, cachedPerRow: number) => {
    seen.push([rows, cachedPerRow]);
    return stepMs(cost, rows, rows * cachedPerRow) + (calls++ % 2 === 1 ? 40 : 0);
  };
  return { time, seen };
}

// Measured shapes (docs/benchmarks.md): a 2-core CPU on the C API path, ~40 tok/s at 32 cached, ~17 at 4k;
// a GPU where a step costs about the same for 1 or 8 rows.
const CPU: StepCost = { a: 25, m: 20, b: 8e-3 };
const GPU: StepCost = { a: 8, m: 0.3, b: 2e-5 };

test('calibration recovers the cost model from three timed points, taking the fastest of the repeats', async () => {
  const device = scriptedDevice(CPU);
  const fitted = await calibrate(device.time);
  assert.ok(
    Math.abs(fitted.a - CPU.a) < 1e-9 && Math.abs(fitted.b - CPU.b) < 1e-12 && Math.abs(fitted.m - CPU.m) < 1e-9,
  );
  assert.deepEqual([...new Set(device.seen.map((p) => p.join('x')))], ['1x32', '1x4096', '4x32']);
});

test('a wave: rows leave as their answers end, later steps cost less', () => {
  const cost: StepCost = { a: 10, m: 5, b: 0 };
  // Two rows: 100 steps together (15 ms), then 100 alone (10 ms).
  assert.deepEqual(waveFinishTimes(cost, 0, [100, 200]), [1.5, 2.5]);
  const withCache: StepCost = { a: 0, m: 0, b: 1 };
  // One row from 0 to 10 cached: mean 5 per step, 10 steps = 50 ms.
  assert.deepEqual(waveFinishTimes(withCache, 0, [10]), [0.05]);
});

test('the row choice: about one at a time on a CPU at Kimina lengths, several on a GPU', () => {
  const cpu = chooseRows(CPU);
  const gpu = chooseRows(GPU);
  assert.ok(cpu.rows <= 2, `CPU chose ${cpu.rows}: ${JSON.stringify(cpu.estimates)}`);
  assert.ok(gpu.rows >= 4, `GPU chose ${gpu.rows}: ${JSON.stringify(gpu.estimates)}`);
  // The choice is the least expected time among the candidates, and the estimate is seeded (same every run).
  for (const e of cpu.estimates)
    assert.ok(e.expectedSeconds >= cpu.estimates.find((x) => x.rows === cpu.rows)!.expectedSeconds);
  assert.equal(expectedFirstProof(CPU, 1).expectedSeconds, expectedFirstProof(CPU, 1).expectedSeconds);
  // Sanity of the scale: one 12.3k answer at b = 8e-3 ms per cached token and a = 25 ms: ~24 min on this CPU.
  const one = expectedFirstProof(CPU, 1).meanAnswerSeconds;
  assert.ok(one > 600 && one < 1200, `one mean answer takes ${one} s`);
  // A certain success ends the first wave: the expected time is the mean first answer plus Lean.
  const sure = expectedFirstProof(GPU, 1, { ...RECIPE_ANSWERS, success: 1, shape: 1e6 });
  assert.ok(Math.abs(sure.expectedSeconds - sure.meanAnswerSeconds - RECIPE_ANSWERS.checkSeconds) < 0.5);
});

test('memory: rows of 24,576-token answers that fit half of a 16 GB laptop beside the weights', () => {
  const gib = 2 ** 30;
  const fp32 = 224 * 1024; // Qwen3-0.6B/1.7B: 28 layers × 2 × 8 KV heads × 128 × 4 bytes
  const int8 = fp32 / 4;
  assert.equal(rowsThatFit(fp32, 24_576, 16 * gib, 0.5 * gib), 1);
  assert.equal(rowsThatFit(int8, 24_576, 16 * gib, 0.5 * gib), 5);
  assert.equal(rowsThatFit(fp32, 24_576, 8 * gib, 0.5 * gib), 0);
});
