// Differential check against the recipe itself: fixtures/recipe-golden.json holds what the recipe's own
// Python functions answered for the same deterministic variants (see fixtures/mutations.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkAnswer } from '../../backend/prover/format';
import { extractProof } from '../../backend/prover/extract';
import { mutationCases } from './fixtures/mutations';

interface Golden {
  cases: number;
  seed: number;
  results: { error: string; proof: string; finalCode: string | null }[];
}
const golden = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'recipe-golden.json'), 'utf8')) as Golden;

test('format errors, extracted proofs and final code match the recipe on 400 answer variants', () => {
  const cases = mutationCases(golden.cases, golden.seed);
  assert.equal(cases.length, golden.results.length);
  const seen = new Set<string>();
  cases.forEach((c, i) => {
    const expected = golden.results[i];
    const format = checkAnswer(c.response, c.statement);
    const proof = extractProof(c.response, c.statement);
    assert.deepEqual(
      { error: format.error, proof: proof.ok ? proof.code : proof.reason, finalCode: format.finalCode },
      expected,
      `case ${i}`,
    );
    seen.add(expected.error);
  });
  // The variants reach every error the recipe can produce with its defaults.
  assert.deepEqual([...seen].sort(), [
    'GENERATION_REPEATS',
    'INSUFFICIENT_TACTICS_BLOCKS',
    'INVALID_LEAN4_CODE_BLOCK_COUNT',
    'INVALID_THINK_BLOCK_COUNT',
    'LEAN4_CODE_NOT_START_WITH_STATEMENT',
    'NONE',
    'NO_VALID_LEAN4_CODE_BLOCK',
    'NO_VALID_THINK_BLOCK',
    'TACTICS_LEAN4_NOT_MATCH',
    'TACTIC_BLOCK_FORMATTING_ERROR',
    'TACTIC_CODE_TOO_MANY_LINES',
  ]);
});
