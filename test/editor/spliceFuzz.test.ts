// Issue 29, finding 9: a fuzz test of the splice rule. Verified answers get line terminators (LF, CR, CRLF, NEL,
// LS, PS, VT, FF), comment and string openers, tabs and command words inserted at random positions; whatever
// the splice rule then writes, the file as an editor stores it (every CR, LF, CRLF, NEL, LS and PS a line
// break, the strictest reading) must keep every line outside the target's body and gain no column-0 command.
// Fixed seed and case count (CASES below; about 1-3 s here). The check is a TEST DOUBLE that answers `valid`
// to anything without `sorry` (`sorry` with its sorries listed when there is one): the most permissive Lean
// there could be, so only the editor's own rule stands between the answer and the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ReplSorry, Verdict } from '../../backend/protocol';
import { MT19937 } from '../../backend/eval/mt19937';
import { findDeclarations, offsetAt } from '../../backend/editor/leanSource';
import { applyEdit, spliceVerifiedProof } from '../../backend/editor/splice';
import { lexLean } from '../../backend/lean/lexer';
import { isCommandWord } from '../../backend/lean/declarations';

const SEED = 29;
const CASES = 600;

const file = [
  'import Mathlib',
  '',
  'open Nat',
  '',
  'theorem one : 1 + 1 = 2 := by',
  '  sorry',
  '',
  'namespace Demo',
  '',
  'theorem two (n : ℕ) (h : 0 < n) : 0 < n * n := by',
  '  have := h',
  '  sorry',
  '',
  'end Demo',
  '',
  'theorem three : True := by',
  '  sorry',
  '',
].join('\n');

/** Answers a prover could have verified (the text after `:= by`). */
const answers = [
  '\n  norm_num',
  ' norm_num',
  '\n  constructor\n  · norm_num\n  · simp',
  '\n  have h2 : 1 = 1 := rfl\n  exact h2',
  '\n  induction 3 with\n  | zero => rfl\n  | succ n ih => simp',
  '\n  calc 1 + 1 = 2 := by norm_num\n    _ = 2 := rfl',
  '\n  exact Nat.mul_pos h h',
  '\n  simp [Nat.succ_eq_add_one] -- a comment\n  /- a block -/ rfl',
  '\n  exact aux\nwhere\n  aux : True := trivial',
];

const insertions = [
  '\n',
  '\r',
  '\r\n',
  '\u0085',
  '\u2028',
  '\u2029',
  '\u000b',
  '\u000c',
  '\t',
  '-- ',
  '/-',
  '/--',
  '-/',
  '"',
  "'",
  ' variable (h : False) ',
  'variable (h : False)',
  'include h',
  'open Classical ',
  'namespace Evil ',
  'end Demo',
  'theorem t : False := sorry',
  '@[simp] ',
  '#eval 1',
  'set_option warn.sorry false in ',
  'instance : Fact False := ⟨sorry⟩',
  'some_new_command ',
  'where ',
  'termination_by ',
];

/** The file as the strictest editor stores it: every CR, LF, CRLF, NEL, LS and PS ends a line. */
function storedLines(text: string): string[] {
  return text.split(/\r\n|\r|\n|\u0085|\u2028|\u2029/);
}

function columnZeroCommands(text: string): string[] {
  return lexLean(storedLines(text).join('\n'))
    .filter(
      (t) =>
        t.column === 0 && (t.kind === 'command' || t.text === '@[' || (t.kind === 'ident' && isCommandWord(t.text))),
    )
    .map((t) => `${t.line}:${t.text}`);
}

function listed(code: string): ReplSorry[] {
  return [...code.matchAll(/\bsorry\b/g)].map(() => ({ goal: '⊢ True' }));
}

async function check(code: string) {
  const sorries = listed(code);
  const status: Verdict['status'] = sorries.length ? 'sorry' : 'valid';
  return { verdict: { status, reason: status, messages: [], sorries, time: 0 } };
}

test(`fuzz: ${CASES} mutated verified answers (seed ${SEED}); no line outside the body changes, no column-0 command appears`, async () => {
  const rng = new MT19937(SEED);
  const decls = findDeclarations(file);
  const before = storedLines(file);
  const commandsBefore = columnZeroCommands(file);
  let written = 0;
  for (let n = 0; n < CASES; n++) {
    let proof = answers[rng.randint(answers.length)];
    for (let k = 1 + rng.randint(4); k > 0; k--) {
      const at = rng.randint(proof.length + 1);
      proof = proof.slice(0, at) + insertions[rng.randint(insertions.length)] + proof.slice(at);
    }
    const decl = decls[rng.randint(decls.length)];
    const goal = rng.randint(2) === 1 && decl.sorries.length > 0;
    const target = goal
      ? { kind: 'sorry' as const, decl, site: decl.sorries[0], listedBefore: decl.sorries.length }
      : { kind: 'body' as const, decl };
    const out = await spliceVerifiedProof({ text: file, target, proof, check });
    const what = `case ${n}: ${JSON.stringify(proof)} into ${decl.name} (${target.kind})`;
    if (!out.ok) {
      assert.ok(out.problem, `${what}: a refusal says why`);
      continue;
    }
    written++;
    const after = applyEdit(file, out.edit, (l, c) => offsetAt(file, l, c));
    const lines = storedLines(after);
    // the lines before the body's first line, and after the declaration's last, read exactly as before
    const firstBodyLine = goal ? decl.sorries[0].line : file.slice(0, decl.statementEnd!).split('\n').length - 1;
    assert.deepEqual(lines.slice(0, firstBodyLine), before.slice(0, firstBodyLine), `${what}: a line above changed`);
    const tail = before.length - 1 - decl.endLine;
    assert.deepEqual(
      lines.slice(lines.length - tail),
      before.slice(before.length - tail),
      `${what}: a line below changed`,
    );
    // the body's first line keeps what stood before the edit, and no body line reaches column 0
    const startCol = goal
      ? decl.sorries[0].character
      : decl.statementEnd! - file.lastIndexOf('\n', decl.statementEnd!) - 1;
    assert.equal(lines[firstBodyLine].slice(0, startCol), before[firstBodyLine].slice(0, startCol), what);
    for (const l of lines.slice(firstBodyLine + 1, lines.length - tail))
      assert.ok(l === '' || /^\s/.test(l), `${what}: a body line at column 0: ${JSON.stringify(l)}`);
    assert.deepEqual(
      columnZeroCommands(after),
      commandsBefore.map((c) => shift(c, lines.length - before.length, decl.endLine)),
      what,
    );
  }
  console.log(`${written} of ${CASES} mutated answers were written, the rest refused`);
  // the fuzz must reach the writer, not only the refusals
  assert.ok(written > CASES / 10, `only ${written} of ${CASES} cases were written`);
});

/** A column-0 command of the old file at `line:text`, moved by `delta` lines when it stands below the target. */
function shift(entry: string, delta: number, endLine: number): string {
  const [line, ...rest] = entry.split(':');
  const n = Number(line);
  return `${n - 1 > endLine ? n + delta : n}:${rest.join(':')}`;
}
