// Issue 29, finding 2 (the guard, independent of the source reader): a splice is refused unless the declaration
// keeps its name and its statement. Where the statement holds a word that can hide where it ends (`let x := 5;
// x = 6`), Lean compares the types before and after. The check here is a TEST DOUBLE: it accepts any snippet
// without `sorry` and, for the comparison snippet only, answers as Lean's `with_reducible rfl` would on these
// statements: an error at the `example` when the two renamed declarations bind `x` to different values.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Verdict } from '../../backend/protocol';
import { findDeclarations, offsetAt } from '../../backend/editor/leanSource';
import { applyEdit, sameStatementInLean, spliceVerifiedProof, theoremEdit } from '../../backend/editor/splice';
import {
  AFTER_NAME,
  BEFORE_NAME,
  comparisonSnippet,
  renamedDeclaration,
  statementNeedsLean,
  statementTextProblem,
} from '../../backend/editor/statementGuard';

const file = 'import Mathlib\n\ntheorem foo : let x := 5; x = 6 := by\n  sorry\n';

function verdict(status: Verdict['status'], messages: Verdict['messages'] = []): Verdict {
  return { status, reason: status, messages, sorries: [], time: 0 };
}

/** The value `x` is bound to in the declaration named `name` of a comparison snippet. */
function letValue(code: string, name: string): string | undefined {
  return new RegExp(`theorem ${name} : let x := (\\w+)`).exec(code)?.[1];
}

function leanDouble(seen: string[]) {
  return async (code: string) => {
    seen.push(code);
    const line = code.split('\n').findIndex((l) => l.startsWith('example : type_of%')) + 1;
    if (line === 0) return { verdict: verdict(/\bsorry\b/.test(code) ? 'sorry' : 'valid') };
    if (letValue(code, BEFORE_NAME) === letValue(code, AFTER_NAME)) return { verdict: verdict('sorry') };
    return {
      verdict: verdict('lean_error', [
        { severity: 'error', pos: { line, column: 0 }, endPos: null, data: 'The rfl tactic failed.' },
      ]),
    };
  };
}

test('an answer that restates a `let` statement (x := 6) is refused, or the statement is written unchanged (issue 29)', async () => {
  const [decl] = findDeclarations(file);
  const seen: string[] = [];
  const out = await spliceVerifiedProof({
    text: file,
    target: { kind: 'body', decl },
    proof: '6; x = 6 := by decide',
    check: leanDouble(seen),
  });
  if (out.ok) {
    const after = applyEdit(file, out.edit, (l, c) => offsetAt(file, l, c));
    assert.ok(after.includes('theorem foo : let x := 5; x = 6 := by'), after);
  } else {
    assert.match(out.problem, /statement of foo/);
    const compared = seen.at(-1)!;
    assert.match(compared, /theorem kimina_statement_before : let x := 5; x = 6 := by\n {2}sorry/);
    assert.match(compared, /theorem kimina_statement_after : let x := by/);
    assert.match(compared, /example : type_of% @kimina_statement_before = type_of% @kimina_statement_after := by/);
  }
});

test('independent of the reader: with the statement cut at `let x :=` (the old finder), the restated answer is refused by Lean', async () => {
  const [found] = findDeclarations(file);
  // the statement end as the finder before the reader read it: after the first top-level `:=`
  const decl = { ...found, statementEnd: file.indexOf('let x :=') + 'let x :='.length };
  const seen: string[] = [];
  const out = await spliceVerifiedProof({
    text: file,
    target: { kind: 'body', decl },
    proof: '6; x = 6 := by decide',
    check: leanDouble(seen),
  });
  assert.equal(out.ok, false);
  // the reader reads the new file right, so the text comparison refuses first
  assert.match(out.ok ? '' : out.problem, /statement of foo would not read as before/);
  // and were the new file read as wrongly as the old, Lean's comparison refuses it
  const newText = applyEdit(file, theoremEdit(file, decl, '6; x = 6 := by decide').edit, (l, c) =>
    offsetAt(file, l, c),
  );
  const newDecl = { ...findDeclarations(newText)[0], statementEnd: decl.statementEnd };
  const problem = await sameStatementInLean({ text: file, decl, newText, newDecl }, leanDouble(seen));
  assert.match(
    problem ?? '',
    /Lean does not find the statement of foo unchanged by the splice \(The rfl tactic failed/,
  );
  const compared = seen.at(-1)!;
  assert.match(compared, /theorem kimina_statement_before : let x := 5; x = 6 := by\n {2}sorry/);
  assert.match(compared, /theorem kimina_statement_after : let x := by/);
  assert.match(compared, /example : type_of% @kimina_statement_before = type_of% @kimina_statement_after := by/);
});

test('a statement with a `let` whose proof alone changes passes the comparison; an error in the old body does not count', async () => {
  const text = 'theorem bar (n : Nat) : let x := n; x = x := by\n  exact bad_lemma\n';
  const [decl] = findDeclarations(text);
  const before = text.slice(decl.start, decl.end);
  const afterText = 'theorem bar (n : Nat) : let x := n; x = x := by\n  intro x\n  rfl\n';
  const [newDecl] = findDeclarations(afterText);
  const snippet = comparisonSnippet(
    'import Mathlib\n\n',
    before,
    decl,
    afterText.slice(newDecl.start, newDecl.end),
    newDecl,
  )!;
  assert.ok(snippet.code.startsWith('import Mathlib\n\ntheorem kimina_statement_before (n : Nat)'));
  assert.equal(
    snippet.code.split('\n')[snippet.afterLine - 1],
    'theorem kimina_statement_after (n : Nat) : let x := n; x = x := by',
  );
});

test('the text comparison: name, kind and statement text must read as before', () => {
  const [a] = findDeclarations('theorem foo (n : Nat) : n = n := by\n  sorry\n');
  const [b] = findDeclarations('theorem foo (m : Nat) : m = m := by\n  rfl\n');
  const [c] = findDeclarations('theorem goo (n : Nat) : n = n := by\n  rfl\n');
  const [d] = findDeclarations('theorem foo (n : Nat) : n = n := by\n  rfl\n');
  const oldText = 'theorem foo (n : Nat) : n = n := by\n  sorry\n';
  assert.match(statementTextProblem(oldText, a, 'theorem foo (m : Nat) : m = m := by\n  rfl\n', b) ?? '', /statement/);
  assert.match(statementTextProblem(oldText, a, 'theorem goo (n : Nat) : n = n := by\n  rfl\n', c) ?? '', /goo/);
  assert.equal(statementTextProblem(oldText, a, 'theorem foo (n : Nat) : n = n := by\n  rfl\n', d), null);
});

test('a pattern-matching definition (no `:=`): its statement is the text up to its first alternative, compared as well', () => {
  const oldText = "def pred' : Nat → { n : Nat // n ≥ 0 }\n  | 0 => ⟨0, sorry⟩\n  | n + 1 => ⟨n, Nat.zero_le _⟩\n";
  const proved = oldText.replace('sorry', '(by omega)');
  const restated = proved.replace('n ≥ 0 }', 'n ≥ 1 }');
  const [a] = findDeclarations(oldText);
  assert.equal(a.statementEnd, null);
  assert.equal(statementTextProblem(oldText, a, proved, findDeclarations(proved)[0]), null);
  assert.match(statementTextProblem(oldText, a, restated, findDeclarations(restated)[0]) ?? '', /statement of pred'/);
});

test('Lean is asked only where the text cannot decide; renaming keeps a dotted name in its namespace', async () => {
  assert.equal(statementNeedsLean('theorem foo (n : Nat) : n + 0 = n :='), false);
  assert.equal(statementNeedsLean('theorem foo (s : Set Nat := ∅) : s = s :='), true);
  for (const w of [
    'let x := 1; x = 1',
    'letI := inst; P',
    'haveI := h; P',
    '(fun x => x) 1 = 1',
    'match n with | _ => True',
  ])
    assert.equal(statementNeedsLean(`theorem foo : ${w} :=`), true, w);
  const [d] = findDeclarations('theorem Nat.foo : let x := 1; x = 1 := by\n  sorry\n');
  assert.equal(
    renamedDeclaration('theorem Nat.foo : let x := 1; x = 1 := by\n  sorry', d, BEFORE_NAME),
    `theorem Nat.${BEFORE_NAME} : let x := 1; x = 1 := by\n  sorry`,
  );
  const [e] = findDeclarations('example : let x := 1; x = 1 := by\n  sorry\n');
  assert.equal(
    renamedDeclaration('example : let x := 1; x = 1 := by\n  sorry', e, AFTER_NAME),
    `theorem ${AFTER_NAME} : let x := 1; x = 1 := by\n  sorry`,
  );
  // a plain statement: two checks (in place, in parentheses), no comparison
  const plain = 'theorem p : 1 = 1 := by\n  sorry\n';
  const [pd] = findDeclarations(plain);
  const seen: string[] = [];
  const out = await spliceVerifiedProof({
    text: plain,
    target: { kind: 'body', decl: pd },
    proof: 'rfl',
    check: leanDouble(seen),
  });
  assert.equal(out.ok, true);
  assert.equal(seen.length, 2);
});
