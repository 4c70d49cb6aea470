// The verl-load test's own Python environment: test/trainer/.venv-verl (git-ignored), created once from
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
