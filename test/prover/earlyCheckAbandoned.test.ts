// An answer whose first final `lean4` block (checked early, as soon as it closed) is not its last one: the early
// check is superseded by the last block's check, but Lean may still accept the first block afterwards. Whatever
// wins, the reported proof must be the code Lean verified (never the other block's), and a win must never come
// with no proof. A scripted engine and a stand-in verifier (test doubles, doubles.ts) fix the order.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prove } from '../../backend/prover/prove';
import { WELL_FORMED } from '../../backend/demo/kiminaExamples';
import { ScriptedEngine, StandInVerifier, leanError, valid } from './doubles';

const FILE = `import Mathlib

theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry
`;
const mismatch = {
  severity: 'error' as const,
  pos: { line: 5, column: 2 },
  endPos: { line: 5, column: 10 },
  data: 'type mismatch',
};
/** The well-formed answer (its block ends in `linarith`, which Lean accepts) followed by a second block Lean rejects. */
const BAD_BLOCK =
  '\n\nOr shorter:\n\n```lean4\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  exact h₀\n```';
const TWO_BLOCKS = WELL_FORMED + BAD_BLOCK;

for (const [name, laterMs] of [
  ['Lean rejects first', 0],
  ['Lean is still judging', 400],
] as const)
  test(`an early check that wins after its answer ended with another block (${name}): the proof is the verified code`, async () => {
    const engine = new ScriptedEngine(() => TWO_BLOCKS);
    const verifier = new StandInVerifier((code) =>
      code.endsWith('  linarith')
        ? { verdict: valid(), delayMs: 80 }
        : { verdict: leanError([mismatch]), ...(laterMs ? { delayMs: laterMs } : {}) },
    );
    const result = await prove({ code: FILE, samples: 1, fixTurns: 0 }, { engine, verifier });
    const judged = verifier.calls.map((c) => c.code.split('\n').at(-1));
    assert.deepEqual(judged, ['  linarith', '  exact h₀'], 'the early block, then the last one');
    assert.equal(result.status, 'proved', 'the verified proof was dropped');
    assert.ok(result.proof?.endsWith('  linarith'), `the reported proof is not the verified code: ${result.proof}`);
    assert.equal(result.attempts[0].verdict?.status, 'valid');
    assert.equal(result.attempts[0].code, result.proof);
  });
