import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseArgs, flagNumber } from '../../backend/cli/args';

test('parseArgs splits flags and positionals', () => {
  const p = parseArgs(['a.lean', '--samples', '4', '--json', '--timeout=30', 'b.lean'], ['json']);
  assert.deepEqual(p.positionals, ['a.lean', 'b.lean']);
  assert.equal(p.flags.get('json'), true);
  assert.equal(flagNumber(p, 'samples'), 4);
  assert.equal(flagNumber(p, 'timeout'), 30);
});

test('flagNumber rejects non-numbers with the flag name', () => {
  assert.throws(() => flagNumber(parseArgs(['--samples', 'many']), 'samples'), /--samples must be a number/);
});
