// What the managed-vLLM tests run against: the stand-in vLLM package (test/model/standInVllm/, a TEST DOUBLE of
// vLLM's OpenAI server) on PYTHONPATH of this machine's real python3 as the "trainer python", a stand-in
// `nvidia-smi` (TEST DOUBLE: a shell script that lists one GPU) on PATH, and a model folder with the real Qwen3
// tokenizer and a placeholder checkpoint (config.json and a safetensors file that the stand-in never reads).
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { engineConfigOf, type EngineConfig } from '../../../backend/model/index';
import type { VllmServerOptions } from '../../../backend/model/vllm/server';
import { readSettings, type Env } from '../../../backend/settings/settings';
import { QWEN3_DIR } from '../qwen3Fixture';

export const STAND_IN_VLLM = resolve(__dirname, '..', 'standInVllm');

/** The real interpreter behind `python3` (a pyenv shim needs PATH; the resolved one does not). */
export const PYTHON = spawnSync('python3', ['-c', 'import sys; print(sys.executable)'], {
  encoding: 'utf8',
}).stdout.trim();

export interface Rig {
  home: string;
  modelDir: string;
  /** A folder holding only the stand-in nvidia-smi. */
  gpuBin: string;
  /** A folder with nothing in it: no nvidia-smi. */
  emptyBin: string;
}

export function makeRig(): Rig {
  const root = mkdtempSync(join(tmpdir(), 'kimina-vllm-'));
  const modelDir = join(root, 'Kimina-Prover-Checkpoint');
  mkdirSync(modelDir);
  writeFileSync(join(modelDir, 'config.json'), JSON.stringify({ architectures: ['Qwen3ForCausalLM'] }));
  writeFileSync(join(modelDir, 'model.safetensors'), Buffer.alloc(16));
  for (const f of ['tokenizer.json', 'tokenizer_config.json'])
    if (existsSync(join(QWEN3_DIR, f))) copyFileSync(join(QWEN3_DIR, f), join(modelDir, f));
  const gpuBin = join(root, 'gpu-bin');
  mkdirSync(gpuBin);
  writeFileSync(
    join(gpuBin, 'nvidia-smi'),
    '#!/bin/sh\n# TEST DOUBLE of nvidia-smi -L: one GPU.\necho "GPU 0: NVIDIA Stand-In 80GB (UUID: GPU-00000000-0000-0000-0000-000000000000)"\n',
  );
  chmodSync(join(gpuBin, 'nvidia-smi'), 0o755);
  const emptyBin = join(root, 'empty-bin');
  mkdirSync(emptyBin);
  return { home: join(root, 'home'), modelDir, gpuBin, emptyBin };
}

/** The child environment: the stand-in GPU and vllm package, plus the test's knobs (STAND_IN_VLLM_*). */
export function childEnvOf(rig: Rig, extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return {
    HOME: rig.home,
    PATH: rig.gpuBin,
    PYTHONPATH: STAND_IN_VLLM,
    PYTHONUNBUFFERED: '1',
    STAND_IN_VLLM_LOAD_SECONDS: '0.3',
    ...extra,
  };
}

/**
 * VllmServer.start's options for the stand-in: this machine's python3, the rig's model, a small context; `env`
 * adds to the child environment (the test's knobs), `more` sets the rest (a grace, a timeout, another python).
 * The server's log lines are collected in `logs`.
 */
export function serverOptions(
  rig: Rig,
  logs: string[],
  env: NodeJS.ProcessEnv = {},
  more: Partial<VllmServerOptions> = {},
): VllmServerOptions {
  return {
    python: PYTHON,
    modelDir: rig.modelDir,
    servedModelName: 'm',
    maxModelLen: 1024,
    gpuMemoryUtilization: 0.5,
    seed: 0,
    env: childEnvOf(rig, env),
    log: (l) => logs.push(l),
    ...more,
  };
}

export function configOf(rig: Rig, env: Env = {}): EngineConfig {
  return engineConfigOf(
    readSettings({
      KIMINA_HOME: rig.home,
      KIMINA_ENGINE: 'vllm',
      KIMINA_MODEL: rig.modelDir,
      KIMINA_TRAINER_PYTHON: PYTHON,
      ...env,
    }),
  );
}

/** Whether a process is alive (a zombie, ended but not yet reaped, counts as gone). */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** The engine-core pids the stand-in logged (`(EngineCore_DP0 pid=N)`), in order of appearance. */
export function engineCorePids(logs: string[]): number[] {
  const pids = logs.flatMap((l) => [...l.matchAll(/EngineCore_DP0 pid=(\d+)/g)].map((m) => Number(m[1])));
  return [...new Set(pids)];
}

export async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
}
