// The device calibrations kept beside a model (`calibration.json` in its folder): one cost model (schedule.ts) per
// engine and the settings its speed depends on, written by the engine at first run, read back after, and listed by
// `kimina model list` with the row count each implies. Keys:
//   onnx:  `<path>/<cache>/<threads>t/<device>/<CPU>`          (c-api-gqa/fp32/2t/cpu/Intel Xeon …)
//   llama: `llama/<weights>/<backend>/<threads>t/<device or CPU>` (llama/q8_0/cuda/8t/NVIDIA H100)
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { scheduleOf, type Schedule, type StepCost } from './schedule';
import { recipeRowsThatFit, rowCandidates } from './onnx/memoryPlan';
import { qwen3ShapeFromConfig, type Qwen3Shape } from './onnx/qwen3Config';
import { ONNX_DATA_FILE } from './onnx/modelFolder';

const FILE = 'calibration.json';

/** A stored cost model; `memory`: the bytes its engine capped the rows against (a GPU's memory), when not the machine's. */
type StoredCost = StepCost & { memory?: number };

/** Whether a stored entry is a cost model (a hand-edited or half-written file holds anything). */
function isStoredCost(v: unknown): v is StoredCost {
  if (typeof v !== 'object' || v === null) return false;
  const c = v as Record<string, unknown>;
  const finite = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  return finite(c.a) && finite(c.m) && finite(c.b) && (c.memory === undefined || finite(c.memory));
}

/** The stored cost models by key; empty when there are none or the file is unreadable; entries that are not skipped. */
function readCalibrations(dir: string): Record<string, StoredCost> {
  const file = join(dir, FILE);
  try {
    const all: unknown = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    if (typeof all !== 'object' || all === null || Array.isArray(all)) return {};
    return Object.fromEntries(Object.entries(all).filter(([, v]) => isStoredCost(v)));
  } catch {
    return {};
  }
}

/** Adds one; a read-only model folder keeps nothing (the engine calibrates again next time). */
export function storeCalibration(dir: string, key: string, cost: StoredCost): void {
  const stored = { ...readCalibrations(dir), [key]: cost };
  try {
    writeFileSync(join(dir, FILE), JSON.stringify(stored, null, 2) + '\n');
  } catch {
    /* read-only */
  }
}

/**
 * The cost model stored under `key` beside the model, else the one `measure` times now, stored (what both in-process
 * engines' schedules start from; `calibratedNow` says which).
 */
export async function calibratedCost(
  dir: string,
  key: string,
  measure: () => Promise<StoredCost>,
): Promise<{ cost: StoredCost; calibratedNow: boolean }> {
  const stored = readCalibrations(dir)[key];
  if (stored) return { cost: stored, calibratedNow: false };
  const cost = await measure();
  storeCalibration(dir, key, cost);
  return { cost, calibratedNow: true };
}

/** The model's shape from config.json in the folder or its checkpoint/ subfolder; undefined when neither reads. */
export function modelShapeOf(dir: string): Qwen3Shape | undefined {
  for (const d of [dir, join(dir, 'checkpoint')]) {
    try {
      return qwen3ShapeFromConfig(JSON.parse(readFileSync(join(d, 'config.json'), 'utf8')));
    } catch {
      /* the next */
    }
  }
  return undefined;
}

/**
 * The most rows a llama.cpp context may decode at once: rows of the recipe's longest answers whose float16 caches
 * (node-llama-cpp's default cache type) fit half of `memory` (the GPU's, or the machine's on the CPU) beside the GGUF.
 */
export function llamaRowsThatFit(shape: Qwen3Shape, ggufBytes: number, memory: number): number {
  return recipeRowsThatFit(shape, 'fp16', ggufBytes, memory);
}

/** The cache precision and weights file size a key's rows are capped with. */
function cachePlanOf(dir: string, key: string): { precision: 'fp32' | 'fp16' | 'int8'; weights: number } {
  const [first, second] = key.split('/');
  if (first === 'llama') {
    const gguf = join(dir, 'gguf', `model.${second}.gguf`);
    return { precision: 'fp16', weights: statSync(gguf, { throwIfNoEntry: false })?.size ?? 0 };
  }
  const weights = statSync(join(dir, 'onnx', ONNX_DATA_FILE), { throwIfNoEntry: false })?.size ?? 0;
  return { precision: second === 'int8' ? 'int8' : 'fp32', weights };
}

/**
 * Each stored calibration with the schedule it gives on this machine: the rows its cache (the key's) lets fit
 * at the recipe's longest answers beside the weights, or `override` (kimina.rowsAtOnce) when above 0, lowered to
 * those that fit.
 */
export function storedSchedules(
  dir: string,
  override = 0,
  totalMemory = totalmem(),
): { key: string; schedule: Schedule }[] {
  const stored = Object.entries(readCalibrations(dir));
  if (stored.length === 0) return [];
  const shape = modelShapeOf(dir);
  return stored.map(([key, { a, m, b, memory }]) => {
    const plan = cachePlanOf(dir, key);
    const fit = shape ? recipeRowsThatFit(shape, plan.precision, plan.weights, memory ?? totalMemory) : undefined;
    const candidates = fit === undefined ? undefined : rowCandidates(fit);
    return { key, schedule: scheduleOf({ a, m, b }, { candidates, override, fit })! };
  });
}
