// Opt-in: the same verdict cases against a real Lean toolchain and REPL (Lean core only, no Mathlib).
// Runs when KIMINA_LEAN_PROJECT points at a Lean project where `lake` works; uses its REPL build
// (or `kimina lean setup`'s), else the `lake env lean --json` fallback.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { buildVerifier, verifierSettingsOf, type BuiltVerifier } from '../../backend/lean/buildVerifier';
import { readSettings } from '../../backend/settings/settings';

const project = process.env.KIMINA_LEAN_PROJECT;
const skipReason = !project
  ? 'set KIMINA_LEAN_PROJECT to a built Lean project to run the real-Lean suite'
  : !existsSync(join(project, 'lean-toolchain'))
    ? `KIMINA_LEAN_PROJECT=${project} has no lean-toolchain`
    : spawnSync('lake', ['--version'], { cwd: project }).status !== 0
      ? "'lake' does not run here (install Lean with elan)"
      : undefined;

describe('real Lean', { skip: skipReason }, () => {
  let strict: BuiltVerifier;
  let native: BuiltVerifier;
  before(() => {
    const settings = { ...verifierSettingsOf(readSettings()), maxRepls: 2 };
    strict = buildVerifier({ ...settings, allowNativeDecide: false });
    native = buildVerifier({ ...settings, allowNativeDecide: true, maxRepls: 1 });
  });
  after(async () => {
    await strict?.verifier.close();
    await native?.verifier.close();
  });

  const check = (code: string) => strict.verifier.check(code, { timeout: 120 });

  test('a core proof is valid; its axioms are read from #print axioms', async () => {
    const out = await check('theorem t (a b : Nat) (h : a = b) : b = a := h.symm');
    assert.equal(out.verdict.status, 'valid', out.verdict.reason);
    assert.deepEqual(out.verdict.axiomsByDeclaration, { t: [] });
    const omega = await check('theorem u (a : Nat) (h : 2 < a) : 1 < a := by omega');
    assert.equal(omega.verdict.status, 'valid', omega.verdict.reason);
  });

  test('sorry, admit and sorryAx are all sorry', async () => {
    for (const proof of ['by sorry', 'by admit', 'sorryAx _ false']) {
      const out = await check(`theorem t : 1 = 2 := ${proof}`);
      assert.equal(out.verdict.status, 'sorry', `${proof}: ${out.verdict.reason}`);
    }
  });

  test("an error is a lean_error at the caller's line and codepoint column", async () => {
    const code = '\n\ntheorem t (𝔽 : Type) : True := bogus_ident';
    const out = await check(code);
    assert.equal(out.verdict.status, 'lean_error');
    const m = out.verdict.messages.find((x) => x.severity === 'error');
    assert.equal(m?.pos.line, 3);
    assert.equal(m?.pos.column, Array.from('theorem t (𝔽 : Type) : True := ').length);
  });

  test('examples are audited under their generated name', async () => {
    const out = await check('example : 2 + 2 = 4 := rfl');
    assert.equal(out.verdict.status, 'valid', out.verdict.reason);
    assert.deepEqual(Object.keys(out.verdict.axiomsByDeclaration ?? {}), ['kimina_example_1']);
  });

  test('cheats are refused', async () => {
    assert.equal((await check('axiom cheat : False\ntheorem t : 1 = 2 := cheat.elim')).verdict.status, 'rejected');
    assert.equal((await check('theorem t : 2 + 2 = 4 := by native_decide')).verdict.status, 'rejected');
  });

  test('native_decide, when allowed, passes with its compiler axioms', async () => {
    const out = await native.verifier.check('theorem t : 2 + 2 = 4 := by native_decide', { timeout: 120 });
    assert.equal(out.verdict.status, 'valid', out.verdict.reason);
    assert.ok(
      (out.verdict.axioms ?? []).some((a) => a === 'Lean.ofReduceBool' || a.includes('_native')),
      JSON.stringify(out.verdict.axioms),
    );
  });
});
