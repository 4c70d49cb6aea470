// Building the edits that put a verified proof into the file, and turning a sorry's goal into a lemma.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findDeclarations, offsetAt } from '../../backend/editor/leanSource';
import { applyEdit, dedent, proofBodyOf, sorryEdit, theoremEdit } from '../../backend/editor/splice';
import { goalToLemma, parseGoal } from '../../backend/editor/goalLemma';
import { replPosToLsp } from '../../backend/protocol';

const algebra = `import Mathlib

theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry
`;
const modelProof = '\n  have h₁ : 2 * x = 8 := by linarith\n  linarith\n';

test('dedent drops blank edges and the shared indentation, keeps relative indentation', () => {
  assert.deepEqual(dedent('\n    a\n      b\n\n    c  \n\n'), ['a', '  b', '', 'c']);
  assert.deepEqual(dedent(' linarith'), ['linarith']);
});

test('theorem edit replaces the body after := with the proof, indented under the declaration', () => {
  const [decl] = findDeclarations(algebra);
  const { edit, newText } = theoremEdit(algebra, decl, modelProof);
  assert.equal(
    newText,
    `import Mathlib

theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  have h₁ : 2 * x = 8 := by linarith
  linarith
`,
  );
  const statementLine = algebra.split('\n')[2];
  assert.deepEqual(edit.range, {
    start: { line: 2, character: statementLine.indexOf(':= by') + 2 },
    end: { line: 3, character: 7 },
  });
  assert.equal(
    applyEdit(algebra, edit, (l, c) => offsetAt(algebra, l, c)),
    newText,
  );
});

test('theorem edit inside an indented namespace keeps the proof right of the declaration', () => {
  const src = 'namespace N\n  theorem t (p : Prop) (hp : p) : p :=\n    sorry\nend N\n';
  const [decl] = findDeclarations(src);
  const { newText } = theoremEdit(src, decl, 'exact hp');
  assert.equal(newText, 'namespace N\n  theorem t (p : Prop) (hp : p) : p := by\n    exact hp\nend N\n');
});

test('sorry edit in tactic position aligns later lines under the first', () => {
  const src = 'theorem t (a b : ℕ) (h : a = b) : a + 0 = b ∧ b = a := by\n  constructor\n  · sorry\n  · exact h.symm\n';
  const [decl] = findDeclarations(src);
  const { newText } = sorryEdit(src, decl.sorries[0], '\n  simp\n  exact h\n');
  assert.equal(
    newText,
    'theorem t (a b : ℕ) (h : a = b) : a + 0 = b ∧ b = a := by\n  constructor\n  · simp\n    exact h\n  · exact h.symm\n',
  );
});

test('sorry edit after an inline `by` keeps the tactic block column', () => {
  const src = 'theorem t (x : ℕ) (h : x = 2) : x + x = 4 := by sorry\n';
  const [decl] = findDeclarations(src);
  const { newText } = sorryEdit(src, decl.sorries[0], 'subst h\nrfl');
  const lines = newText.split('\n');
  assert.equal(lines[0], 'theorem t (x : ℕ) (h : x = 2) : x + x = 4 := by subst h');
  assert.equal(lines[1], ' '.repeat(Array.from(lines[0]).indexOf('s', 40)) + 'rfl');
});

test('sorry edit in term position wraps the proof in (by …)', () => {
  const src = 'theorem t (p : Prop) (hp : p) : p ∧ p :=\n  ⟨sorry, hp⟩\n';
  const [decl] = findDeclarations(src);
  assert.equal(
    sorryEdit(src, decl.sorries[0], 'exact hp').newText,
    'theorem t (p : Prop) (hp : p) : p ∧ p :=\n  ⟨(by exact hp), hp⟩\n',
  );
  assert.equal(
    sorryEdit(src, decl.sorries[0], 'have := hp\nexact this').newText,
    'theorem t (p : Prop) (hp : p) : p ∧ p :=\n  ⟨(by\n      have := hp\n      exact this), hp⟩\n',
  );
});

test('sorry edit columns count codepoints for indentation, ranges count UTF-16', () => {
  const src = 'theorem t (s : Set 𝔽) : s = s := by\n  show s = s; sorry\n';
  const [decl] = findDeclarations(src);
  const site = decl.sorries[0];
  const { edit } = sorryEdit(src, site, 'rfl');
  assert.deepEqual(edit.range.start, { line: 1, character: 14 });
  const astral = 'example : (fun (𝕜 : Type) => 𝕜) = id := by sorry\n';
  const [e] = findDeclarations(astral);
  const spliced = sorryEdit(astral, e.sorries[0], 'funext\nrfl').newText.split('\n');
  assert.equal(
    Array.from(spliced[1]).length - Array.from(spliced[1].trimStart()).length,
    Array.from(astral.slice(0, e.sorries[0].offset)).length,
  );
});

test('proof body of a checked snippet drops the leading by', () => {
  const code = 'theorem t : 1 = 1 := by\n  rfl\n';
  assert.equal(proofBodyOf(code, findDeclarations(code)[0]), '\n  rfl');
});

test('goal to lemma: binders, grouped names, instances, inaccessible names, multi-line target', () => {
  const goal = 'α : Type u_1\ninst✝ : Fintype α\nx y : ℝ\nh₀ : 2 * x + 3 = 11\nx✝¹ : ℕ\n⊢ x = 4 ∧\n    y = y';
  assert.deepEqual(
    parseGoal(goal).hypotheses.map((h) => h.names),
    [['α'], ['inst_0'], ['x', 'y'], ['h₀'], ['x_1']],
  );
  assert.equal(
    goalToLemma(goal, 'algebra_example_goal'),
    'theorem algebra_example_goal (α : Type u_1) [Fintype α] (x y : ℝ) (h₀ : 2 * x + 3 = 11) (x_1 : ℕ) :\n    x = 4 ∧ y = y := by',
  );
  assert.equal(goalToLemma('⊢ True', 'g'), 'theorem g :\n    True := by');
  assert.equal(
    goalToLemma('case left\na b : ℕ\nh : a = b\n⊢ a + 0 = b', 'g'),
    'theorem g (a b : ℕ) (h : a = b) :\n    a + 0 = b := by',
  );
  assert.equal(goalToLemma('n : ℕ := 5\n⊢ n = 5', 'g'), 'theorem g (n : ℕ) :\n    n = 5 := by');
});

test('goal to lemma refuses text that is not a goal', () => {
  assert.throws(() => goalToLemma('x : ℕ', 'g'), /no ⊢/);
});

test('REPL codepoint columns convert to UTF-16 characters for the editor', () => {
  const text = 'import Mathlib\ntheorem t (K : Type) [Field 𝔽] (x : 𝕜) : bogus_x = 1 := by\n';
  const col = Array.from(text.split('\n')[1]).indexOf('b');
  const lsp = replPosToLsp(text, { line: 2, column: col });
  assert.equal(text.split('\n')[1].slice(lsp.character, lsp.character + 7), 'bogus_x');
  assert.equal(lsp.character, col + 2);
});
