import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { checkLine } from '../../backend/prover/checkLine';
import { STATEMENT, WELL_FORMED } from '../../backend/demo/kiminaExamples';

const root = join(__dirname, '..', '..');
const PROOF =
  'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  have h₁ : 2 * x = 8 := by linarith\n  linarith';

test('checkLine: response, messages, and each kind of bad input', () => {
  assert.deepEqual(checkLine(JSON.stringify({ statement: STATEMENT, response: WELL_FORMED })), {
    ok: true,
    error: 'NONE',
    proof: PROOF,
  });
  assert.deepEqual(
    checkLine(JSON.stringify({ statement: STATEMENT, response: WELL_FORMED + '\nDone.' })),
    { ok: false, error: 'NO_VALID_LEAN4_CODE_BLOCK', proof: PROOF },
    'extraction does not depend on the format',
  );
  const messages = [
    { role: 'user', content: 'p' },
    { role: 'assistant', content: WELL_FORMED.replace('<think>', '') },
    { role: 'user', content: 'f' },
    { role: 'assistant', content: WELL_FORMED },
  ];
  assert.deepEqual(checkLine(JSON.stringify({ statement: STATEMENT, messages })), {
    ok: false,
    error: 'NO_VALID_THINK_BLOCK',
    proof: PROOF,
  });
  const bad = (line: string) => checkLine(line).error;
  assert.match(bad('{not json'), /^invalid input: not JSON/);
  assert.match(bad('[1]'), /expected a JSON object/);
  assert.match(bad('{"response": "x"}'), /"statement" must be a string/);
  assert.match(bad('{"statement": "s"}'), /exactly one of "response" or "messages"/);
  assert.match(bad('{"statement": "s", "response": "r", "messages": []}'), /exactly one of/);
  assert.match(bad('{"statement": "s", "messages": [{"role": "robot", "content": "x"}]}'), /messages\[0\]\.role/);
  assert.match(bad('{"statement": "s", "messages": [{"role": "user", "content": "x"}]}'), /no assistant message/);
  assert.match(bad('   '), /empty line/);
});

test('kimina format-check: one output line per input line, in order, bad lines do not stop the rest', () => {
  const input = [
    JSON.stringify({ statement: STATEMENT, response: WELL_FORMED }),
    '{"statement": 1}',
    JSON.stringify({ statement: STATEMENT, response: 'no think, no code' }),
    '',
  ].join('\n');
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(root, 'backend/cli.ts'), 'format-check'], {
    cwd: root,
    input,
    encoding: 'utf8',
  });
  const out = r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { ok: boolean; error: string; proof: string | null });
  assert.equal(out.length, 3);
  assert.deepEqual(out[0], { ok: true, error: 'NONE', proof: PROOF });
  assert.match(out[1].error, /^invalid input: "statement" must be a string/);
  assert.deepEqual(out[2], { ok: false, error: 'NO_VALID_LEAN4_CODE_BLOCK', proof: null });
  assert.equal(r.status, 1, 'an invalid line makes the exit status 1');
});
