// Opt-in: the prove loop with a real Kimina model folder and a real Lean project (skipped unless both are set).
//   KIMINA_TEST_MODEL_DIR=~/.kimina/models/AI-MO--Kimina-Prover-RL-0.6B KIMINA_TEST_LEAN_PROJECT=examples npm run test:unit
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openApp } from '../../backend/app/app';
import { readSettings } from '../../backend/settings/settings';
import { prove } from '../../backend/prover/prove';

const modelDir = process.env.KIMINA_TEST_MODEL_DIR;
const project = process.env.KIMINA_TEST_LEAN_PROJECT;

test(
  'a real model and Lean prove the algebra example',
  { skip: !(modelDir && project) && 'set KIMINA_TEST_MODEL_DIR and KIMINA_TEST_LEAN_PROJECT', timeout: 30 * 60_000 },
  async () => {
    const app = openApp({
      settings: readSettings({
        ...process.env,
        KIMINA_MODEL: modelDir,
        KIMINA_LEAN_PROJECT: project,
        KIMINA_DB: ':memory:',
      }),
      log: () => {},
    });
    try {
      const deps = { engine: await app.engine(), verifier: app.verifier().verifier, store: app.attempts() };
      const code = readFileSync(join(__dirname, '..', '..', 'examples', 'algebra_example.lean'), 'utf8');
      const result = await prove({ code, samples: 4, fixTurns: 1, maxTokens: 8192 }, deps);
      assert.ok(result.attempts.length >= 1);
      for (const a of result.attempts)
        assert.ok(a.think.length > 0 || a.format.error !== 'NONE', 'a well-formed answer thinks first');
      assert.equal(
        result.status,
        'proved',
        JSON.stringify(result.attempts.map((a) => [a.format.error, a.verdict?.reason])),
      );
    } finally {
      await app.close();
    }
  },
);
