// Every miniF2F file (244 test + 244 valid) must turn into a statement the prover accepts: the
// declaration parser finds the theorem, the formal statement keeps header and binders intact,
// the prompt carries it, and proof extraction finds it again in an answer that repeats it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { statementMatchesFile, statementProblems } from '../../backend/eval/statementCheck';
import { firstTheoremName } from '../../backend/eval/theoremName';
import { MINIF2F_SPLITS, minif2fFiles } from './helpers';

for (const split of MINIF2F_SPLITS) {
  test(`every miniF2F ${split} file parses into a statement the prover accepts`, () => {
    const all = minif2fFiles(split).map((f) => f.path);
    assert.equal(all.length, 244);
    const failures: string[] = [];
    for (const file of all) {
      const code = readFileSync(file, 'utf8');
      const theorem = basename(file, '.lean');
      if (firstTheoremName(code) !== theorem) failures.push(`${theorem}: loader found ${firstTheoremName(code)}`);
      const issues = statementProblems(code, theorem);
      // The statement Lean checks must be the file itself, less its `sorry`: nothing dropped, nothing added.
      if (issues.length === 0 && !statementMatchesFile(code, theorem)) issues.push('statement differs from the file');
      for (const i of issues) failures.push(`${theorem}: ${i}`);
    }
    assert.deepEqual(failures, [], `files the prover would not accept:\n${failures.join('\n')}`);
  });
}

// Real-world syntax beyond miniF2F's uniform files: each must parse into an accepted statement.
const header = 'import Mathlib\n\nopen Real\n\n';
const syntaxCases: [string, string, string][] = [
  [
    'multi-line binders',
    'multi_line',
    `${header}theorem multi_line\n    (a b : ℝ)\n    (h₀ : 0 < a ∧\n      0 < b)\n    (h₁ : a + b = 1) :\n    a * b ≤ 1 / 4 := by\n  sorry\n`,
  ],
  [
    'docstring',
    'with_doc',
    `${header}/-- Show that $2 + 2 = 4$. Uses := inside the doc. -/\ntheorem with_doc : (2 : ℕ) + 2 = 4 := by sorry\n`,
  ],
  [
    'open … in',
    'opened',
    `${header}open Finset in\ntheorem opened (n : ℕ) : ∑ i ∈ range (n + 1), i = n * (n + 1) / 2 := by\n  sorry\n`,
  ],
  [
    'unicode names and binders',
    'ι_unicode₁',
    `${header}theorem ι_unicode₁ {α : Type*} [Fintype α] (f : α → ℝ) (hf : ∀ x, 0 ≤ f x) :\n    0 ≤ ∑ x, f x := by sorry\n`,
  ],
  [
    'comment inside binders',
    'commented',
    `${header}theorem commented (S : Finset ℕ)\n  -- a comment with := and theorem inside\n  (h₀ : ∀ n, n ∈ S ↔ 0 < n) :\n  S.card = 1 := by sorry\n`,
  ],
  ['attribute and lemma', 'attr_lemma', `${header}@[simp]\nlemma attr_lemma (x : ℤ) : x + 0 = x := by sorry\n`],
  [
    'set_option … in',
    'opt_in',
    `${header}set_option maxRecDepth 10000 in\ntheorem opt_in : (10 : ℕ) ^ 3 = 1000 := by sorry\n`,
  ],
];

for (const [what, name, code] of syntaxCases) {
  test(`statement accepted: ${what}`, () => {
    assert.equal(firstTheoremName(code), name);
    assert.deepEqual(statementProblems(code, name), []);
  });
}

test('statements the prover cannot use are reported, not accepted', () => {
  assert.match(
    statementProblems(`${header}def not_a_theorem : ℕ := 3\n`, 'not_a_theorem').join(),
    /not found by the declaration parser/,
  );
  assert.match(
    statementProblems(`${header}theorem term_mode : True := trivial\n`, 'term_mode').join(),
    /not recognised as `:= by`/,
  );
  assert.match(
    statementProblems(`${header}theorem present : True := by sorry\n`, 'absent').join(),
    /no theorem named 'absent'/,
  );
});
