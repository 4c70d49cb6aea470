// kimina.rowsAtOnce capped by memory: rows above those whose caches at the recipe's 24,576-token answers fit half
// the memory beside the weights are lowered to them (one row at the least), and the schedule, the status line,
// the prover's schedule line and the log say so. Scripted memory sizes (the engines' totalMemory option, a
// stated 16 GiB laptop); the schedule code and the real onnx engine on the tiny model are real.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OnnxEngine } from '../../backend/model/onnx/engine';
import { recipeRowsThatFit, cacheBytesPerToken } from '../../backend/model/onnx/memoryPlan';
import { qwen3ShapeFromConfig } from '../../backend/model/onnx/qwen3Config';
import { shapes } from './onnx/kiminaShapes';
import { ONNX_DATA_FILE } from '../../backend/model/onnx/modelFolder';
import { RECIPE_ANSWERS, scheduleOf, scheduleWords, type StepCost } from '../../backend/model/schedule';
import { calibratedCost, storedSchedules, storeCalibration } from '../../backend/model/calibrationFile';
import { writeTinyModel } from '../../backend/demo/models/tinyModel';
import { proveSchedule } from '../../backend/prover/waves';
import { DEFAULT_SETTINGS } from '../../backend/prover/request';

const gib = 2 ** 30;
const CPU: StepCost = { a: 25, m: 20, b: 8e-3 };
const SHAPE_1_7B = shapes['1.7B'];

test('scheduleOf: an override above what fits is lowered to it, one row at the least; one that fits stays', () => {
  const lowered = scheduleOf(CPU, { candidates: [1, 2], override: 16, fit: 2 })!;
  assert.equal(lowered.rows, 2);
  assert.equal(lowered.from, 'setting');
  assert.equal(lowered.loweredFrom, 16);
  assert.match(scheduleWords(lowered), /2 rows at once \(kimina\.rowsAtOnce 16 lowered to 2: .*would not fit half/);
  assert.equal(scheduleOf(CPU, { candidates: [1], override: 4, fit: 0 })!.rows, 1);
  const kept = scheduleOf(CPU, { candidates: [1, 2, 4], override: 3, fit: 5 })!;
  assert.equal(kept.rows, 3);
  assert.equal(kept.loweredFrom, undefined);
  assert.match(scheduleWords(kept), /3 rows at once \(kimina\.rowsAtOnce\)/);
  // No cost model (a path without a step probe): the override alone, lowered alike.
  assert.equal(scheduleOf(undefined, { override: 8, fit: 3 })!.rows, 3);
});

test('a 16 GiB laptop, the 1.7B shape, its float32 cache: kimina.rowsAtOnce 8 runs 1 row (two rows would not fit)', () => {
  const weights = 1.2 * gib; // about the 4-bit folder's size (test/model/onnx/memoryPlan.test.ts computes it)
  const fit = recipeRowsThatFit(SHAPE_1_7B, 'fp32', weights, 16 * gib);
  const row = cacheBytesPerToken(SHAPE_1_7B, 'fp32') * RECIPE_ANSWERS.maxTokens;
  assert.ok(weights + row <= 8 * gib && weights + 2 * row > 8 * gib, 'one row fits half of 16 GiB, two do not');
  assert.equal(fit, 1);
  const s = scheduleOf(CPU, { candidates: [1], override: 8, fit })!;
  assert.deepEqual([s.rows, s.loweredFrom], [1, 8]);
  // 32 GiB: two float32 rows (5.25 GiB each) fit 16 GiB beside the weights, so 8 is lowered to 2; five of
  // llama.cpp's float16 rows (2.63 GiB each).
  assert.equal(
    scheduleOf(CPU, { override: 8, fit: recipeRowsThatFit(SHAPE_1_7B, 'fp32', weights, 32 * gib) })!.rows,
    2,
  );
  assert.equal(
    scheduleOf(CPU, { override: 8, fit: recipeRowsThatFit(SHAPE_1_7B, 'fp16', weights, 32 * gib) })!.rows,
    5,
  );
});

test('the real onnx engine on the tiny model with a scripted memory size: kimina.rowsAtOnce 64 lowered, said in the log, the status and the prover line', async () => {
  const home = mkdtempSync(join(tmpdir(), 'kimina-rowscap-'));
  after(() => rmSync(home, { recursive: true, force: true }));
  const dir = writeTinyModel(join(home, 'tiny')).dir;
  const weights = statSync(join(dir, 'onnx', ONNX_DATA_FILE)).size;
  const shape = qwen3ShapeFromConfig(
    JSON.parse((await import('node:fs')).readFileSync(join(dir, 'config.json'), 'utf8')),
  );
  const row = cacheBytesPerToken(shape, 'fp32') * RECIPE_ANSWERS.maxTokens;
  const totalMemory = 2 * (weights + 3.5 * row); // room for three float32 rows in half of it
  // The calibration read back, not timed (its figures do not matter here): the key the engine keeps it under.
  const lines: string[] = [];
  const engine = await OnnxEngine.load(dir, { threads: 1, rowsAtOnce: 64, totalMemory, log: (l) => lines.push(l) });
  try {
    assert.equal(engine.kvCache.precision, 'fp32');
    const key = `${engine.runtime.path}/fp32/${engine.runtime.threads}t/${engine.runtime.device}/${(await import('node:os')).cpus()[0]?.model ?? 'cpu'}`;
    storeCalibration(dir, key, CPU);
    const s = await engine.schedule();
    assert.equal(s?.rows, 3);
    assert.equal(s?.loweredFrom, 64);
    assert.equal(s?.calibratedNow, false, 'the stored calibration was read');
    assert.ok(
      lines.some((l) => /^onnx: kimina\.rowsAtOnce 64 lowered to 3: /.test(l)),
      lines.join('\n'),
    );
    assert.match(engine.detail, /3 rows at once \(kimina\.rowsAtOnce 64 lowered to 3: /);
    const line = await proveSchedule(engine, { ...DEFAULT_SETTINGS, samples: 8 });
    assert.equal(line.rows, 3);
    assert.match(line.text, /3 of 8 samples at once, 3 waves \(kimina\.rowsAtOnce 64 lowered to 3: /);
    // `kimina model list`'s stored schedules are lowered alike on this memory.
    const listed = storedSchedules(dir, 64, totalMemory).find((x) => x.key === key)!;
    assert.deepEqual([listed.schedule.rows, listed.schedule.loweredFrom], [3, 64]);
  } finally {
    await engine.close();
  }
  // Twice the memory: the setting stays below what fits and is not lowered.
  const roomy = await OnnxEngine.load(dir, {
    threads: 1,
    rowsAtOnce: 5,
    totalMemory: 2 * (weights + 8 * row),
    log: () => undefined,
  });
  try {
    const s = await roomy.schedule();
    assert.deepEqual([s?.rows, s?.loweredFrom], [5, undefined]);
  } finally {
    await roomy.close();
  }
});

test('a damaged calibration.json is no stored cost model: the engine times it again, and the listing skips it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-calfile-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'calibration.json');
  for (const text of ['null', '[3]', JSON.stringify({ k: 'fast' }), JSON.stringify({ k: { a: 'x', m: 1, b: 1 } })]) {
    writeFileSync(file, text);
    assert.deepEqual(storedSchedules(dir), [], text);
    let timed = 0;
    const { cost, calibratedNow } = await calibratedCost(dir, 'k', async () => (timed++, CPU));
    assert.equal(timed, 1, `${text}: timed now`);
    assert.deepEqual([cost, calibratedNow], [CPU, true]);
    assert.deepEqual((await calibratedCost(dir, 'k', async () => assert.fail('stored now'))).cost, CPU);
  }
});
