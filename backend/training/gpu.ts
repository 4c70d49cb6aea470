// GPU status from nvidia-smi (absent on CPU machines: reported, not an error).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { GpuReport, GpuStatus } from '../protocol';

const execFileAsync = promisify(execFile);

export type GpuProbe = () => Promise<GpuReport>;

function parseNvidiaSmi(csv: string): GpuStatus[] {
  return csv
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [index, name, used, total, util] = line.split(',').map((s) => s.trim());
      return {
        index: Number(index),
        name,
        memoryUsedMb: Number(used),
        memoryTotalMb: Number(total),
        utilizationPct: Number(util),
      };
    })
    .filter((g) => Number.isFinite(g.index));
}

/** Asks nvidia-smi, run with the base environment the root handed down (Settings.childEnv). */
export const nvidiaSmiProbe =
  (env: NodeJS.ProcessEnv): GpuProbe =>
  async () => {
    try {
      const { stdout } = await execFileAsync(
        'nvidia-smi',
        ['--query-gpu=index,name,memory.used,memory.total,utilization.gpu', '--format=csv,noheader,nounits'],
        { timeout: 10_000, env, windowsHide: true },
      );
      return { available: true, gpus: parseNvidiaSmi(stdout) };
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      return {
        available: false,
        gpus: [],
        note:
          code === 'ENOENT'
            ? 'nvidia-smi not found: no NVIDIA GPU, training runs on the CPU'
            : `nvidia-smi failed: ${(err as Error).message}`,
      };
    }
  };

/** GPU ids of a run's GPU set ("0,1"); empty for "cpu". */
function gpuIds(gpus: string): string[] {
  return gpus === 'cpu'
    ? []
    : gpus
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
}

/** Two runs conflict when their GPU sets share a GPU (CPU runs conflict with each other: one at a time). */
export function gpuSetsOverlap(a: string, b: string): boolean {
  if (a === 'cpu' || b === 'cpu') return a === b;
  const ids = new Set(gpuIds(a));
  return gpuIds(b).some((g) => ids.has(g));
}

/** Idle: under 10 % utilisation and under 1 GiB used on every GPU of the set. */
export function gpusIdle(report: GpuReport, gpus: string, usedMbLimit = 1024, utilLimit = 10): boolean {
  if (gpus === 'cpu') return true;
  const wanted = new Set(gpuIds(gpus).map(Number));
  const relevant = report.gpus.filter((g) => wanted.has(g.index));
  return relevant.length > 0 && relevant.every((g) => g.utilizationPct < utilLimit && g.memoryUsedMb < usedMbLimit);
}
