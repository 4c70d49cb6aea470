// The strict verdict: every cheat in the reference table is refused; honest proofs pass.
// Runs the real verifier and pool over the stand-in REPL (test double).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { standInVerifier, type StandInSetup } from './standInVerifier';
import { judgeResponse, readAxiomAnswer } from '../../backend/lean/verdict';

let s: StandInSetup;
let native: StandInSetup;
before(() => {
  s = standInVerifier({ maxRepls: 2 });
  native = standInVerifier({ maxRepls: 1, allowNativeDecide: true });
});
after(async () => {
  await s.verifier.close();
  await native.verifier.close();
});

const header = 'import Mathlib\n\nopen Real\n\n';
const stmt = 'theorem target (a b : ℕ) (h₀ : a = b) : b = a := by\n';

test('an honest proof is valid with clean axioms', async () => {
  const out = await s.verifier.check(`${header}${stmt}  simp [h₀]`);
  assert.equal(out.verdict.status, 'valid', out.verdict.reason);
  assert.deepEqual(out.verdict.axioms, ['Classical.choice', 'Quot.sound', 'propext']);
  assert.deepEqual(out.verdict.axiomsByDeclaration, { target: ['Classical.choice', 'Quot.sound', 'propext'] });
  assert.match(out.verdict.reason, /axioms clean/);
});

const cheats: [string, string, string][] = [
  ['injected axiom', `axiom cheat : False\n${stmt}  exact cheat.elim`, 'rejected'],
  ['admit', `${stmt}  admit`, 'sorry'],
  ['explicit sorryAx', `${stmt}  exact sorryAx _ false`, 'sorry'],
  ['sorry', `${stmt}  sorry`, 'sorry'],
  [
    'run_tac addDecl',
    `${stmt}  run_tac do\n    Lean.addDecl (.axiomDecl { name := \`c, levelParams := [], type := default, isUnsafe := false })`,
    'rejected',
  ],
  ['#eval with IO', `#eval IO.FS.writeFile "/tmp/pwn.c" "int main(){}"\n${stmt}  omega`, 'rejected'],
  ['native_decide', `theorem target : 2 + 2 = 4 := by native_decide`, 'rejected'],
  ['bv_decide', `theorem target (x : BitVec 8) : x &&& x = x := by bv_decide`, 'rejected'],
  ['debug.skipKernelTC', `set_option debug.skipKernelTC true in\n${stmt}  omega`, 'rejected'],
  ['macro to sorry', `macro "done!" : tactic => \`(tactic| sorry)\n${stmt}  done!`, 'rejected'],
];

for (const [name, body, status] of cheats) {
  test(`cheat refused: ${name} -> ${status}`, async () => {
    const out = await s.verifier.check(header + body);
    assert.equal(out.verdict.status, status, out.verdict.reason);
    assert.ok(out.verdict.reason.length > 10);
  });
}

test('a lemma reusing a sorry-ed helper carries sorryAx into the audit', async () => {
  // the helper's sorry is caught directly; and a theorem that only *uses* it is caught by the audit
  const out = await s.verifier.check(`${header}theorem helper : 1 = 1 := by sorry\n${stmt}  simp [helper, h₀]`, {
    theorems: ['target'],
  });
  assert.equal(out.verdict.status, 'sorry');
});

test('native_decide passes only when configured, and its axioms are then allowed', async () => {
  const out = await native.verifier.check('theorem target : 2 + 2 = 4 := by native_decide');
  assert.equal(out.verdict.status, 'valid', out.verdict.reason);
  assert.deepEqual(out.verdict.axioms, ['Lean.ofReduceBool']);
  const bv = await native.verifier.check('theorem target (x : BitVec 8) : x &&& x = x := by bv_decide');
  assert.equal(bv.verdict.status, 'valid', bv.verdict.reason);
  assert.deepEqual(bv.verdict.axioms, ['target._native.bv_decide.ax_1_1']);
});

test("examples reach Lean unchanged (positions match the caller's text) and are audited through the audit copy", async () => {
  const code = `${header}example : True := by\n  exact bogus_x`;
  const out = await s.verifier.check(code);
  assert.equal(out.verdict.status, 'lean_error');
  const m = out.verdict.messages[0];
  assert.equal(m.data, 'Unknown identifier `bogus_x`');
  const lines = code.split('\n');
  assert.equal(lines[m.pos.line - 1].slice(m.pos.column, m.endPos?.column), 'bogus_x');
  const sorried = await s.verifier.check(`${header}example : True := by\n  sorry`);
  assert.equal(sorried.verdict.status, 'sorry');
  const fine = await s.verifier.check(`${header}example : 1 = 1 := by simp`);
  assert.equal(fine.verdict.status, 'valid', fine.verdict.reason);
  assert.deepEqual(Object.keys(fine.verdict.axiomsByDeclaration ?? {}), ['example (line 5)']);
});

test('positions are relative to the full snippet, with codepoint columns', async () => {
  const code = `${header}theorem t (x : 𝔽) : True := by\n  exact bogus_y`;
  const out = await s.verifier.check(code);
  const m = out.verdict.messages[0];
  assert.equal(m.pos.line, 6);
  assert.equal(m.pos.column, 8);
  assert.ok(out.response?.messages?.[0].pos.line === 6);
});

test("rejections point at the offending token in the caller's text", async () => {
  const out = await s.verifier.check(`${header}${stmt}  native_decide`);
  assert.equal(out.verdict.status, 'rejected');
  assert.deepEqual(out.verdict.messages[0].pos, { line: 6, column: 2 });
  assert.equal(out.verdict.messages[0].severity, 'error');
  assert.equal(s.log().filter((l) => l.includes('native')).length, 0);
});

test('unsolved goals and unknown identifiers are lean errors with a readable reason', async () => {
  const out = await s.verifier.check(`${stmt}  skip`);
  assert.equal(out.verdict.status, 'lean_error');
  assert.match(out.verdict.reason, /line 1: unsolved goals/);
});

test('a REPL-level error is repl_error', async () => {
  const out = await s.verifier.check('theorem t : True := trivial -- stand_in_repl_error');
  assert.equal(out.verdict.status, 'repl_error');
  assert.match(out.verdict.reason, /stand-in REPL-level error/);
});

test('auditing a declaration that does not exist fails closed', async () => {
  const out = await s.verifier.check('theorem t : True := trivial', { theorems: ['does_not_exist'] });
  assert.equal(out.verdict.status, 'lean_error');
  assert.match(out.verdict.reason, /Could not audit the axioms of 'does_not_exist': Unknown constant/);
});

test('judge: a custom axiom from an import is outside the allow-list; success messages do not matter', () => {
  const audit = new Map([
    [
      't',
      [
        {
          pos: { line: 1, column: 0 },
          endPos: null,
          severity: 'info' as const,
          data: "'t' depends on axioms: [propext,\n  MyProject.cheat]",
        },
      ],
    ],
  ]);
  const v = judgeResponse({
    response: {
      env: 1,
      messages: [{ pos: { line: 1, column: 0 }, endPos: null, severity: 'info', data: 'Goals accomplished!' }],
    },
    audit,
    policy: { allowed: ['propext'], allowNativeDecide: false },
    time: 0.1,
  });
  assert.equal(v.status, 'rejected');
  assert.deepEqual(v.forbiddenAxioms, ['MyProject.cheat']);
});

test('judge: an unreadable audit answer is never valid (fail closed)', () => {
  assert.deepEqual(readAxiomAnswer([]), { ok: false, problem: 'no answer' });
  const audit = new Map([
    ['t', [{ pos: { line: 1, column: 0 }, endPos: null, severity: 'info' as const, data: 'something else' }]],
  ]);
  const v = judgeResponse({ response: { env: 1 }, audit, policy: { allowed: [], allowNativeDecide: false }, time: 0 });
  assert.equal(v.status, 'lean_error');
});

for (const warning of ["declaration uses 'sorry'", 'declaration uses `sorry`']) {
  test(`judge: the sorry warning alone (${warning}) is a sorry even with an empty sorries list`, () => {
    const v = judgeResponse({
      response: {
        env: 1,
        messages: [{ pos: { line: 2, column: 8 }, endPos: null, severity: 'warning', data: warning }],
      },
      audit: new Map(),
      policy: { allowed: [], allowNativeDecide: false },
      time: 0,
    });
    assert.equal(v.status, 'sorry');
    assert.match(v.reason, /admit, sorryAx/);
  });
}

const info = (data: string) => ({ pos: { line: 1, column: 0 }, endPos: null, severity: 'info' as const, data });

test('judge: an answer naming another constant, two answers, or no answer fail the audit', () => {
  assert.deepEqual(readAxiomAnswer([info("'Foo.t' does not depend on any axioms")], 't'), {
    ok: false,
    problem: "the answer names 'Foo.t', not 't'",
  });
  assert.equal(
    readAxiomAnswer([info("'t' does not depend on any axioms"), info("'Foo.t' depends on axioms: [sorryAx]")], 't').ok,
    false,
  );
  assert.deepEqual(readAxiomAnswer([info("'_private.0.t' depends on axioms: [propext]")], 't'), {
    ok: true,
    axioms: ['propext'],
  });
  assert.deepEqual(readAxiomAnswer([info("'«my t».x' does not depend on any axioms")], '«my t».x'), {
    ok: true,
    axioms: [],
  });
  const v = judgeResponse({
    response: { env: 1 },
    audit: new Map([['t', [info("'Foo.t' does not depend on any axioms")]]]),
    policy: { allowed: [], allowNativeDecide: false },
    time: 0,
  });
  assert.equal(v.status, 'lean_error');
  assert.match(v.reason, /names 'Foo.t', not 't'/);
});

test('judge: never valid when nothing was audited', () => {
  const v = judgeResponse({
    response: { env: 1 },
    audit: new Map(),
    policy: { allowed: [], allowNativeDecide: false },
    time: 0,
  });
  assert.equal(v.status, 'rejected');
  assert.match(v.reason, /Nothing was audited/);
});
