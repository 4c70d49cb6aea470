import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { findUntrustedCode, untrustedRules } from '../../backend/lean/untrusted';
import { splitHeader } from '../../backend/lean/header';

const stmt = 'theorem t (a b : ℕ) (h₀ : a = b) : b = a := by\n';
const cheats: [string, string, string][] = [
  ['#eval', `#eval IO.println "hi"\n${stmt}  omega`, 'hash-command'],
  ['#eval!', `${stmt}  omega\n#eval! (1 : Nat)`, 'hash-command'],
  ['#exit', `#exit\n${stmt}  omega`, 'hash-command'],
  ['run_cmd', `run_cmd Lean.logInfo "x"\n${stmt}  omega`, 'meta-command'],
  ['run_tac', `${stmt}  run_tac do\n    Lean.Elab.Tactic.evalTactic (← \`(tactic| omega))`, 'meta-command'],
  ['run_elab', `run_elab pure ()\n${stmt}  omega`, 'meta-command'],
  ['run_meta', `run_meta pure ()\n${stmt}  omega`, 'meta-command'],
  ['by_elab', `theorem t : True := by_elab pure (Lean.mkConst \`True.intro)`, 'meta-command'],
  ['elab', `elab "cheat" : tactic => pure ()\n${stmt}  cheat`, 'meta-command'],
  ['macro', `macro "cheat" : tactic => \`(tactic| sorry)\n${stmt}  cheat`, 'meta-command'],
  ['local macro_rules', `local macro_rules | \`(tactic| trivial) => \`(tactic| sorry)\n${stmt}  trivial`, 'meta-command'],
  ['syntax', `syntax "cheat" : tactic\n${stmt}  omega`, 'meta-command'],
  ['initialize', `initialize pure ()\n${stmt}  omega`, 'meta-command'],
  ['builtin_initialize', `builtin_initialize pure ()\n${stmt}  omega`, 'meta-command'],
  ['unsafe def', `unsafe def f : Nat := 1\n${stmt}  omega`, 'unsafe'],
  ['@[extern]', `@[extern "c_fn"] def f : Nat := 1\n${stmt}  omega`, 'attribute'],
  ['@[implemented_by]', `def g : Nat := 2\n@[implemented_by g] def f : Nat := 1\n${stmt}  omega`, 'attribute'],
  ['attribute [implemented_by]', `def g : Nat := 2\ndef f : Nat := 1\nattribute [implemented_by g] f\n${stmt}  omega`, 'attribute'],
  ['@[csimp]', `@[simp, csimp] theorem x : @id = @id := rfl\n${stmt}  omega`, 'attribute'],
  ['axiom', `axiom cheat : False\n${stmt}  exact cheat.elim`, 'axiom-declaration'],
  ['private axiom', `private axiom cheat : ∀ a b : ℕ, b = a\n${stmt}  exact cheat a b`, 'axiom-declaration'],
  ['opaque', `opaque cheat : False\n${stmt}  exact cheat.elim`, 'axiom-declaration'],
  ['debug.skipKernelTC', `set_option debug.skipKernelTC true\n${stmt}  omega`, 'kernel-option'],
  ['debug option in', `${stmt}  set_option debug.skipKernelTC true in omega`, 'kernel-option'],
  ['guillemet option name', `set_option «debug».skipKernelTC true\n${stmt}  omega`, 'kernel-option'],
  ['trace.profiler.output', `set_option trace.profiler.output "/tmp/x"\n${stmt}  omega`, 'kernel-option'],
  ['native_decide', `theorem t : 2 + 2 = 4 := by native_decide`, 'native-decide'],
  ['bv_decide', `theorem t (x : BitVec 8) : x &&& x = x := by bv_decide`, 'native-decide'],
  ['decide +native', `theorem t : 2 + 2 = 4 := by decide +native`, 'native-decide'],
  ['Lean.ofReduceBool', `theorem t : 2 + 2 = 4 := Lean.ofReduceBool _ _ rfl`, 'native-decide'],
  ['Lean.addDecl', `open Lean in\n${stmt}  exact (addDecl · )`, 'meta-api'],
  ['open … in addDecl', `open Lean Elab Tactic in\ntheorem t : True := by\n  run_tac do\n    Lean.addDecl default`, 'meta-command'],
  ['IO.Process', `def f := IO.Process.spawn {cmd := "sh"}\n${stmt}  omega`, 'meta-api'],
  ['unsafeIO', `def f := unsafeIO (pure 1)\n${stmt}  omega`, 'meta-api'],
  ['include_str', `def s := include_str "/etc/passwd"\n${stmt}  omega`, 'meta-api'],
  ['import in the body', `${stmt}  omega\nimport Mathlib`, 'import-in-body'],
  ['register_simp_attr', `register_simp_attr my_simp\n${stmt}  omega`, 'meta-command'],
  ['interpolated string code', `def s := s!"{unsafeIO (pure 1)}"\n${stmt}  omega`, 'meta-api'],
];

for (const [name, code, rule] of cheats) {
  test(`rejects ${name} (${rule})`, () => {
    const found = findUntrustedCode(code);
    assert.ok(found.some((f) => f.rule === rule), `expected rule ${rule}, got ${JSON.stringify(found.map((f) => f.rule))}`);
    assert.ok(found[0].message.length > 20);
    assert.ok(untrustedRules[rule]);
  });
}

test('reports the offending token at its codepoint position', () => {
  const [r] = findUntrustedCode('theorem t (x : 𝔽) : True := by\n  native_decide');
  assert.deepEqual([r.line, r.column, r.endColumn], [2, 2, 15]);
  const [s] = findUntrustedCode('theorem t (𝕜 : Type) : True := by native_decide');
  assert.equal(s.column, Array.from('theorem t (𝕜 : Type) : True := by ').length);
});

test('native_decide and friends pass when allowed', () => {
  assert.deepEqual(findUntrustedCode('theorem t : 2 + 2 = 4 := by native_decide', { allowNativeDecide: true }), []);
  assert.deepEqual(findUntrustedCode('theorem t : 2 + 2 = 4 := by decide +native', { allowNativeDecide: true }), []);
});

test('comments, doc comments, strings and chars never trigger a rule', () => {
  const code = [
    '-- #eval IO.println "x"  axiom cheat : False',
    '/- run_tac, unsafe, @[extern], /- nested #exit -/ native_decide -/',
    '/-- A doc comment mentioning `axiom` and `macro`. -/',
    'theorem t (h₀ : \'a\' = \'a\') : "#eval axiom unsafe" = "#eval axiom unsafe" := by',
    '  -- native_decide would be cheating',
    '  rfl',
  ].join('\n');
  assert.deepEqual(findUntrustedCode(code), []);
});

test('ordinary proof vocabulary passes (set_option maxHeartbeats, open … in, attributes, variable names)', () => {
  const code = [
    'set_option maxHeartbeats 400000 in',
    'open Real Nat in',
    '@[simp] theorem axiom_free (h\' : 1 < 2) (init_val : ℕ) (hsyntax : True) : True := by',
    '  have macro_h : (2:ℝ) ≤ 3 := by norm_num',
    '  decide',
    'attribute [local simp] Nat.add_comm',
    'lemma unsafe_free : 1 + 1 = 2 := by decide',
    'instance : Inhabited ℕ := ⟨0⟩',
  ].join('\n');
  assert.deepEqual(findUntrustedCode(code), []);
});

test('imports are fine inside the header', () => {
  const code = 'import Mathlib\nimport Aesop\ntheorem t : True := trivial';
  assert.deepEqual(findUntrustedCode(code, {}, splitHeader(code).headerLines), []);
});

test('no false positives on any miniF2F statement (Test and Valid, 488 files)', () => {
  const data = JSON.parse(readFileSync(join(__dirname, 'data', 'minif2f-statements.json'), 'utf8')) as { statements: Record<string, string> };
  const entries = Object.entries(data.statements);
  assert.equal(entries.length, 488);
  for (const [name, code] of entries) {
    const found = findUntrustedCode(code, {}, splitHeader(code).headerLines);
    assert.deepEqual(found, [], `${name}: ${JSON.stringify(found)}`);
  }
});

test('lexer edge cases: escaped quotes, char literals, comment markers inside strings, nesting', () => {
  const flagged = (code: string) => findUntrustedCode(code).map((r) => r.rule);
  assert.deepEqual(flagged('def s := "a\\"#eval" -- fine'), []);
  assert.deepEqual(flagged("def c := '\"'\n#eval 1"), ['hash-command']);
  assert.deepEqual(flagged('def s := "--"\n#eval 1'), ['hash-command']);
  assert.deepEqual(flagged('/- outer /- inner -/ #eval still comment -/\ntheorem t : True := trivial'), []);
  assert.deepEqual(flagged("theorem t (h' : 1 = 1) (h'' : True) : True := by\n  exact h''\n#exit"), ['hash-command']);
  assert.deepEqual(flagged('theorem t : 2 + 2 = 4 := «Lean».«ofReduceBool» _ _ rfl'), ['native-decide']);
  assert.deepEqual(flagged('axiom «x» : False\ndef f := Lean.«addDecl»'), ['axiom-declaration', 'meta-api']);
});

test('where Lean could read code that looks quoted to us, we read it as code too', () => {
  const flagged = (code: string) => findUntrustedCode(code).map((r) => r.rule);
  // an invalid char escape: Lean errors and resumes at the next command
  assert.ok(flagged("def c := '\\q #eval IO.println 1 '").includes('hash-command'));
  // an invalid string escape
  assert.ok(flagged('def s := "\\q #eval IO.println 1 "').includes('hash-command'));
  // an unterminated string or block comment
  assert.deepEqual(flagged('def s := "abc\n#eval 1'), ['hash-command']);
  assert.deepEqual(flagged('/- never closed\n#eval 1'), ['hash-command']);
  // a number glued to a command word: Lean reads the number, then the command
  assert.deepEqual(flagged('def x := 1builtin_initialize pure ()'), ['meta-command']);
  assert.deepEqual(flagged('def x := 0xffelab "x" : tactic => pure ()'), []); // 0xffe then `lab`: not a keyword
  assert.deepEqual(flagged('def x := 2.5e3 + 0b101 + 0o17'), []);
  // valid escapes stay strings
  assert.deepEqual(flagged('def s := "tab\\t quote\\" hex\\x41 uni\\u00e9 #eval"\ndef c := \'\\n\''), []);
});
