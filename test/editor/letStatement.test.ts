// Issue 29, finding 2: a `let` in a statement does not end it, so a proof put in by Accept, repair or goal mode
// replaces the proof only, never the rest of the user's statement (the one reader, lean/source/statementEnd.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findDeclarations, standaloneSnippet } from '../../backend/editor/leanSource';
import { theoremEdit } from '../../backend/editor/splice';

const text = 'import Mathlib\n\ntheorem foo : let x := 5; x = 6 := by sorry\n';

test('the statement a prover is asked for is the whole `let` statement', () => {
  const [decl] = findDeclarations(text);
  assert.equal(text.slice(decl.start, decl.statementEnd ?? 0), 'theorem foo : let x := 5; x = 6 :=');
  assert.match(standaloneSnippet(text, decl).code, /theorem foo : let x := 5; x = 6 := by sorry/);
});

test('a proof spliced in replaces what follows the statement, and the statement stays as the user wrote it', () => {
  const [decl] = findDeclarations(text);
  const { newText } = theoremEdit(text, decl, 'intro x\nnorm_num');
  assert.equal(newText, 'import Mathlib\n\ntheorem foo : let x := 5; x = 6 := by\n  intro x\n  norm_num\n');
  // an answer restating the let cannot reach the statement: it lands in the proof, after the user's `:=`
  const restated = theoremEdit(text, decl, 'x := 6; x = 6 := by rfl').newText;
  assert.ok(restated.startsWith('import Mathlib\n\ntheorem foo : let x := 5; x = 6 := by\n'));
});
