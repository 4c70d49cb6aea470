// The verl-load test's Python environments. test/trainer/.venv-verl (git-ignored), created once from
// backend/trainer/requirements-verl.txt (verl 0.5.0, the release the recipe's fork is built on) by the same
// code as `kimina trainer setup`, layered on the trainer suite's environment (test/trainer/.venv): torch and its
// CUDA wheels (~5 GB) are on disk once, and the layer adds ~0.9 GB. Later calls return at once.
import { join } from 'node:path';
import { ensurePythonEnv } from '../../backend/training/pythonEnv';
import { repoRoot, testPython, testVenv, trainerSource } from './pythonSetup';

const verlVenv = join(repoRoot, 'test', 'trainer', '.venv-verl');

let cached: Promise<string> | null = null;

export function verlPython(): Promise<string> {
  cached ??= testPython()
    .then(() =>
      ensurePythonEnv({
        env: process.env,
        dir: verlVenv,
        requirements: join(trainerSource, 'requirements-verl.txt'),
        layeredOn: testVenv,
        verifyModules: ['verl', 'hydra', 'torch', 'transformers', 'tensordict', 'ray'],
        onProgress: (line) => {
          if (/^(creating|installing|Successfully|pip failed)/.test(line)) console.log(`[verl env] ${line}`);
        },
      }),
    )
    .then((r) => {
      if (r.created) console.log(`[verl env] created in ${r.seconds.toFixed(0)} s: ${JSON.stringify(r.versions)}`);
      return r.python;
    });
  return cached;
}

// verl 0.9.1, the newest release (backend/trainer/requirements-verl-0.9.txt), in test/trainer/.venv-verl-0.9
// (git-ignored), layered on the trainer suite's environment the same way; the layer adds ~0.6 GB (ray, hydra,
// tensordict, transformers 5.10 which verl 0.9.1 requires below 5.11).
const verl09Venv = join(repoRoot, 'test', 'trainer', '.venv-verl-0.9');

let cached09: Promise<string> | null = null;

export function verl09Python(): Promise<string> {
  cached09 ??= testPython()
    .then(() =>
      ensurePythonEnv({
        env: process.env,
        dir: verl09Venv,
        requirements: join(trainerSource, 'requirements-verl-0.9.txt'),
        layeredOn: testVenv,
        verifyModules: ['verl', 'hydra', 'torch', 'tensordict', 'ray'],
        onProgress: (line) => {
          if (/^(creating|installing|Successfully|pip failed)/.test(line)) console.log(`[verl 0.9 env] ${line}`);
        },
      }),
    )
    .then((r) => {
      if (r.created) console.log(`[verl 0.9 env] created in ${r.seconds.toFixed(0)} s: ${JSON.stringify(r.versions)}`);
      return r.python;
    });
  return cached09;
}
