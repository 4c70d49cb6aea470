import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  findDeclarationHeads,
  findDeclarations,
  formalStatementOf,
  headerOf,
  selectDeclaration,
} from '../../backend/lean/declarations';
import { MINIF2F_SPLITS, minif2fFiles } from '../eval/helpers';

// miniF2F-lean4's MiniF2F/Test/imo_1965_p2.lean (MIT, Meta Platforms), verbatim.
const IMO_1965_P2 = `import Mathlib

set_option maxHeartbeats 0

open BigOperators Real Nat Topology Rat

theorem imo_1965_p2
  (x y z : ℝ)
  (a : ℕ → ℝ)
  (h₀ : 0 < a 0 ∧ 0 < a 4 ∧ 0 < a 8)
  (h₁ : a 1 < 0 ∧ a 2 < 0)
  (h₂ : a 3 < 0 ∧ a 5 < 0)
  (h₃ : a 6 < 0 ∧ a 7 < 0)
  (h₄ : 0 < a 0 + a 1 + a 2)
  (h₅ : 0 < a 3 + a 4 + a 5)
  (h₆ : 0 < a 6 + a 7 + a 8)
  (h₇ : a 0 * x + a 1 * y + a 2 * z = 0)
  (h₈ : a 3 * x + a 4 * y + a 5 * z = 0)
  (h₉ : a 6 * x + a 7 * y + a 8 * z = 0) :
  x = 0 ∧ y = 0 ∧ z = 0 := by sorry`;

test('a miniF2F file: one theorem, multi-line binders, the header and the formal statement', () => {
  const [d, ...rest] = findDeclarations(IMO_1965_P2);
  assert.equal(rest.length, 0);
  assert.equal(d.kind, 'theorem');
  assert.equal(d.name, 'imo_1965_p2');
  assert.equal(d.start.line, 7);
  assert.equal(d.end.line, 20);
  assert.equal(d.tactic, true);
  assert.deepEqual(
    d.sorries.map((s) => [s.line, s.column]),
    [[20, 30]],
  );
  assert.ok(d.statement.endsWith('x = 0 ∧ y = 0 ∧ z = 0 := by'));
  assert.equal(
    headerOf(IMO_1965_P2),
    'import Mathlib\n\nset_option maxHeartbeats 0\n\nopen BigOperators Real Nat Topology Rat',
  );
  const f = formalStatementOf(IMO_1965_P2, d);
  assert.equal(f.text, IMO_1965_P2.replace(/ sorry$/, ''));
  assert.equal(f.informal, null);
});

const MIXED = `import Mathlib
/-! Module docs mention theorem fake : False := by sorry -/
open Real

namespace Algebra

/-- Show that if $2x + 3 = 11$ then $x = 4$. -/
@[simp]
theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  have h : "a -- string with sorry" = "a -- string with sorry" := rfl
  /- a nested /- comment -/ with sorry -/
  sorry -- this one counts

def helper (n : ℕ) (h : n = n := rfl) : ℕ := n -- no sorry here

open Nat in
lemma uses_open (n : ℕ) : n ≤ n ∨
    n > n := by
  exact Or.inl (le_refl n)

example : (fun x : ℕ => x) 1 = 1 := by
  show_term by
    sorry

private noncomputable def noisy : ℝ := sorry

end Algebra

theorem after_namespace : 1 + 1 = 2 :=
  sorry
`;

test('docstrings, attributes, modifiers, open … in, namespaces, strings and nested comments', () => {
  const ds = findDeclarations(MIXED);
  assert.deepEqual(
    ds.map((d) => [d.kind, d.name, d.namespace]),
    [
      ['theorem', 'algebra_example', 'Algebra'],
      ['def', 'helper', 'Algebra'],
      ['lemma', 'uses_open', 'Algebra'],
      ['example', '', 'Algebra'],
      ['def', 'noisy', 'Algebra'],
      ['theorem', 'after_namespace', ''],
    ],
  );
  const [thm, helper, lemma, example, noisy, after] = ds;
  assert.equal(thm.docComment, 'Show that if $2x + 3 = 11$ then $x = 4$.');
  assert.ok(thm.statement.startsWith('@[simp]\ntheorem algebra_example'));
  assert.equal(thm.sorries.length, 1, 'sorry in strings and comments is not code');
  assert.equal(thm.sorries[0].line, 12);
  assert.equal(helper.sorries.length, 0);
  assert.equal(
    helper.statement,
    'def helper (n : ℕ) (h : n = n := rfl) : ℕ := by',
    'default-value := inside binders is skipped',
  );
  assert.equal(helper.tactic, false);
  assert.ok(lemma.statement.startsWith('open Nat in\nlemma uses_open'));
  assert.ok(lemma.statement.endsWith('n > n := by'));
  assert.equal(example.sorries.length, 1, 'nested by');
  assert.equal(noisy.sorries.length, 1);
  assert.equal(after.tactic, false);
  assert.equal(after.statement, 'theorem after_namespace : 1 + 1 = 2 := by');
  assert.equal(
    headerOf(MIXED),
    'import Mathlib\n/-! Module docs mention theorem fake : False := by sorry -/\nopen Real\n\nnamespace Algebra',
  );
});

test('formal statement keeps the scope commands in force and the earlier sorry-free declarations', () => {
  const lemma = selectDeclaration(MIXED, { name: 'uses_open' });
  const f = formalStatementOf(MIXED, lemma);
  assert.equal(
    f.text,
    'import Mathlib\n/-! Module docs mention theorem fake : False := by sorry -/\nopen Real\n\nnamespace Algebra\n\ndef helper (n : ℕ) (h : n = n := rfl) : ℕ := n\n\nopen Nat in\nlemma uses_open (n : ℕ) : n ≤ n ∨\n    n > n := by',
  );
  assert.deepEqual(f.leftOut, ['algebra_example'], 'a declaration holding a sorry stays out');
  const after = formalStatementOf(MIXED, selectDeclaration(MIXED, { name: 'after_namespace' }));
  assert.ok(
    after.text.endsWith(
      'namespace Algebra\n\ndef helper (n : ℕ) (h : n = n := rfl) : ℕ := n\n\nopen Nat in\nlemma uses_open (n : ℕ) : n ≤ n ∨\n    n > n := by\n  exact Or.inl (le_refl n)\n\nend Algebra\n\ntheorem after_namespace : 1 + 1 = 2 := by',
    ),
  );
  assert.deepEqual(after.leftOut, ['algebra_example', 'noisy'], 'examples are never included; sorry ones are listed');
  const thm = formalStatementOf(MIXED, selectDeclaration(MIXED, { name: 'Algebra.algebra_example' }));
  assert.equal(thm.informal, 'Show that if $2x + 3 = 11$ then $x = 4$.');
  assert.ok(!thm.text.includes('Show that'), 'the doc comment becomes the informal text, not part of the statement');
});

test('selectDeclaration by name, by cursor line, or the obvious one', () => {
  assert.equal(selectDeclaration(MIXED, { line: 11 }).name, 'algebra_example');
  assert.equal(selectDeclaration(MIXED, { line: 18 }).name, 'uses_open');
  assert.throws(() => selectDeclaration(MIXED, { line: 14 }), /is a def/);
  assert.throws(() => selectDeclaration(MIXED, { line: 1 }), /no declaration at line 1/);
  assert.throws(() => selectDeclaration(MIXED, { name: 'nope' }), /no theorem named 'nope'.*algebra_example/);
  assert.equal(selectDeclaration(MIXED).name, 'algebra_example', 'first one with a sorry');
  assert.equal(selectDeclaration(IMO_1965_P2).name, 'imo_1965_p2');
  assert.throws(() => selectDeclaration('import Mathlib\n'), /no theorem/);
  assert.throws(() => selectDeclaration('theorem a : True := trivial\ntheorem b : True := trivial\n'), /name the one/);
});

test('columns count codepoints like Lean; char literals and primes do not confuse the masker', () => {
  const src =
    "theorem t (x' : ℕ) (c : Char := 'a') : x' = x' ∧ '\"' = '\"' := by\n  𝔸sorry\n  exact ⟨rfl, rfl⟩ -- sorry\n";
  const [d] = findDeclarations(src);
  assert.equal(d.name, 't');
  assert.ok(d.statement.endsWith("'\"' = '\"' := by"));
  assert.equal(d.sorries.length, 0, '𝔸sorry is one identifier');
  const [e] = findDeclarations('theorem ℝx : True := by\n  𝔸 sorry');
  assert.deepEqual([e.sorries[0].line, e.sorries[0].column], [2, 4]);
});

test('every miniF2F-lean4 file (data/minif2f-lean4, 488 files) parses to one theorem ending in := by with one sorry', () => {
  let n = 0;
  for (const split of MINIF2F_SPLITS) {
    for (const { name: file, path } of minif2fFiles(split)) {
      const src = readFileSync(path, 'utf8');
      const ds = findDeclarations(src).filter((d) => d.kind === 'theorem');
      assert.equal(ds.length, 1, file);
      assert.equal(ds[0].name, file.replace(/\.lean$/, ''), file);
      assert.equal(ds[0].sorries.length, 1, file);
      const f = formalStatementOf(src, ds[0]).text;
      assert.ok(f.startsWith('import Mathlib') && f.endsWith(':= by'), file);
      n++;
    }
  }
  assert.equal(n, 488);
});

test('indented declarations in a namespace, set_option … in prefixes, lemma with := by on the next line', () => {
  const src = `import Mathlib

namespace Foo
  /-- indented doc -/
  theorem inner (n : ℕ) : n + 0 = n := by
    simp

  set_option maxHeartbeats 400000 in
  lemma heavy (n : ℕ) :
      n * 1 = n
      := by
    sorry
end Foo
`;
  const [inner, heavy] = findDeclarations(src);
  assert.deepEqual(
    [inner.name, inner.namespace, inner.start.column, inner.docComment],
    ['inner', 'Foo', 2, 'indented doc'],
  );
  assert.equal(inner.sorries.length, 0);
  assert.ok(heavy.statement.startsWith('set_option maxHeartbeats 400000 in\n  lemma heavy'));
  assert.ok(heavy.statement.endsWith('n * 1 = n\n      := by'));
  assert.equal(heavy.sorries.length, 1);
  assert.equal(
    formalStatementOf(src, heavy).text,
    'import Mathlib\n\nnamespace Foo\n\ntheorem inner (n : ℕ) : n + 0 = n := by\n    simp\n\n' + heavy.statement,
  );
  // A tactic line never starts a command, even indented.
  const tactics = 'theorem t : True := by\n  have h : True := trivial\n  exact h\n';
  assert.equal(findDeclarations(tactics).length, 1);
  assert.equal(findDeclarations(tactics)[0].end.line, 3);
});

test('set_option … in before a tactic stays inside the proof', () => {
  const src =
    'theorem t (n : ℕ) : n = n := by\n  set_option maxRecDepth 1000 in\n  rfl\n\ntheorem u : True := trivial\n';
  const [t, u] = findDeclarations(src);
  assert.equal(t.end.line, 3);
  assert.equal(u.name, 'u');
});

test('termination_by and deriving at column 0 belong to the declaration above', () => {
  const src =
    'def f : ℕ → ℕ\n  | 0 => 0\n  | n + 1 => f n\ntermination_by n => n\n\nstructure P where\n  x : ℕ\nderiving Repr\n\ntheorem t : f 0 = 0 := by\n  sorry\n';
  const [f, p, t] = findDeclarations(src);
  assert.equal(f.end.line, 4);
  assert.equal(f.body, null, 'pattern-matching definition: no signature :=');
  assert.equal(p.end.line, 8);
  assert.equal(t.name, 't');
});

test('mutual … end and `namespace A.B` … `end B` … `end A`: scopes close part by part, as Lean reads them', () => {
  const src = [
    'namespace A.B',
    'mutual',
    '  theorem x : True := trivial',
    'end',
    'theorem y : True := trivial',
    'end B',
    'theorem z : True := trivial',
    'end A',
    'theorem w : True := trivial',
  ].join('\n');
  assert.deepEqual(
    findDeclarations(src).map((d) => [d.namespace, d.name]),
    [
      ['A.B', 'x'],
      ['A.B', 'y'],
      ['A', 'z'],
      ['', 'w'],
    ],
  );
  assert.deepEqual(
    findDeclarationHeads(src).map((d) => d.name),
    ['A.B.x', 'A.B.y', 'A.z', 'w'],
  );
});
