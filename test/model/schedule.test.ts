// The cost model and row choice for the first verified proof (backend/model/schedule.ts), against a scripted
// device: a step function with known a, m, b (and noise on some calls, as a shared machine adds).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  calibrate,
  chooseRows,
  expectedFirstProof,
  rowsThatFit,
  scheduleOf,
  stepMs,
  costWords,
  scheduleWords,
  worstCaseSeconds,
  waveFinishTimes,
  RECIPE_ANSWERS,
  type StepCost,
} from '../../backend/model/schedule';

/**
 * Test double of a device (a TimeStep): its step time is a known function, the cost model's exact cost plus, on
 * every other call, a burst of extra time (another process). No model runs.
 */
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

test('calibrated on a CPU-like device the schedule takes one or two rows, on a GPU-like device eight', async () => {
  const cpu = await calibrate(scriptedDevice(CPU).time);
  const gpu = await calibrate(scriptedDevice(GPU).time);
  for (const [fitted, known] of [
    [cpu, CPU],
    [gpu, GPU],
  ] as const)
    for (const k of ['a', 'm', 'b'] as const) assert.ok(Math.abs(fitted[k] - known[k]) <= 1e-9 * Math.max(1, known[k]));
  const onCpu = scheduleOf(cpu, { calibratedNow: true })!;
  const onGpu = scheduleOf(gpu)!;
  assert.ok(onCpu.rows >= 1 && onCpu.rows <= 2, `CPU: ${onCpu.rows}`);
  assert.equal(onGpu.rows, 8);
  assert.equal(onCpu.from, 'calibration');
  assert.ok(onCpu.calibratedNow && !onGpu.calibratedNow);
  assert.equal(
    onGpu.expectedFirstProofSeconds,
    onGpu.estimates.find((e) => e.rows === 8)!.expectedSeconds,
    'the figure shown is the estimate of the rows chosen',
  );
  assert.ok(onGpu.expectedFirstProofSeconds! < onCpu.expectedFirstProofSeconds!);
  // The override wins, keeps the cost and gets its own estimate; without a cost only the override gives rows.
  const forced = scheduleOf(cpu, { override: 4 })!;
  assert.equal(forced.rows, 4);
  assert.equal(forced.from, 'setting');
  assert.equal(forced.expectedFirstProofSeconds, expectedFirstProof(cpu, 4).expectedSeconds);
  assert.equal(scheduleOf(undefined), undefined);
  assert.deepEqual(scheduleOf(undefined, { override: 3 }), {
    rows: 3,
    from: 'setting',
    cost: undefined,
    estimates: [],
    calibratedNow: false,
  });
  // Memory bounds the candidates: a GPU with room for two rows only takes two.
  assert.equal(scheduleOf(gpu, { candidates: [1, 2] })!.rows, 2);
});

test('the worst case under the cost model: every answer at the token limit, wave after wave, every turn', () => {
  const cost: StepCost = { a: 10, m: 0, b: 0 };
  // 10 ms a step whatever the rows: 4 samples in waves of 2 at 100 tokens = 2 waves of 1 s; two turns: 4 s.
  assert.equal(worstCaseSeconds(cost, { rows: 2, samples: 4, maxTokens: 100, turns: 2, promptTokens: 0 }), 4);
  // A last wave shorter than the rest; all at once is one wave.
  assert.equal(worstCaseSeconds(cost, { rows: 2, samples: 3, maxTokens: 100, turns: 1, promptTokens: 0 }), 2);
  assert.equal(worstCaseSeconds(cost, { rows: 4, samples: 4, maxTokens: 100, turns: 1, promptTokens: 0 }), 1);
  assert.equal(
    costWords({ a: 25, m: 20, b: 8e-3 }),
    '25.0 ms + 20.0 ms per further row + 8.00 µs per cached token a step',
  );
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

test("a schedule's words say a first proof under a minute in seconds, as the engine choice beside them does", () => {
  // A fast device: the expected first proof is under a minute; "0 min" or "1 min" would misstate it.
  const fast: StepCost = { a: 0.5, m: 0.01, b: 1e-6 };
  const s = scheduleOf(fast, { candidates: [8] })!;
  assert.ok(s.expectedFirstProofSeconds! < 60, `expected ${s.expectedFirstProofSeconds} s`);
  const words = scheduleWords(s);
  assert.match(words, new RegExp(`expected first proof ~${Math.round(s.expectedFirstProofSeconds!)} s over`), words);
  // A slow one in minutes, rounded.
  const slow = scheduleOf(CPU, { candidates: [1] })!;
  assert.match(
    scheduleWords(slow),
    new RegExp(`expected first proof ~${Math.round(slow.expectedFirstProofSeconds! / 60)} min over`),
  );
});
