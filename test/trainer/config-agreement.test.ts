// The preset values and the Python trainer agree: for every preset, the run config the backend writes is read by
// kimina_trainer.config.load_config (every key required, no Python defaults) and comes back value for value.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TrainingPresetName } from '../../backend/protocol';
import { PRESETS, presetHyper } from '../../backend/training/presets';
import { trainerConfig } from '../../backend/training/trainerProcess';
import { removeDir, tempDir } from './harness';
import { testPython, trainerSource } from './pythonSetup';

const execFileAsync = promisify(execFile);

test("every preset's run config loads in the Python trainer unchanged", { timeout: 120_000 }, async () => {
  const python = await testPython();
  const dir = tempDir('kimina-config-');
  try {
    for (const name of Object.keys(PRESETS) as TrainingPresetName[]) {
      const config = trainerConfig({
        runId: 'r',
        backendUrl: 'http://127.0.0.1:1',
        model: 'm',
        outputDir: dir,
        trainFile: 't',
        heldOutFile: null,
        hyper: presetHyper(name),
        cpu: name === 'tiny-cpu',
      });
      const file = join(dir, `${name}.json`);
      writeFileSync(file, JSON.stringify(config));
      const { stdout } = await execFileAsync(
        python,
        [
          '-c',
          'import dataclasses, json, sys\nfrom kimina_trainer.config import load_config\nprint(json.dumps(dataclasses.asdict(load_config(sys.argv[1]))))',
          file,
        ],
        { env: { ...process.env, PYTHONPATH: trainerSource } },
      );
      const loaded = JSON.parse(stdout) as Record<string, unknown>;
      for (const [k, v] of Object.entries(config)) {
        assert.deepEqual(loaded[k], v, `${name}: ${k}`);
      }
      assert.deepEqual(Object.keys(loaded).sort(), Object.keys(config).sort(), `${name}: the same keys on both sides`);
    }
    // A config missing a key is refused by the trainer, not filled in.
    const partial = trainerConfig({
      runId: 'r',
      backendUrl: 'u',
      model: 'm',
      outputDir: dir,
      trainFile: 't',
      heldOutFile: null,
      hyper: presetHyper('tiny-cpu'),
      cpu: true,
    });
    delete (partial as Record<string, unknown>).fix_sampling_rate;
    writeFileSync(join(dir, 'partial.json'), JSON.stringify(partial));
    const refused = await execFileAsync(
      python,
      [
        '-c',
        'import sys\nfrom kimina_trainer.config import load_config\nload_config(sys.argv[1])',
        join(dir, 'partial.json'),
      ],
      { env: { ...process.env, PYTHONPATH: trainerSource } },
    ).catch((e: { stderr: string }) => e);
    assert.match((refused as { stderr: string }).stderr, /missing run config keys .*: fix_sampling_rate/);
  } finally {
    removeDir(dir);
  }
});
