// The Python trainer's own unit tests (backend/trainer/tests, unittest) in the suite's environment.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { testPython, trainerSource } from './pythonSetup';

test('python unittest: fix cache, run config, request chunking, chat helpers', { timeout: 120_000 }, async () => {
  const python = await testPython();
  const r = spawnSync(python, ['-m', 'unittest', 'discover', '-s', 'tests', '-t', '.', '-v'], {
    cwd: trainerSource,
    encoding: 'utf8',
  });
  const out = `${r.stdout}\n${r.stderr}`;
  assert.equal(r.status, 0, out);
  const ran = /Ran (\d+) tests?/.exec(out);
  assert.ok(ran && Number(ran[1]) >= 10, out);
  assert.match(out, /\nOK\s*$/);
});
