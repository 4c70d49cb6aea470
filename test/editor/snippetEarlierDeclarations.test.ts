// The editor's standalone snippet carries the earlier sorry-free declarations of the document (in file order,
// with their scope commands), like the prover's formal statement, so a theorem that uses an earlier lemma
// can be proved or checked from the editor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findDeclarations, standaloneSnippet } from '../../backend/editor/leanSource';

const DOC = `import Mathlib

namespace Demo

lemma helper (a b : ℕ) : a + b = b + a := by simp [Nat.add_comm]

lemma unfinished (n : ℕ) : n = n := by
  sorry

theorem main (x y : ℕ) : x + y = y + x := by
  sorry

end Demo
`;

test('the snippet for main declares helper before it and leaves the sorry lemma out', () => {
  const decls = findDeclarations(DOC);
  const main = decls.find((d) => d.name === 'main')!;
  const { code, declOffset } = standaloneSnippet(DOC, main, decls);
  assert.equal(
    code,
    'import Mathlib\n\nnamespace Demo\n\nlemma helper (a b : ℕ) : a + b = b + a := by simp [Nat.add_comm]\n\ntheorem main (x y : ℕ) : x + y = y + x := by\n  sorry\n',
  );
  assert.ok(!code.includes('unfinished'));
  assert.equal(code.slice(declOffset).split('\n')[0], 'theorem main (x y : ℕ) : x + y = y + x := by');
  // The first declaration has nothing earlier to carry.
  const first = standaloneSnippet(DOC, decls[0], decls).code;
  assert.equal(
    first,
    'import Mathlib\n\nnamespace Demo\n\nlemma helper (a b : ℕ) : a + b = b + a := by simp [Nat.add_comm]\n',
  );
});
