// The router factory `kimina serve` mounts: the app's database (KIMINA_DB), the training folder
// (KIMINA_TRAINING_DIR), the App's training service, and resuming runs after a restart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrainingRunsResponse } from '../../backend/protocol';
import { createApp, listen, type ApiContext } from '../../backend/api/server';
import { openDb } from '../../backend/store/db';
import { TrainingStore } from '../../backend/store/training';
import { presetHyper } from '../../backend/training/presets';
import { trainingRouterFactory } from '../../backend/api/trainingMount';
import { openApp } from '../../backend/app/app';
import { apiContextOf } from '../../backend/app/serve';
import { readSettings } from '../../backend/settings/settings';
import { standInReplCommand } from '../../backend/demo/stand-in-repl';

test(
  'mounted like kimina serve: lists runs from KIMINA_DB and re-queues a run that was running',
  { timeout: 60_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kimina-service-'));
    const saved = {
      db: process.env.KIMINA_DB,
      training: process.env.KIMINA_TRAINING_DIR,
      python: process.env.KIMINA_TRAINER_PYTHON,
    };
    process.env.KIMINA_DB = join(dir, 'kimina.db');
    process.env.KIMINA_TRAINING_DIR = join(dir, 'training');
    process.env.KIMINA_TRAINER_PYTHON = join(dir, 'no-venv', 'bin', 'python'); // so the resumed run cannot start a trainer
    // A run the previous server left 'running'.
    const before = openDb(process.env.KIMINA_DB);
    new TrainingStore(before).createRun({
      id: 'run-old',
      name: 'old',
      preset: 'tiny-cpu',
      model: 'm',
      gpus: 'cpu',
      schedule: 'now',
      hyper: presetHyper('tiny-cpu'),
      outputDir: join(dir, 'training', 'run-old', 'output'),
      trainPrompts: 1,
      heldOutPrompts: 0,
    });
    new TrainingStore(before).updateRun('run-old', { state: 'running', pid: 999_999_999 });
    before.close();
    mkdirSync(join(dir, 'training', 'run-old'), { recursive: true });
    writeFileSync(
      join(dir, 'training', 'run-old', 'train.jsonl'),
      '{"prompt_id":"p","prompt":[],"formal_statement":"theorem t : True := by"}\n',
    );

    // the routers' context as `kimina serve` builds it: an App over this test's database, with the stand-in REPL
    const owner = openApp({
      settings: readSettings(),
      verifier: { replCommand: standInReplCommand(), sandbox: 'none', replMemoryMb: 0, initRepls: {}, maxRepls: 1 },
    });
    const ctx: ApiContext = apiContextOf(owner, { token: undefined, backendUrl: () => undefined, onClose: () => {} });
    const app = await createApp(ctx, [() => trainingRouterFactory(ctx)]);
    const http = await listen(app, '127.0.0.1', 0, undefined);
    try {
      const res = await fetch(`${http.url}/v1/training/runs`);
      assert.equal(res.status, 200);
      const { runs } = (await res.json()) as TrainingRunsResponse;
      assert.deepEqual(
        runs.map((r) => r.id),
        ['run-old'],
      );
      // recover() runs shortly after start: the run is re-queued and, with no trainer environment, fails with the setup hint.
      const deadline = Date.now() + 20_000;
      let state = '';
      let error = '';
      while (Date.now() < deadline) {
        const r = (await (await fetch(`${http.url}/v1/training/runs/run-old`)).json()) as {
          state: string;
          error: string | null;
        };
        state = r.state;
        error = r.error ?? '';
        if (state === 'failed') break;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      assert.equal(state, 'failed');
      assert.match(error, /kimina trainer setup/);
      const gpus = (await (await fetch(`${http.url}/v1/training/gpus`)).json()) as { available: boolean };
      assert.equal(typeof gpus.available, 'boolean');
    } finally {
      await http.close();
      await owner.close();
      for (const [k, v] of [
        ['KIMINA_DB', saved.db],
        ['KIMINA_TRAINING_DIR', saved.training],
        ['KIMINA_TRAINER_PYTHON', saved.python],
      ] as const) {
        if (v === undefined) delete process.env[k];
        else process.env[k] = v;
      }
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
