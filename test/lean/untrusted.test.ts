import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { findUntrustedCode, untrustedRules } from '../../backend/lean/untrusted';
import { splitHeader } from '../../backend/lean/header';
import { leanFilesOf, mirrorOf } from './mirrorFiles';
import { FAILING_CODE, STATEMENT } from '../../backend/demo/kiminaExamples';
import { feedbackCases } from '../prover/fixtures/feedbackCases';
import { MINIF2F_SPLITS, minif2fFiles } from '../eval/helpers';

const stmt = 'theorem t (a b : ℕ) (h₀ : a = b) : b = a := by\n';
const rules = (code: string, headerLines = 0): string[] => findUntrustedCode(code, {}, headerLines).map((r) => r.rule);

/** [name, code, the rule that must fire] */
const cheats: [string, string, string][] = [
  // execution and stopping commands
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
  [
    'local macro_rules',
    `local macro_rules | \`(tactic| trivial) => \`(tactic| sorry)\n${stmt}  trivial`,
    'meta-command',
  ],
  ['syntax', `syntax "cheat" : tactic\n${stmt}  omega`, 'meta-command'],
  ['declare_syntax_cat', `declare_syntax_cat foo\n${stmt}  omega`, 'meta-command'],
  [
    'notation redefining a statement token',
    `local infix:50 " = " => fun _ _ => True\ntheorem u : 1 = 2 := trivial`,
    'meta-command',
  ],
  ['notation hiding sorry', `notation "done" => sorry\ntheorem u : 1 = 2 := done`, 'meta-command'],
  ['initialize', `initialize pure ()\n${stmt}  omega`, 'meta-command'],
  ['builtin_initialize', `builtin_initialize pure ()\n${stmt}  omega`, 'meta-command'],
  ['register_simp_attr', `register_simp_attr my_simp\n${stmt}  omega`, 'meta-command'],
  ['simproc', `simproc foo (_) := fun _ => pure .continue\n${stmt}  omega`, 'meta-command'],
  // unsafe code, axioms
  ['unsafe def', `unsafe def f : Nat := 1\n${stmt}  omega`, 'unsafe'],
  ['axiom', `axiom cheat : False\n${stmt}  exact cheat.elim`, 'axiom-declaration'],
  ['private axiom', `private axiom cheat : ∀ a b : ℕ, b = a\n${stmt}  exact cheat a b`, 'axiom-declaration'],
  ['opaque', `opaque cheat : False\n${stmt}  exact cheat.elim`, 'axiom-declaration'],
  // attributes outside the allow-list
  ['@[extern]', `@[extern "c_fn"] def f : Nat := 1\n${stmt}  omega`, 'attribute'],
  ['@[implemented_by]', `def g : Nat := 2\n@[implemented_by g] def f : Nat := 1\n${stmt}  omega`, 'attribute'],
  [
    'attribute [implemented_by]',
    `def g : Nat := 2\ndef f : Nat := 1\nattribute [implemented_by g] f\n${stmt}  omega`,
    'attribute',
  ],
  ['@[csimp] after an allowed one', `@[simp, csimp] theorem x : @id = @id := rfl\n${stmt}  omega`, 'attribute'],
  [
    '@[norm_num] extension',
    `@[norm_num (_ : ℕ) + _] def evalCheat : Mathlib.Meta.NormNum.NormNumExt := sorry\n${stmt}  norm_num`,
    'attribute',
  ],
  ['@[positivity] extension', `@[positivity _] def evalCheat := 0\n${stmt}  omega`, 'attribute'],
  ['@[default_instance]', `@[default_instance] instance : OfNat ℕ 5 := ⟨3⟩\n${stmt}  omega`, 'attribute'],
  ['@[local tactic]', `@[local tactic foo] def f := 0\n${stmt}  omega`, 'attribute'],
  ['@[«macro»]', `@[«macro» foo] def f := 0\n${stmt}  omega`, 'attribute'],
  ['attribute name not a name', `@["simp"] theorem x : True := trivial`, 'attribute'],
  ['attribute list ending in a comma', `@[simp,] theorem x : True := trivial`, 'attribute'],
  // options outside the allow-list
  ['debug.skipKernelTC', `set_option debug.skipKernelTC true\n${stmt}  omega`, 'kernel-option'],
  ['debug option in a tactic', `${stmt}  set_option debug.skipKernelTC true in omega`, 'kernel-option'],
  ['guillemet option name', `set_option «debug».skipKernelTC true\n${stmt}  omega`, 'kernel-option'],
  ['trace.profiler.output', `set_option trace.profiler.output "/tmp/x"\n${stmt}  omega`, 'kernel-option'],
  ['compiler option', `set_option compiler.extract_closed false\n${stmt}  omega`, 'kernel-option'],
  ['interpreter option', `set_option interpreter.prefer_native true\n${stmt}  omega`, 'kernel-option'],
  ['an unknown option', `set_option Elab.async false\n${stmt}  omega`, 'kernel-option'],
  // compiled code
  ['native_decide', `theorem t : 2 + 2 = 4 := by native_decide`, 'native-decide'],
  ['bv_decide', `theorem t (x : BitVec 8) : x &&& x = x := by bv_decide`, 'native-decide'],
  ['decide +native', `theorem t : 2 + 2 = 4 := by decide +native`, 'native-decide'],
  ['Lean.ofReduceBool', `theorem t : 2 + 2 = 4 := Lean.ofReduceBool _ _ rfl`, 'native-decide'],
  ['plausible', `${stmt}  plausible`, 'native-decide'],
  // meta-programming and IO, by namespace
  ['open Lean in … addDecl', `open Lean in\n${stmt}  exact (addDecl · )`, 'meta-api'],
  [
    'open … in run_tac',
    `open Lean Elab Tactic in\ntheorem t : True := by\n  run_tac do\n    Lean.addDecl default`,
    'meta-command',
  ],
  ['IO.Process', `def f := IO.Process.spawn {cmd := "sh"}\n${stmt}  omega`, 'meta-api'],
  ['_root_.IO', `def f := _root_.IO.println "x"\n${stmt}  omega`, 'meta-api'],
  ['«IO»', `def f := «IO».println "x"\n${stmt}  omega`, 'meta-api'],
  ['unsafeIO', `def f := unsafeIO (pure 1)\n${stmt}  omega`, 'meta-api'],
  ['unsafeCast', `def f : Nat := unsafeCast "x"\n${stmt}  omega`, 'meta-api'],
  ['include_str', `def s := include_str "/etc/passwd"\n${stmt}  omega`, 'meta-api'],
  ['addDeclWithoutChecking', `def f := Lean.Environment.addDeclWithoutChecking\n${stmt}  omega`, 'meta-api'],
  ['evalTerm', `def f := Lean.Elab.Term.evalTerm\n${stmt}  omega`, 'meta-api'],
  ['BaseIO', `def f : BaseIO Unit := pure ()\n${stmt}  omega`, 'meta-api'],
  ['EIO', `def f : EIO String Unit := pure ()\n${stmt}  omega`, 'meta-api'],
  ['System.FilePath', `def f : System.FilePath := "/etc/passwd"\n${stmt}  omega`, 'meta-api'],
  ['saveModuleData', `def f := Lean.saveModuleData\n${stmt}  omega`, 'meta-api'],
  ['Mathlib.Tactic', `def f := Mathlib.Tactic.Ring.proveEq\n${stmt}  omega`, 'meta-api'],
  ['Std.Internal', `def f := Std.Internal.IO.Async.sleep\n${stmt}  omega`, 'meta-api'],
  ['namespace Lean', `namespace Lean\ndef f := addDecl\nend Lean\n${stmt}  omega`, 'meta-api'],
  ['open Mathlib (Tactic.… in scope)', `open Mathlib in\ndef f := Tactic.Ring.proveEq\n${stmt}  omega`, 'meta-api'],
  ['export IO', `export IO (println)\n${stmt}  omega`, 'meta-api'],
  ['name literal', `def n := \`Lean.Elab.Command.elabCommand\n${stmt}  omega`, 'meta-api'],
  ['import in the body', `${stmt}  omega\nimport Mathlib`, 'import-in-body'],
  ['prelude', `prelude\n${stmt}  omega`, 'import-in-body'],
  ['set_option without a name', `set_option\n${stmt}  omega`, 'kernel-option'],
  // code inside `{…}` of strings
  ['s! interpolation', `def s := s!"{unsafeIO (pure 1)}"\n${stmt}  omega`, 'meta-api'],
  [
    'interpolation in a plain string (throwError)',
    `def f : Except String Nat := throw "{by run_tac pure ()}"\n${stmt}  omega`,
    'meta-command',
  ],
];

for (const [name, code, rule] of cheats) {
  test(`rejects ${name} (${rule})`, () => {
    const found = findUntrustedCode(code);
    assert.ok(
      found.some((f) => f.rule === rule),
      `expected rule ${rule}, got ${JSON.stringify(found.map((f) => f.rule))}`,
    );
    assert.ok(found.every((f) => f.message.length > 20 && untrustedRules[f.rule]));
  });
}

/** The bypasses of issue 10 (point 5): each passed the filter before the lexer followed Lean. */
const bypasses: [string, string, string[]][] = [
  [
    'raw string hiding an axiom',
    'def s := r"\\"\naxiom cheat : False\ntheorem t : 1 = 2 := cheat.elim\n-- "',
    ['axiom-declaration'],
  ],
  [
    'raw string hiding run_tac in a tactic block',
    'theorem t : 1 = 2 := by\n  have s := r"\\"\n  run_tac Lean.Elab.Tactic.closeMainGoal (Lean.mkConst `sorryAx)\n  -- "\n  rfl',
    ['meta-command'],
  ],
  ['raw string with #: r#"…"# ends only at "#', 'def s := r#"x""#\naxiom cheat : False\n-- "#', ['axiom-declaration']],
  [
    'a letter Lean rejects glued to a command',
    'érun_cmd Lean.logInfo "x"\ntheorem t : True := trivial',
    ['lexical', 'meta-command'],
  ],
  [
    'a Cyrillic letter glued to a command',
    '\u0430run_cmd pure ()\ntheorem t : True := trivial',
    ['lexical', 'meta-command'],
  ],
  ['an unterminated «', 'def x := «abc\nrun_cmd pure ()', ['lexical', 'meta-command']],
  ['an unterminated « with nothing after', 'theorem t : True := trivial\ndef x := «abc', ['lexical']],
  ['/-/- opens one comment level in Lean', '/-/- -/ run_cmd pure () -/\ntheorem t : True := trivial', ['meta-command']],
  [
    'a string Lean may interpolate',
    'def s := throwError "{"}" run_cmd pure () "{"\ntheorem t : True := trivial',
    ['lexical'],
  ],
  [
    'a comment start after a token that may take its dash (<-)',
    'def f := do\n  let x <-- pure 1\nrun_cmd pure ()\ntheorem t : True := trivial',
    ['lexical', 'meta-command'],
  ],
  [
    'a comment start after // (Subtype)',
    'def P := {x : ℕ //- x = x } run_cmd pure () -/\ntheorem t : True := trivial',
    ['lexical'],
  ],
  [
    'an untokenizable symbol whose byte 0xAB Lean may read as «',
    'theorem t : True := trivial\n⊫ "» run_cmd pure () "',
    ['lexical'],
  ],
  [
    'a char literal glued after a token that may end in a quote',
    'def s := ∑\'"\' run_cmd "\ntheorem t : True := trivial',
    ['lexical'],
  ],
];

for (const [name, code, expected] of bypasses) {
  test(`bypass refused: ${name}`, () => {
    const found = rules(code);
    assert.ok(found.length > 0, 'refused');
    for (const rule of expected) assert.ok(found.includes(rule), `expected ${rule}, got ${JSON.stringify(found)}`);
  });
}

test('lexical problems are reported at their codepoint position with a clear message', () => {
  const [r] = findUntrustedCode('theorem t : True := by\n  have 𝔸 := «oops\n  trivial');
  assert.equal(r.rule, 'lexical');
  assert.deepEqual([r.line, r.column], [2, 12]);
  assert.match(r.message, /unterminated identifier escape/);
  for (const code of [
    'def s := "abc',
    'def s := r#"abc"',
    '/- open',
    "def c := 'ab'",
    'def s := "\\q"',
    'def x := 0x',
    'def x := 2e',
  ]) {
    const found = rules(code);
    assert.ok(found.length > 0 && found.every((r) => r === 'lexical'), `${code}: ${JSON.stringify(found)}`);
  }
});

test('reports the offending token at its codepoint position', () => {
  const [r] = findUntrustedCode('theorem t (x : 𝔽) : True := by\n  native_decide');
  assert.deepEqual([r.line, r.column, r.endColumn], [2, 2, 15]);
  const [s] = findUntrustedCode('theorem t (𝕜 : Type) : True := by native_decide');
  assert.equal(s.column, Array.from('theorem t (𝕜 : Type) : True := by ').length);
});

test('native_decide and friends pass when allowed', () => {
  for (const code of [
    'theorem t : 2 + 2 = 4 := by native_decide',
    'theorem t : 2 + 2 = 4 := by decide +native',
    'theorem t : 2 + 2 = 4 := Lean.ofReduceBool _ _ rfl',
    'theorem t : 2 + 2 = 4 := by decide (config := { native := true })',
  ]) {
    assert.deepEqual(findUntrustedCode(code, { allowNativeDecide: true }), [], code);
  }
});

test('comments, doc comments, strings and chars never trigger a rule', () => {
  const code = [
    '-- #eval IO.println "x"  axiom cheat : False',
    '/- run_tac, unsafe, @[extern], /- nested #exit -/ native_decide -/',
    '/-- A doc comment mentioning `axiom` and `macro`. -/',
    'theorem t (h₀ : \'a\' = \'a\') : "#eval axiom unsafe" = "#eval axiom unsafe" := by',
    '  -- native_decide would be cheating',
    '  rfl',
    'def s := r#"run_cmd "quoted" unsafe"#',
  ].join('\n');
  assert.deepEqual(findUntrustedCode(code), []);
});

test('the allow-lists: attributes, options and # commands proofs use pass', () => {
  const code = [
    'set_option maxHeartbeats 400000 in',
    'set_option linter.unusedVariables false',
    'set_option pp.all true in',
    'open Real Nat in',
    "@[simp] theorem axiom_free (h' : 1 < 2) (init_val : ℕ) (hsyntax : True) : True := by",
    '  have macro_h : (2:ℝ) ≤ 3 := by norm_num',
    '  decide',
    'attribute [local simp] Nat.add_comm',
    'attribute [-simp] Nat.add_comm',
    'attribute [local instance] Classical.propDecidable',
    '@[simp high, norm_cast] lemma unsafe_free : 1 + 1 = 2 := by decide',
    '@[aesop safe apply (rule_sets := [Foo])] theorem a1 : True := trivial',
    '@[instance 100, reducible] def inst : Inhabited ℕ := ⟨0⟩',
    '@[ext] structure P where x : ℕ',
    'instance : Inhabited ℕ := ⟨0⟩',
    '#check Nat.add_comm',
    '#print axioms axiom_free',
    // these only hide messages: the axiom audit sees sorryAx whatever they say (test/lean/cheats.test.ts)
    'set_option warn.sorry false in',
    '#reduce 1 + 1',
    "example (s : Set ℕ) (f : ℕ → ℕ) : f '' s = f '' s ∧ f ⁻¹' s = f ⁻¹' s ∧ sᶜ = sᶜ := ⟨rfl, rfl, rfl⟩",
  ].join('\n');
  assert.deepEqual(findUntrustedCode(code), []);
});

test('imports are fine inside the header, module names included', () => {
  const code = 'import Mathlib\nimport Aesop\nimport Lean.Elab\ntheorem t : True := trivial';
  assert.deepEqual(findUntrustedCode(code, {}, splitHeader(code).headerLines), []);
});

/** Every code whose filter result must be empty, with a label. */
function cleanCorpus(): [string, string][] {
  const data = JSON.parse(readFileSync(join(__dirname, 'data', 'minif2f-statements.json'), 'utf8')) as {
    statements: Record<string, string>;
  };
  const out: [string, string][] = Object.entries(data.statements);
  // the recipe's extraction from well-formed answers (malformed ones hold deliberately broken text)
  const golden = JSON.parse(
    readFileSync(join(__dirname, '..', 'prover', 'fixtures', 'recipe-golden.json'), 'utf8'),
  ) as { results: { error: string; proof?: string; finalCode?: string }[] };
  golden.results.forEach((r, i) => {
    if (r.error !== 'NONE') return;
    for (const code of [r.proof, r.finalCode]) if (code) out.push([`recipe-golden #${i}`, code]);
  });
  feedbackCases(150).forEach((c, i) => out.push([`feedbackCases #${i}`, c.code]));
  out.push(['kiminaExamples STATEMENT', STATEMENT], ['kiminaExamples FAILING_CODE', FAILING_CODE]);
  return out;
}

test("no false positives: 488 miniF2F statements and the prover fixtures' proofs", () => {
  const corpus = cleanCorpus();
  assert.ok(corpus.length >= 488 + 150);
  for (const [name, code] of corpus) {
    const found = findUntrustedCode(code, {}, splitHeader(code).headerLines);
    assert.deepEqual(found, [], `${name}: ${JSON.stringify(found)}`);
  }
});

test('no false positives on the 488 miniF2F-lean4 files the repository carries', () => {
  let n = 0;
  for (const split of MINIF2F_SPLITS) {
    for (const { name: file, path } of minif2fFiles(split)) {
      const code = readFileSync(path, 'utf8');
      assert.deepEqual(findUntrustedCode(code, {}, splitHeader(code).headerLines), [], file);
      n++;
    }
  }
  assert.equal(n, 488);
});

// Real model proofs (Goedel-Prover outputs on Lean Workbook) kept as test inputs by kimina-lean-server
// (github.com/project-numina/kimina-lean-server, tests/match/input/*.lean, MIT); read from the local
// mirror when there is one, never copied into this repository.
const klsMirror = mirrorOf('project-numina+kimina-lean-server');
test(
  "no false positives on kimina-lean-server's recorded model proofs",
  { skip: !klsMirror && 'LEAN_GIT_MIRRORS has no kimina-lean-server clone' },
  () => {
    const files = leanFilesOf(klsMirror!, 'tests/match/input');
    assert.ok(files.length >= 100);
    for (const { path, text } of files) {
      assert.deepEqual(findUntrustedCode(text, {}, splitHeader(text).headerLines), [], path);
    }
  },
);

// Kimina-Prover Preview's own solved miniF2F-test proofs (github.com/MoonshotAI/Kimina-Prover-Preview,
// minif2f_test_solved.zip at 7abd61a), read from the local mirror when there is one, never copied here.
const kppMirror = mirrorOf('MoonshotAI+Kimina-Prover-Preview');
test(
  "no false positives on Kimina-Prover Preview's solved miniF2F proofs",
  { skip: !kppMirror && 'LEAN_GIT_MIRRORS has no Kimina-Prover-Preview clone' },
  () => {
    const dir = mkdtempSync(join(tmpdir(), 'kpp-'));
    writeFileSync(
      join(dir, 'a.zip'),
      execFileSync('git', ['-C', kppMirror!, 'show', 'HEAD:minif2f_test_solved.zip'], { maxBuffer: 64 << 20 }),
    );
    execFileSync('unzip', ['-q', join(dir, 'a.zip'), '-d', dir]);
    const src = join(dir, 'minif2f_test_solved', 'src');
    const files = readdirSync(src).filter((f) => f.endsWith('.lean'));
    assert.equal(files.length, 197);
    let native = 0;
    for (const file of files) {
      const code = readFileSync(join(src, file), 'utf8');
      const headerLines = splitHeader(code).headerLines;
      assert.deepEqual(findUntrustedCode(code, { allowNativeDecide: true }, headerLines), [], file);
      // by default only native_decide is refused
      const byDefault = findUntrustedCode(code, {}, headerLines);
      assert.ok(
        byDefault.every((r) => r.rule === 'native-decide'),
        file,
      );
      if (byDefault.length > 0) native++;
    }
    assert.equal(native, 11);
  },
);
