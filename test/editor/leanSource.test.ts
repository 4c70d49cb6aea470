// Finding declarations and sorries in Lean source: the cursor logic behind Prove This Theorem / Prove Goal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import {
  codeOnly,
  declarationAt,
  findDeclarations,
  headerOf,
  offsetAt,
  positionAt,
  sorryAt,
  standaloneSnippet,
} from '../../backend/editor/leanSource';
import { MINIF2F_SPLITS, minif2fFiles } from '../eval/helpers';

const file = `import Mathlib
open Real

/-- The algebra example: \`sorry\` in a doc comment is not a sorry. -/
theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry

-- lemma commented_out : True := sorry
lemma two_goals (a b : ℕ) (h : a = b) :
    a + 0 = b ∧ b = a := by
  constructor
  · sorry
  · exact h.symm

namespace Foo
  theorem inner (p : Prop) (hp : p) : p ∧ p :=
    ⟨sorry, hp⟩
end Foo

example : (1 : ℕ) + 1 = 2 := by norm_num

@[simp] theorem with_attr (s : String) : s = s := by
  have h : "sorry" = "sorry" := rfl
  exact sorry
`;

test('finds every declaration with its kind, name, lines and sorries', () => {
  const decls = findDeclarations(file);
  assert.deepEqual(
    decls.map((d) => [d.kind, d.name, d.startLine, d.endLine, d.sorries.length]),
    [
      ['theorem', 'algebra_example', 4, 5, 1],
      ['lemma', 'two_goals', 8, 12, 1],
      ['theorem', 'inner', 15, 16, 1],
      ['example', 'example', 19, 19, 0],
      ['theorem', 'with_attr', 21, 23, 1],
    ],
  );
});

test('comments, doc comments and strings never count as sorry', () => {
  const code = codeOnly(file);
  assert.equal(code.length, file.length);
  assert.ok(!code.includes('commented_out'));
  assert.ok(!code.includes('"sorry"'));
  const sorries = findDeclarations(file).flatMap((d) => d.sorries);
  for (const s of sorries) assert.equal(file.slice(s.offset, s.offset + 5), 'sorry');
});

test('sorry positions are tactic or term as Lean would parse them', () => {
  const kinds = findDeclarations(file).flatMap((d) => d.sorries.map((s) => s.position));
  assert.deepEqual(kinds, ['tactic', 'tactic', 'term', 'term']);
  const inline = findDeclarations('theorem t : True := by sorry\ntheorem u : True := sorry\n');
  assert.deepEqual(
    inline.map((d) => d.sorries[0].position),
    ['tactic', 'term'],
  );
});

test('statement ends after the top-level := (not one inside brackets)', () => {
  const src = 'theorem t (f : ℕ → ℕ := fun n => n) : f 0 = 0 := by\n  rfl\n';
  const [d] = findDeclarations(src);
  assert.equal(src.slice(0, d.statementEnd!), 'theorem t (f : ℕ → ℕ := fun n => n) : f 0 = 0 :=');
});

test('declaration at the cursor: inside, below, or none above', () => {
  const decls = findDeclarations(file);
  assert.equal(declarationAt(decls, 5)?.name, 'algebra_example');
  assert.equal(declarationAt(decls, 10)?.name, 'two_goals');
  assert.equal(
    declarationAt(decls, 7)?.name,
    'algebra_example',
    'a blank line after a declaration picks the one above',
  );
  assert.equal(declarationAt(decls, 0), null);
});

test('sorry at the cursor: under it, same line, or the only one', () => {
  const decls = findDeclarations(file);
  const two = decls[1];
  assert.equal(sorryAt(two, 11, 5)?.line, 11);
  assert.equal(sorryAt(two, 9, 0)?.line, 11, 'the only sorry of the declaration');
  const many = findDeclarations('theorem t : True ∧ True := ⟨sorry, sorry⟩\n')[0];
  assert.equal(sorryAt(many, 0, 36)?.character, 35);
  assert.equal(sorryAt(many, 0, 2)?.character, 28);
});

test('header and standalone snippet hold imports and opens, not other declarations', () => {
  const decls = findDeclarations(file);
  assert.equal(headerOf(file, decls), 'import Mathlib\nopen Real\n\n');
  const { code, declOffset } = standaloneSnippet(file, decls[0], decls);
  assert.ok(code.startsWith('import Mathlib\nopen Real\n\ntheorem algebra_example'));
  assert.ok(!code.includes('two_goals'));
  assert.equal(code.slice(declOffset, declOffset + 7), 'theorem');
});

test('positions: offsets <-> line/character round trip, including astral characters', () => {
  const src = 'theorem t (K : Type) [Field 𝔽] : True := by\n  sorry\n';
  for (const offset of [0, 10, 30, 44, src.length]) {
    const p = positionAt(src, offset);
    assert.equal(offsetAt(src, p.line, p.character), offset);
  }
  assert.deepEqual(positionAt(src, src.indexOf('sorry')), { line: 1, character: 2 });
});

test('every miniF2F statement (the 488 files of data/minif2f-lean4): one theorem, one tactic sorry right after := by', () => {
  let seen = 0;
  for (const split of MINIF2F_SPLITS) {
    for (const { name, path } of minif2fFiles(split)) {
      const src = readFileSync(path, 'utf8');
      const decls = findDeclarations(src).filter((d) => d.kind === 'theorem' || d.kind === 'lemma');
      assert.equal(decls.length, 1, name);
      const [d] = decls;
      assert.equal(d.name, name.replace(/\.lean$/, ''), name);
      assert.equal(d.sorries.length, 1, name);
      assert.equal(d.sorries[0].position, 'tactic', name);
      assert.match(src.slice(d.statementEnd!, d.end), /^\s*by\s+sorry$/, name);
      seen++;
    }
  }
  assert.equal(seen, 488);
});

test('the snippet keeps the scope commands in force: namespace, open, variable', () => {
  const src = `import Mathlib

namespace Algebra
open Real
variable (x : ℝ)

theorem uses_variable (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry

end Algebra
`;
  const decls = findDeclarations(src);
  const { code, declOffset } = standaloneSnippet(src, decls[0], decls);
  assert.equal(
    code,
    'import Mathlib\n\nnamespace Algebra\nopen Real\nvariable (x : ℝ)\n\ntheorem uses_variable (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  sorry\n',
  );
  const later = `${src}\nnamespace Other\nopen Nat\n\nlemma second (n : ℕ) : n + 0 = n := by\n  sorry\n`;
  const all = findDeclarations(later);
  const second = standaloneSnippet(later, all[1], all).code;
  assert.match(
    second,
    /^import Mathlib\n\nnamespace Algebra\nopen Real\nvariable \(x : ℝ\)\n\nend Algebra\n\nnamespace Other\n\nopen Nat\n\nlemma second/,
  );
  assert.ok(!second.includes('uses_variable'));
  assert.equal(code.slice(declOffset).split('\n')[0], 'theorem uses_variable (h₀ : 2 * x + 3 = 11) : x = 4 := by');
});
