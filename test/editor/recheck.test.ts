// Accept after the file changed (issue 29, finding 3): the backend's check of a pending edit on the document as it
// is now (backend/editor/recheck.ts). The check is a TEST DOUBLE: `valid` unless the snippet names `sorry` or
// `bad_lemma` (then `sorry` with its sorries listed, or `lean_error`), recording what it was asked.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProofEdit, ReplSorry, Verdict } from '../../backend/protocol';
import { recheckProposal } from '../../backend/editor/recheck';

const file = 'import Mathlib\n\ntheorem a : 1 + 1 = 2 := by\n  sorry\n\ntheorem b : 2 + 2 = 4 := by\n  sorry\n';
const edit: ProofEdit = {
  range: { start: { line: 5, character: 24 }, end: { line: 6, character: 7 } },
  newText: ' by\n  norm_num',
};

function check(seen: string[]) {
  return async (code: string) => {
    seen.push(code);
    const sorries: ReplSorry[] = [...code.matchAll(/\bsorry\b/g)].map(() => ({ goal: '' }));
    const status: Verdict['status'] = code.includes('bad_lemma') ? 'lean_error' : sorries.length ? 'sorry' : 'valid';
    return { verdict: { status, reason: status, messages: [], sorries, time: 0 } };
  };
}

test('the edit is checked in place on the document as it is now; valid passes', async () => {
  const seen: string[] = [];
  const out = await recheckProposal({ uri: 'f', code: file, edit, declarationLine: 5 }, check(seen));
  assert.deepEqual(out, { ok: true });
  assert.ok(seen[0].endsWith('theorem b : 2 + 2 = 4 := by\n  norm_num\n'), seen[0]);
});

test('refused: the declaration moved, the edit leaves it, the context now breaks it, the edit carries a command', async () => {
  const seen: string[] = [];
  const moved = await recheckProposal({ uri: 'f', code: '-- x\n' + file, edit, declarationLine: 5 }, check(seen));
  assert.equal(moved.ok, false);
  const outside = await recheckProposal(
    {
      uri: 'f',
      code: file,
      edit: { ...edit, range: { ...edit.range, start: { line: 2, character: 0 } } },
      declarationLine: 5,
    },
    check(seen),
  );
  assert.match(outside.problem ?? '', /inside its declaration/);
  // an earlier declaration the snippet carries no longer checks: what was verified does not hold now
  const broken = file.replace('theorem a : 1 + 1 = 2 := by\n  sorry', 'theorem a : 1 + 1 = 2 := by\n  exact bad_lemma');
  const lean = await recheckProposal({ uri: 'f', code: broken, edit, declarationLine: 5 }, check(seen));
  assert.match(lean.problem ?? '', /Lean does not accept the declaration as it would be written now/);
  const command = await recheckProposal(
    { uri: 'f', code: file, edit: { ...edit, newText: ' by\n  norm_num\nvariable (h : False)' }, declarationLine: 5 },
    check(seen),
  );
  assert.equal(command.ok, false);
});
