// The GPU check's folder (`kimina trainer gpu-check DIR`): what a GPU machine with no network and no Node needs to
// run the trainer's real GRPO step (backend/trainer/kimina_trainer/gpu_check.py): the run configurations from the
// backend's own presets, the wheels its Python image lacks (for Python 3.12, pinned by constraints-gpu.txt), and
// run.sh, which installs them into the folder and starts the check from the repository root.
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { trainerSourceDir } from './paths';
import { presetHyper } from './presets';
import { trainerConfig } from './trainerProcess';

/** What the GPU image lacks (torch, transformers, peft, accelerate, pyarrow, pandas, xxhash, fsspec are there). */
export const GPU_CHECK_PACKAGES = ['trl', 'datasets', 'dill', 'multiprocess'];
/** A device machine's working tree travels in 64 MiB with everything else: the wheels must leave room. */
const GPU_CHECK_WHEEL_BUDGET = 64 * 2 ** 20;

/**
 * The presets a training run on one GPU starts from, cut to a few short steps so the check fits a 15-minute lease:
 * 4 prompts x 8 samples per step, one update per generation (as verl's step), answers of `completionTokens`.
 */
export function gpuCheckConfigs(steps = 3, completionTokens = 1024): Record<string, Record<string, unknown>> {
  const short = {
    maxSteps: steps,
    promptsPerStep: 4,
    perDeviceBatch: 32,
    maxCompletionLength: completionTokens,
    maxPromptLength: 1024,
    saveSteps: 1000,
    evalSteps: 0,
  };
  const one = (preset: 'single-gpu-lora' | 'single-gpu-full') =>
    trainerConfig({
      runId: 'gpu-check',
      backendUrl: 'http://127.0.0.1:0',
      model: 'set by gpu_check.py',
      outputDir: 'set by gpu_check.py',
      trainFile: 'set by gpu_check.py',
      heldOutFile: null,
      hyper: presetHyper(preset, short),
      cpu: false,
    });
  return { lora: one('single-gpu-lora'), full: one('single-gpu-full') };
}

/** `name==version` for each package, from constraints-gpu.txt (the GPU environment's pins). */
function pinnedWheels(): string[] {
  const pins = new Map(
    readFileSync(join(trainerSourceDir(), 'constraints-gpu.txt'), 'utf8')
      .split('\n')
      .map((l) => /^([A-Za-z0-9_.-]+)==(\S+)/.exec(l.trim()))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1].toLowerCase(), m[2]]),
  );
  return GPU_CHECK_PACKAGES.map((name) => {
    const version = pins.get(name);
    if (!version) throw new Error(`constraints-gpu.txt pins no version of ${name}`);
    return `${name}==${version}`;
  });
}

const runScript = `#!/bin/sh
# The GPU check, on a machine with a CUDA GPU and the image's python3 (3.12): run from the repository root.
#   sh gpu-check/run.sh [--shapes 0.6b,1.7b] [--modes lora,full]
# Installs the wheels beside this script into site/ (nothing outside this folder changes), then runs the trainer's
# real GRPO step (backend/trainer/kimina_trainer/gpu_check.py); the report goes to $OUT/gpu-check.json (or here).
set -e
here="$(cd "$(dirname "$0")" && pwd)"
python3 -m pip install --quiet --no-index --no-deps --target "$here/site" "$here"/wheels/*.whl
PYTHONPATH="$here/site:backend/trainer" PYTHONUNBUFFERED=1 \\
  python3 -m kimina_trainer.gpu_check --configs "$here/configs.json" --out "\${OUT:-$here}/gpu-check.json" "$@"
`;

export interface GpuCheckFolder {
  dir: string;
  wheels: string[];
  wheelBytes: number;
}

/** Writes configs.json, run.sh and (unless `wheels` is false) wheels/ with pip download for CPython 3.12 x86-64. */
export function prepareGpuCheck(
  dir: string,
  options: {
    python: string;
    wheels?: boolean;
    steps?: number;
    completionTokens?: number;
    /** The base environment pip runs with, handed down by the root (Settings.childEnv). */
    env: NodeJS.ProcessEnv;
  },
): GpuCheckFolder {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'configs.json'),
    JSON.stringify({ modes: gpuCheckConfigs(options.steps, options.completionTokens) }, null, 2) + '\n',
  );
  writeFileSync(join(dir, 'run.sh'), runScript);
  chmodSync(join(dir, 'run.sh'), 0o755);
  const wheelDir = join(dir, 'wheels');
  if (options.wheels !== false) {
    rmSync(wheelDir, { recursive: true, force: true });
    const args = ['-m', 'pip', 'download', '--quiet', '--no-deps', '--only-binary=:all:', '--dest', wheelDir];
    args.push('--python-version', '3.12', '--implementation', 'cp', '--abi', 'cp312', '--abi', 'none');
    args.push('--platform', 'manylinux_2_17_x86_64', '--platform', 'manylinux2014_x86_64', '--platform', 'any');
    const r = spawnSync(options.python, [...args, ...pinnedWheels()], { encoding: 'utf8', env: options.env });
    if (r.status !== 0) throw new Error(`pip download failed (exit ${r.status}): ${(r.stderr || r.stdout).trim()}`);
  }
  let wheels: string[] = [];
  try {
    wheels = readdirSync(wheelDir).filter((f) => f.endsWith('.whl'));
  } catch {
    /* no wheels asked for */
  }
  const wheelBytes = wheels.reduce((sum, f) => sum + statSync(join(wheelDir, f)).size, 0);
  if (wheelBytes > GPU_CHECK_WHEEL_BUDGET)
    throw new Error(`the wheels take ${(wheelBytes / 2 ** 20).toFixed(1)} MiB, over the 64 MiB a device run carries`);
  return { dir, wheels, wheelBytes };
}
