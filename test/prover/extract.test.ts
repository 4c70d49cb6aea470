import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  NO_PROOF,
  NO_STATEMENT,
  extractProof,
  isIndexCommented,
  normalizeStatement,
  signatureOf,
} from '../../backend/prover/extract';
import { STATEMENT, WELL_FORMED } from '../../backend/demo/kiminaExamples';

const NORMALIZED = 'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by';

test('§8.1: trusted statement without sorry, then the text after := by', () => {
  const r = extractProof(WELL_FORMED, STATEMENT);
  assert.ok(r.ok);
  assert.equal(r.code, NORMALIZED + '\n  have h₁ : 2 * x = 8 := by linarith\n  linarith');
  assert.equal(r.proof, '\n  have h₁ : 2 * x = 8 := by linarith\n  linarith');
});

test('normalizeStatement drops a trailing sorry and appends by when missing', () => {
  assert.equal(normalizeStatement(STATEMENT), NORMALIZED);
  assert.equal(normalizeStatement('theorem t : True :=  \n'), 'theorem t : True := by');
  assert.equal(normalizeStatement('theorem t : True := by sorry  '), 'theorem t : True := by');
});

test('signature: first theorem, else lemma, else example; none gives the sentinel', () => {
  assert.equal(signatureOf(NORMALIZED), 'algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4');
  assert.equal(signatureOf('lemma foo\n  (n : ℕ) :\n  n = n := by'), 'foo\n  (n : ℕ) :\n  n = n');
  assert.equal(signatureOf('example : 1 = 1 := by'), ': 1 = 1');
  // a `let` in the statement: the signature runs to the proof's `:=`, not the let's (issue 29, finding 2)
  assert.equal(signatureOf('theorem foo : let x := 5; x = 6 := by'), 'foo : let x := 5; x = 6');
  assert.deepEqual(extractProof(WELL_FORMED, 'def f := 1'), { ok: false, reason: NO_STATEMENT });
});

test('the model cannot weaken the statement: its own copy is never used', () => {
  const weakened = WELL_FORMED.replace(
    /```lean4\nimport Mathlib\n\ntheorem algebra_example \(x : ℝ\) \(h₀ : 2 \* x \+ 3 = 11\) : x = 4/,
    '```lean4\nimport Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 ∨ True',
  );
  // The signature still matches (prefix), and the checked code keeps the trusted conclusion.
  const r = extractProof(weakened, STATEMENT);
  assert.ok(r.ok);
  assert.ok(r.code.startsWith(NORMALIZED));
  const renamed = WELL_FORMED.replaceAll('(h₀ : 2 * x + 3 = 11)', '(h₀ : 2 * x + 3 = 12)');
  assert.deepEqual(extractProof(renamed, STATEMENT), { ok: false, reason: NO_PROOF });
});

test('blocks are visited last to first; a commented signature skips the block', () => {
  const two = WELL_FORMED.replace(
    '<think>',
    '<think>\n```lean4\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  nlinarith\n```',
  );
  const r = extractProof(two, STATEMENT);
  assert.ok(r.ok && r.proof.endsWith('  linarith'));
  const lastCommented = two.replace(/```lean4\nimport Mathlib\n\ntheorem/, '```lean4\nimport Mathlib\n\n-- theorem');
  const r2 = extractProof(lastCommented, STATEMENT);
  assert.ok(r2.ok && r2.proof === '\n  nlinarith', 'falls back to the earlier block');
  const blockComment = WELL_FORMED.replace(
    /```lean4\nimport Mathlib\n\ntheorem/,
    '```lean4\nimport Mathlib\n\n/- theorem',
  ).replace(/linarith\n```$/, 'linarith -/\n```');
  assert.deepEqual(extractProof(blockComment, STATEMENT), { ok: false, reason: NO_PROOF });
});

test('no lean4 block, or no := by after the signature, gives the no-proof sentinel', () => {
  assert.deepEqual(extractProof('<think>nothing</think>', STATEMENT), { ok: false, reason: NO_PROOF });
  const termProof = '```lean4\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 :=\n  foo\n```';
  assert.deepEqual(extractProof(termProof, STATEMENT), { ok: false, reason: NO_PROOF });
});

test('extraction keeps what follows the proof, and := by may span lines', () => {
  const r = extractProof(
    '```lean4\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 :=\n  by\n  linarith\n\ntheorem extra : True := trivial\n```',
    STATEMENT,
  );
  assert.ok(r.ok);
  assert.equal(r.proof, '\n  linarith\n\ntheorem extra : True := trivial');
});

test('isIndexCommented follows the recipe', () => {
  const code = 'a -- b\n/- c\nd -/ e';
  assert.equal(isIndexCommented(code, code.indexOf('a')), false);
  assert.equal(isIndexCommented(code, code.indexOf('b')), true);
  assert.equal(isIndexCommented(code, code.indexOf('d')), true);
  assert.equal(isIndexCommented(code, code.indexOf('e')), false);
  assert.equal(isIndexCommented(code, 99), false);
});

test('a `let` statement: the proof is what follows its own `:= by`, and an answer restating the let is not read', () => {
  const statement = 'theorem foo : let x := 5; x = 6 := by sorry';
  const ok = extractProof('```lean4\ntheorem foo : let x := 5; x = 6 := by\n  intro x\n  norm_num\n```', statement);
  assert.deepEqual(ok.ok && [ok.statement, ok.proof], [
    'theorem foo : let x := 5; x = 6 := by',
    '\n  intro x\n  norm_num',
  ]);
  const restated = extractProof('```lean4\ntheorem foo : let x := 6; x = 6 := by\n  rfl\n```', statement);
  assert.equal(restated.ok, false);
});
