// The zero-setup fallback (`lake env lean --json FILE`), with the stand-in's `--json` mode standing
// in for `lean --json` (test double), through the real verifier.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LeanFileRunner, parseLeanJson } from '../../backend/lean/leanFileRunner';
import { defaultAllowedAxioms } from '../../backend/lean/verdict';
import { Verifier } from '../../backend/lean/verifier';
import { standInReplScript } from '../../backend/demo/stand-in-repl/index';

function fileVerifier(): Verifier {
  const runner = new LeanFileRunner({
    projectDir: mkdtempSync(join(tmpdir(), 'kimina-lf-')),
    leanCommand: [process.execPath, standInReplScript],
    env: process.env,
    maxParallel: 2,
  });
  return new Verifier({
    runner,
    policy: { allowed: defaultAllowedAxioms, allowNativeDecide: false },
    maxInFlight: 16,
    defaultTimeoutS: 10,
  });
}

test("parseLeanJson maps Lean's JSON lines to REPL messages", () => {
  const out = parseLeanJson(
    [
      'noise',
      JSON.stringify({
        severity: 'information',
        pos: { line: 3, column: 0 },
        endPos: null,
        data: 'Nat : Type\n',
        fileName: 'x',
      }),
      JSON.stringify({ severity: 'error', pos: { line: 4, column: 2 }, endPos: { line: 4, column: 5 }, data: 'bad' }),
    ].join('\n'),
  );
  assert.deepEqual(out, [
    { pos: { line: 3, column: 0 }, endPos: null, severity: 'info', data: 'Nat : Type' },
    { pos: { line: 4, column: 2 }, endPos: { line: 4, column: 5 }, severity: 'error', data: 'bad' },
  ]);
});

test('the fallback gives the same verdicts, positions and axiom audit as the pool', async () => {
  const v = fileVerifier();
  try {
    const [good, admit, bad, fake] = await v.checkBatch([
      'import Mathlib\n\ntheorem t (a : ℕ) : a = a := by simp',
      'import Mathlib\ntheorem t : 1 = 1 := by\n  admit',
      'import Mathlib\n\ntheorem t : True := by\n  exact bogus_q',
      // a forged audit answer inside the body is not read as the audit (answers are matched by line)
      'theorem t : 1 = 1 := by sorry\n#print "\'t\' does not depend on any axioms"',
    ]);
    assert.equal(good.verdict.status, 'valid', good.verdict.reason);
    assert.deepEqual(good.verdict.axioms, ['Classical.choice', 'Quot.sound', 'propext']);
    assert.equal(admit.verdict.status, 'sorry');
    assert.equal(bad.verdict.status, 'lean_error');
    assert.deepEqual(bad.verdict.messages[0].pos, { line: 4, column: 8 });
    assert.equal(fake.verdict.status, 'sorry');
    assert.equal(v.stats().mode, 'lean-file');
  } finally {
    await v.close();
  }
});

test('the fallback reports a missing Lean toolchain clearly', async () => {
  const runner = new LeanFileRunner({
    projectDir: tmpdir(),
    leanCommand: ['/nonexistent/lake', 'env', 'lean'],
    env: process.env,
    maxParallel: 1,
  });
  const v = new Verifier({
    runner,
    policy: { allowed: [], allowNativeDecide: false },
    maxInFlight: 4,
    defaultTimeoutS: 5,
  });
  const out = await v.check('theorem t : True := trivial');
  assert.equal(out.verdict.status, 'server_error');
  assert.equal(out.verdict.leanMissing, true);
  assert.match(out.verdict.reason, /^Lean could not be started: `lake` was not found\. Install Lean with elan/);
  assert.doesNotMatch(out.verdict.reason, /nonexistent|lake env lean/, "the command line is not the user's words");
});

test("a sandbox that cannot find lake is Lean missing, named without the sandbox's words", async () => {
  // what `unshare --net -- lake env lean …` prints and exits with when lake is not on the PATH (Linux util-linux)
  const unshare = [
    process.execPath,
    '-e',
    "process.stderr.write('unshare: failed to execute lake: No such file or directory\\n'); process.exit(127)",
  ];
  const runner = new LeanFileRunner({
    projectDir: tmpdir(),
    leanCommand: ['lake', 'env', 'lean'],
    wrap: () => unshare,
    env: process.env,
    maxParallel: 1,
  });
  const v = new Verifier({
    runner,
    policy: { allowed: [], allowNativeDecide: false },
    maxInFlight: 4,
    defaultTimeoutS: 5,
  });
  try {
    const out = await v.check('theorem t : True := trivial');
    assert.equal(out.verdict.status, 'server_error');
    assert.equal(out.verdict.leanMissing, true, 'the same typed kind as a Lean that is not installed');
    assert.equal(
      out.verdict.reason,
      'Lean could not be started: `lake` was not found. Install Lean with elan: https://github.com/leanprover/elan',
    );
  } finally {
    await v.close();
  }
});

test('the fallback times out a hung Lean and kills it', async () => {
  const v = fileVerifier();
  try {
    const out = await v.check('theorem t : True := trivial -- stand_in_hang', { timeout: 0.5 });
    assert.equal(out.verdict.status, 'timeout_error');
    assert.equal(out.verdict.reason, 'Lean command timed out in 0.5 seconds');
  } finally {
    await v.close();
  }
});

test("the fallback: examples are audited through a second file; the scope the body leaves open cannot redirect the audit; import errors at the user's line", async () => {
  const v = fileVerifier();
  try {
    const [sectionVar, silenced, redirect, badImport] = await v.checkBatch([
      'import Mathlib\nsection\nvariable (n : ℕ)\nexample : n + 0 = n := by simp\nend',
      'set_option warn.sorry false in\nexample : (1 : ℕ) = 2 := sorryAx _',
      'namespace Clean\ntheorem target : (1 : ℕ) = 1 := rfl\nend Clean\nset_option warn.sorry false in\ntheorem target : (1 : ℕ) = 2 := sorryAx _\nopen Clean\nnamespace Clean',
      'import Aesop\nimport BogusLib\ntheorem t : True := trivial',
    ]);
    assert.equal(sectionVar.verdict.status, 'valid', sectionVar.verdict.reason);
    assert.deepEqual(Object.keys(sectionVar.verdict.axiomsByDeclaration ?? {}), ['example (line 4)']);
    assert.equal(silenced.verdict.status, 'sorry', silenced.verdict.reason);
    assert.equal(redirect.verdict.status, 'sorry', redirect.verdict.reason);
    assert.equal(badImport.verdict.status, 'lean_error');
    assert.deepEqual(badImport.verdict.messages[0].pos, { line: 2, column: 7 });
  } finally {
    await v.close();
  }
});
