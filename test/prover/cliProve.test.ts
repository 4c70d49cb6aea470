// `kimina prove` end to end: --demo runs the real CLI path with the scripted ONNX model and the stand-in
// REPL (test doubles), through generate -> format -> extract -> verify -> fix turn -> verified.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { ProveResult } from '../../backend/protocol';
import { parseTarget } from '../../backend/cli/prove';

const root = join(__dirname, '..', '..');
const kimina = (...args: string[]) =>
  spawnSync(process.execPath, ['--import', 'tsx', join(root, 'backend/cli.ts'), 'prove', ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: { ...process.env, NO_COLOR: '1' },
  });

test('kimina prove --demo --json: fix turn, verified, exit 0', { timeout: 90_000 }, () => {
  const r = kimina('examples/algebra_example.lean', '--demo', '--json', '--samples', '2');
  assert.equal(r.status, 0, r.stderr);
  const result = JSON.parse(r.stdout) as ProveResult;
  assert.equal(result.status, 'proved');
  assert.deepEqual([...new Set(result.attempts.map((a) => a.turn))], [1, 2]);
  assert.ok(
    result.attempts
      .filter((a) => a.turn === 1)
      .every((a) => a.verdict?.status === 'lean_error' && a.feedback?.startsWith('# Error 1:')),
  );
  assert.match(r.stderr, /DEMO: running with test doubles/);
});

test('kimina prove --demo streams the thinking, attempt lines and the proof', { timeout: 90_000 }, () => {
  const r = kimina('examples/algebra_example.lean:algebra_example', '--demo', '--samples', '1');
  assert.equal(r.status, 0, r.stderr);
  assert.ok(r.stdout.includes('The hypothesis is linear in x'), 'thinking streamed');
  assert.ok(r.stdout.includes('Proved. Verified proof:\n\nimport Mathlib\n\ntheorem algebra_example'));
  assert.match(r.stderr, /sample 1, turn 1: format ok, \d+ tokens; Lean lean_error/);
  assert.match(r.stderr, /sample 1, turn 2: format ok, \d+ tokens; Lean valid/);
  assert.match(r.stderr, /not Lean/);
});

test('bad usage exits 2 with a clear message', () => {
  const missing = kimina('examples/nope.lean', '--demo');
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /no such file: examples\/nope\.lean/);
  const wrongName = kimina('examples/algebra_example.lean:other', '--demo');
  assert.equal(wrongName.status, 2);
  assert.match(wrongName.stderr, /no theorem named 'other'/);
  const badFlag = kimina('examples/algebra_example.lean', '--samples', 'many');
  assert.equal(badFlag.status, 2);
  assert.match(badFlag.stderr, /--samples must be a number/);
  assert.equal(kimina('examples/algebra_example.lean', '--frobnicate').status, 2);
});

test('parseTarget: FILE, FILE:THEOREM, FILE:LINE', () => {
  assert.deepEqual(parseTarget('examples/algebra_example.lean'), { file: 'examples/algebra_example.lean' });
  assert.deepEqual(parseTarget('a.lean:foo.bar'), { file: 'a.lean', theorem: 'foo.bar' });
  assert.deepEqual(parseTarget('a.lean:12'), { file: 'a.lean', line: 12 });
  assert.deepEqual(parseTarget('a.lean:'), { file: 'a.lean' });
});
