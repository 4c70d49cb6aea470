// The device calibrations kept beside a model (`calibration.json` in its folder): one cost model (schedule.ts) per
// decoding path, KV cache, threads, device and CPU, written by the engine at first run, read back after, and
// listed by `kimina model list` with the row count each implies.
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { scheduleOf, type Schedule, type StepCost } from '../schedule';
import { recipeRowsThatFit, rowCandidates } from './memoryPlan';
import { ONNX_DATA_FILE, readModelFolder } from './modelFolder';

const FILE = 'calibration.json';

/** The stored cost models by key (`path/cache/threads t/device/CPU`); empty when there are none or the file is unreadable. */
export function readCalibrations(dir: string): Record<string, StepCost> {
  const file = join(dir, FILE);
  try {
    return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, StepCost>) : {};
  } catch {
    return {};
  }
}

/** Adds one; a read-only model folder keeps nothing (the engine calibrates again next time). */
export function storeCalibration(dir: string, key: string, cost: StepCost): void {
  const stored = { ...readCalibrations(dir), [key]: cost };
  try {
    writeFileSync(join(dir, FILE), JSON.stringify(stored, null, 2) + '\n');
  } catch {
    /* read-only */
  }
}

/**
 * Each stored calibration with the schedule it gives on this machine: the rows its cache (the key's) lets fit
 * at the recipe's longest answers beside the weights, or `override` (kimina.rowsAtOnce) when above 0.
 */
export function storedSchedules(
  dir: string,
  override = 0,
  totalMemory = totalmem(),
): { key: string; schedule: Schedule }[] {
  const stored = Object.entries(readCalibrations(dir));
  if (stored.length === 0) return [];
  let shape: ReturnType<typeof readModelFolder>['shape'] | undefined;
  try {
    shape = readModelFolder(dir).shape;
  } catch {
    shape = undefined;
  }
  const weights = statSync(join(dir, 'onnx', ONNX_DATA_FILE), { throwIfNoEntry: false })?.size ?? 0;
  return stored.map(([key, cost]) => {
    const precision = key.split('/')[1] === 'int8' ? 'int8' : 'fp32';
    const candidates = shape ? rowCandidates(recipeRowsThatFit(shape, precision, weights, totalMemory)) : undefined;
    return { key, schedule: scheduleOf(cost, { candidates, override })! };
  });
}
