// The cheat corpus: ways to make a false (or unproved) statement pass a Lean 4 checker, each with the
// verdict it must get and the layer that catches it. Sources: SafeVerify and Comparator's threat lists,
// lean4checker's README, Lean Zulip's reward-hacking threads, kimina-lean-server issue #75, PrimeIntellect
// verifiers #2177, leanprover/comparator #39, this project's issue 10, and the untrusted-code filter's
// own rules (backend/lean/untrusted.ts). Run by test/lean/cheats.test.ts on both Lean generations.
import type { VerdictStatus } from '../../../backend/protocol';

/**
 * What stops it: the untrusted-code filter, the audit plan (refuses what it cannot name with certainty),
 * Lean's sorry warning / `sorries`, the axiom audit, or Lean itself.
 */
export type CaughtBy = 'filter' | 'plan' | 'warning' | 'audit' | 'lean';

export interface Cheat {
  id: string;
  class: 'sorry' | 'silenced-sorry' | 'axiom' | 'native' | 'meta' | 'option' | 'audit-redirect' | 'hidden-error' | 'nameless' | 'filter-bypass' | 'red-team';
  /** Where the trick comes from. */
  source: string;
  code: string;
  /** The trusted theorem names a caller (reward, prover, eval) passes. */
  theorems?: string[];
  /** Acceptable verdicts (never 'valid'); more than one only where two layers may catch it first. */
  expected: VerdictStatus[];
  caughtBy: CaughtBy;
}

const stmt = 'theorem target : (1 : ℕ) = 2 := by\n';
const off = 'set_option warn.sorry false in\n';

export const cheats: Cheat[] = [
  // --- sorry in every form (warning, `sorries`, audit)
  { id: 'sorry-tactic', class: 'sorry', source: 'classic', code: `${stmt}  sorry`, expected: ['sorry'], caughtBy: 'warning' },
  { id: 'sorry-term', class: 'sorry', source: 'classic', code: 'theorem target : (1 : ℕ) = 2 := sorry', expected: ['sorry'], caughtBy: 'warning' },
  { id: 'admit', class: 'sorry', source: 'kimina-lean-server #75 (admit passes analyze())', code: `${stmt}  admit`, expected: ['sorry'], caughtBy: 'warning' },
  { id: 'sorryAx-term', class: 'sorry', source: 'lean-verification.md §3', code: `${stmt}  exact sorryAx _ false`, expected: ['sorry'], caughtBy: 'warning' },
  { id: 'sorry-in-used-helper', class: 'sorry', source: 'issue 10 point 1', code: `def helper : (1 : ℕ) = 2 := sorryAx _\n${stmt}  exact helper`, expected: ['sorry'], caughtBy: 'warning' },
  { id: 'sorry-in-unused-def', class: 'sorry', source: 'issue 10 point 2', code: `def junk : ℕ := sorryAx _\ntheorem target : (1 : ℕ) = 1 := by\n  simp`, expected: ['sorry'], caughtBy: 'warning' },
  { id: 'sorry-decreasing-by', class: 'sorry', source: 'issue 10 (decreasing_by)', code: 'def f : ℕ → ℕ\n  | 0 => 0\n  | n + 1 => f n\ndecreasing_by sorry\ntheorem target : f 1 = 0 := by\n  simp [f]', expected: ['sorry'], caughtBy: 'warning' },
  { id: 'sorry-behind-notation', class: 'sorry', source: 'issue 10 (behind a notation)', code: `notation "cheat!" => sorry\n${stmt}  exact cheat!`, expected: ['rejected'], caughtBy: 'filter' },
  // --- the warning silenced: only the audit can see sorryAx
  { id: 'warn-sorry-off-in', class: 'silenced-sorry', source: 'issue 10 point 2', code: `${off}${stmt}  exact sorryAx _ false`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'warn-sorry-off-root-sorryAx', class: 'silenced-sorry', source: 'sorryAx spelled `_root_.sorryAx` (resolves to the axiom; no `sorries` entry)', code: `${off}${stmt}  exact _root_.sorryAx _ false`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'warn-sorry-off-quoted-sorryAx', class: 'silenced-sorry', source: 'sorryAx spelled `«sorryAx»` (resolves to the axiom; no `sorries` entry)', code: `${off}${stmt}  exact «sorryAx» _ false`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'warn-sorry-off-global', class: 'silenced-sorry', source: 'issue 10 point 2', code: `set_option warn.sorry false\n${stmt}  admit`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'warn-sorry-off-helper', class: 'silenced-sorry', source: 'issue 10 point 2', code: `set_option warn.sorry false\ndef helper : (1 : ℕ) = 2 := sorryAx _\n${stmt}  exact helper`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'warn-sorry-off-unused-def', class: 'silenced-sorry', source: 'issue 10 point 2 (a def built on sorryAx, used or not)', code: `set_option warn.sorry false\ndef junk : ℕ := sorryAx _\ntheorem target : (1 : ℕ) = 1 := by\n  simp`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'guard-msgs-swallows-warning', class: 'silenced-sorry', source: '#guard_msgs hides messages (refused since the red-team review)', code: `/-- warning: declaration uses \`sorry\` -/\n#guard_msgs in\n${stmt}  exact sorryAx _ false`, expected: ['rejected'], caughtBy: 'filter' },
  // --- errors hidden from the messages: Lean still adds the declaration with sorryAx
  { id: 'guard-msgs-swallows-error', class: 'hidden-error', source: '#guard_msgs hides messages (refused since the red-team review)', code: `/-- error: unsolved goals -/\n#guard_msgs in\n${stmt}  skip`, expected: ['rejected'], caughtBy: 'filter' },
  // --- nameless declarations: the audit copy names them
  { id: 'example-sorryAx-silenced', class: 'nameless', source: 'issue 10 point 3', code: `${off}example : (1 : ℕ) = 2 := sorryAx _`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'example-guarded', class: 'nameless', source: 'issue 10 point 3; #guard_msgs refused since the red-team review', code: '#guard_msgs in\nexample : (1 : ℕ) = 2 := by\n  admit', expected: ['rejected'], caughtBy: 'filter' },
  { id: 'anonymous-instance-sorry', class: 'nameless', source: 'Zulip reward hacking: Decidable instance override', code: `${off}instance : Decidable ((1 : ℕ) = 2) := sorryAx _\ntheorem target : (1 : ℕ) = 1 := by\n  simp`, expected: ['sorry'], caughtBy: 'audit' },
  // --- the audit pointed elsewhere (issue 10 point 2); the caller's trusted name is `target`
  { id: 'open-redirect', class: 'audit-redirect', source: 'issue 10 point 2 (open)', theorems: ['target'], code: `namespace Clean\ntheorem target : (1 : ℕ) = 1 := rfl\nend Clean\n${off}${stmt}  exact sorryAx _ false\nopen Clean`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'unclosed-namespace-redirect', class: 'audit-redirect', source: 'issue 10 point 2 (namespace)', theorems: ['target'], code: `${off}${stmt}  exact sorryAx _ false\nnamespace Clean\ntheorem target : (1 : ℕ) = 1 := rfl`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'export-redirect', class: 'audit-redirect', source: 'issue 10 point 2 (export)', theorems: ['target'], code: `namespace Clean\ntheorem target : (1 : ℕ) = 1 := rfl\nend Clean\n${off}${stmt}  exact sorryAx _ false\nexport Clean (target)`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'root-prefixed-inside-namespace', class: 'audit-redirect', source: 'issue 10 point 2 (_root_)', code: `namespace Foo\n${off}theorem _root_.target : (1 : ℕ) = 2 := sorryAx _\nend Foo`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'namespaced-duplicate-name', class: 'audit-redirect', source: 'issue 10 point 2 (a second answer)', code: `theorem target : (1 : ℕ) = 1 := rfl\nnamespace Foo\n${off}theorem target : (1 : ℕ) = 2 := sorryAx _\nend Foo\nopen Foo`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'private-theorem', class: 'audit-redirect', source: 'private names are mangled', code: `${off}private theorem target : (1 : ℕ) = 2 := sorryAx _`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'trusted-name-missing', class: 'audit-redirect', source: 'issue 10 (audit always includes the trusted name)', theorems: ['target'], code: 'theorem other : (1 : ℕ) = 1 := rfl', expected: ['lean_error'], caughtBy: 'audit' },
  { id: 'nothing-declared', class: 'audit-redirect', source: 'issue 10 (never valid with nothing audited)', code: '#check (1 : ℕ)', expected: ['rejected'], caughtBy: 'audit' },
  // --- axioms
  { id: 'injected-axiom', class: 'axiom', source: 'PrimeIntellect-ai/verifiers #2177', code: `axiom cheat : False\n${stmt}  exact cheat.elim`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'opaque-false', class: 'axiom', source: 'SafeVerify', code: `opaque cheat : False\n${stmt}  exact cheat.elim`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'axiom-in-namespace', class: 'axiom', source: 'SafeVerify', code: `namespace X\naxiom cheat : (1 : ℕ) = 2\nend X\n${stmt}  exact X.cheat`, expected: ['rejected'], caughtBy: 'filter' },
  // --- compiler trust
  { id: 'native-decide', class: 'native', source: 'lean4checker README; Lean PR #12217', code: 'theorem target : 2 + 2 = 4 := by native_decide', expected: ['rejected'], caughtBy: 'filter' },
  { id: 'bv-decide', class: 'native', source: 'Lean PR #12217', code: 'theorem target (x : BitVec 8) : x &&& x = x := by bv_decide', expected: ['rejected'], caughtBy: 'filter' },
  { id: 'decide-plus-native', class: 'native', source: 'Lean decide +native', code: 'theorem target : 2 + 2 = 4 := by decide +native', expected: ['rejected'], caughtBy: 'filter' },
  { id: 'ofReduceBool-direct', class: 'native', source: 'SafeVerify', code: 'theorem target : (1 : ℕ) = 2 := by\n  have := Lean.ofReduceBool\n  exact sorryAx _', expected: ['rejected'], caughtBy: 'filter' },
  { id: 'implemented-by', class: 'native', source: 'Comparator threat list', code: `def f : Bool := false\n@[implemented_by f] def g : Bool := true\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'extern', class: 'native', source: 'Comparator threat list', code: `@[extern "lean_nat_add"] def myAdd (a b : ℕ) : ℕ := a\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'csimp', class: 'native', source: 'filter rule: attribute', code: `@[csimp] theorem bad : @id = @id := rfl\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  // --- code run inside the checker
  { id: 'run-tac-addDecl', class: 'meta', source: 'leanprover/comparator #39', code: `${stmt}  run_tac do\n    Lean.addDecl (.axiomDecl { name := \`c, levelParams := [], type := default, isUnsafe := false })`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'run-cmd', class: 'meta', source: 'filter rule: meta-command', code: `run_cmd Lean.modifyEnv id\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'eval-io', class: 'meta', source: 'filter rule: hash-command', code: `#eval IO.FS.writeFile "/tmp/pwn" "x"\n${stmt}  omega`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'exit', class: 'meta', source: 'SafeVerify (#exit stops checking)', code: `${stmt}  exact sorryAx _\n#exit`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'macro-to-sorry', class: 'meta', source: 'lean-verification.md §3', code: `macro "done!" : tactic => \`(tactic| sorry)\n${stmt}  done!`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'elab-tactic', class: 'meta', source: 'filter rule: meta-command', code: `elab "win" : tactic => Lean.Elab.Tactic.evalTactic (← \`(tactic| sorry))\n${stmt}  win`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'syntax-macro-rules', class: 'meta', source: 'filter rule: meta-command', code: `syntax "win" : tactic\nmacro_rules | \`(tactic| win) => \`(tactic| sorry)\n${stmt}  win`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'initialize', class: 'meta', source: 'filter rule: meta-command', code: `initialize pure ()\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'unsafe-def', class: 'meta', source: 'filter rule: unsafe', code: `unsafe def bad : (1 : ℕ) = 2 := unsafeCast ()\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'unsafeCast', class: 'meta', source: 'filter rule: meta-api', code: `${stmt}  exact unsafeCast ()`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'import-in-body', class: 'meta', source: 'filter rule: import-in-body', code: `theorem a : True := trivial\nimport Cheat\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'attribute-command-implemented-by', class: 'meta', source: 'filter rule: attribute', code: `def f : Bool := false\ndef g : Bool := true\nattribute [implemented_by f] g\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  // --- options that weaken checking
  { id: 'skip-kernel-tc', class: 'option', source: 'SafeVerify (debug.skipKernelTC)', code: `set_option debug.skipKernelTC true in\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'compiler-option', class: 'option', source: 'filter rule: kernel-option', code: `set_option compiler.extract_closed false in\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  // --- text the filter reads differently from Lean (issue 10 point 5; the filter's rewrite owns these)
  { id: 'raw-string-hides-axiom', class: 'filter-bypass', source: 'issue 10 point 5', code: 'def s := r"\\"\naxiom cheat : False\ntheorem target : (1 : ℕ) = 2 := cheat.elim\n-- "', expected: ['rejected'], caughtBy: 'filter' },
  { id: 'raw-string-hides-axiom-trusted', class: 'filter-bypass', source: 'issue 10 point 5 (the caller\'s name is audited whatever the lexer found)', theorems: ['target'], code: 'def s := r"\\"\naxiom cheat : False\ntheorem target : (1 : ℕ) = 2 := cheat.elim\n-- "', expected: ['rejected', 'lean_error'], caughtBy: 'filter' },
  { id: 'raw-string-hides-run-tac', class: 'filter-bypass', source: 'issue 10 point 5', code: 'theorem target : (1 : ℕ) = 2 := by\n  have s := r"\\"\n  run_tac pure ()\n  -- "\n  exact sorryAx _', expected: ['rejected'], caughtBy: 'filter' },
  { id: 'glued-letter-run-cmd', class: 'filter-bypass', source: 'issue 10 point 5', code: `érun_cmd Lean.modifyEnv id\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'unterminated-guillemet', class: 'filter-bypass', source: 'issue 10 point 5', code: `def «x := 1\nrun_cmd Lean.modifyEnv id\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'norm-num-extension', class: 'filter-bypass', source: 'issue 10 point 5', code: `@[norm_num (1 : ℕ) = 2] def ext : Nat := 0\n${stmt}  norm_num`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'positivity-extension', class: 'filter-bypass', source: 'issue 10 point 5', code: `@[positivity (1 : ℕ)] def ext : Nat := 0\n${stmt}  positivity`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'addDeclWithoutChecking', class: 'filter-bypass', source: 'issue 10 point 5', code: `${stmt}  exact (Lean.Environment.addDeclWithoutChecking default default).elim`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'evalTerm', class: 'filter-bypass', source: 'issue 10 point 5', code: `${stmt}  exact (Lean.Elab.Term.evalTerm Nat default default).elim`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'BaseIO', class: 'filter-bypass', source: 'issue 10 point 5', code: `def act : BaseIO Unit := pure ()\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'EIO', class: 'filter-bypass', source: 'issue 10 point 5', code: `def act : EIO String Unit := pure ()\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'System-FilePath', class: 'filter-bypass', source: 'issue 10 point 5', code: `def p : System.FilePath := "/etc/passwd"\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  { id: 'saveModuleData', class: 'filter-bypass', source: 'issue 10 point 5', code: `def w := Lean.saveModuleData\n${stmt}  exact sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
  // --- red-team review (docs/verifier.md): declarations the audit might not name, answers it might misread
  { id: 'quoted-namespace-collision', class: 'red-team', source: 'red-team: `namespace «A.B»` is one component; the audit once asked for A.B.target (three), a clean twin', code: `namespace «A.B»\n${off}theorem target : (1 : ℕ) = 2 := sorryAx _\nend «A.B»\ntheorem A.B.target : (1 : ℕ) = 1 := rfl`, expected: ['sorry', 'lean_error'], caughtBy: 'audit' },
  { id: 'root-in-namespace-name', class: 'red-team', source: 'red-team: `namespace _root_.Foo`', code: `namespace _root_.Foo\n${off}theorem target : (1 : ℕ) = 2 := sorryAx _\nend _root_.Foo\ntheorem Foo.target : (1 : ℕ) = 1 := rfl`, expected: ['rejected'], caughtBy: 'plan' },
  { id: 'line-break-in-name', class: 'red-team', source: 'red-team: a `«»` name holding a line break would shift the one-name-per-line audit answers', code: `${off}theorem «tar\nget» : (1 : ℕ) = 2 := sorryAx _\ntheorem target : (1 : ℕ) = 1 := rfl`, expected: ['rejected'], caughtBy: 'plan' },
  { id: 'irreducible-def-silenced', class: 'red-team', source: 'red-team: Mathlib `irreducible_def` adds a declaration the plan does not name', code: `${off}irreducible_def junk : (1 : ℕ) = 2 := sorryAx _\ntheorem target : (1 : ℕ) = 1 := rfl`, expected: ['rejected'], caughtBy: 'plan' },
  { id: 'alias-silenced', class: 'red-team', source: 'red-team: Batteries `alias` adds a declaration the plan does not name', code: `${off}alias good := sorryAx\ntheorem target : (1 : ℕ) = 1 := rfl`, expected: ['rejected'], caughtBy: 'plan' },
  { id: 'end-never-opened', class: 'red-team', source: 'red-team: `end` of a namespace that was never opened', code: `end Foo\n${off}theorem target : (1 : ℕ) = 2 := sorryAx _`, expected: ['rejected'], caughtBy: 'plan' },
  { id: 'mutual-silenced', class: 'red-team', source: 'red-team: `mutual` block', code: `mutual\n${off}theorem a : (1 : ℕ) = 2 := sorryAx _\ntheorem b : (1 : ℕ) = 1 := rfl\nend`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'where-aux-silenced', class: 'red-team', source: 'red-team: a `where` auxiliary holds the sorry', code: `${off}theorem target : (1 : ℕ) = 2 := aux\nwhere aux : (1 : ℕ) = 2 := sorryAx _`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'trace-forged-answer', class: 'red-team', source: 'red-team: a body message that reads like an audit answer', code: `${off}${stmt}  trace "'target' does not depend on any axioms"\n  exact sorryAx _ false`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'protected-twin-open', class: 'red-team', source: 'red-team: `protected` twin plus `open`', theorems: ['Foo.target'], code: `namespace Foo\n${off}protected theorem target : (1 : ℕ) = 2 := sorryAx _\nend Foo\ntheorem target : (1 : ℕ) = 1 := rfl\nopen Foo`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'inhabited-false-instance', class: 'red-team', source: 'red-team: `instance : Inhabited False`', code: `${off}instance : Inhabited False := ⟨sorryAx _⟩\ntheorem target : (1 : ℕ) = 2 := (default : False).elim`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'verso-docstring-code', class: 'red-team', source: 'red-team: `doc.verso true` elaborates code blocks inside doc comments, which the filter reads as comments', code: 'set_option doc.verso true\n/--\n```lean\nrun_cmd Lean.modifyEnv id\n```\n-/\ntheorem target : (1 : ℕ) = 2 := by\n  exact sorryAx _', expected: ['rejected'], caughtBy: 'filter' },
  { id: 'header-comment-hides-run-cmd', class: 'red-team', source: 'red-team: `import Mathlib.X/-` reached Lean as `import Mathlib` (the `/-` dropped) while the filter read the next lines as a comment', code: 'import Mathlib.Tactic/-\nrun_cmd Lean.modifyEnv id\n-- -/\ntheorem target : (1 : ℕ) = 2 := by\n  exact sorryAx _', expected: ['rejected'], caughtBy: 'filter' },
  { id: 'header-string-hides-run-cmd', class: 'red-team', source: 'red-team: the same with a string opened on an import line', code: 'import Mathlib.Tactic"\nrun_cmd Lean.modifyEnv id\n-- "\ntheorem target : (1 : ℕ) = 2 := by\n  exact sorryAx _', expected: ['rejected'], caughtBy: 'filter' },
  { id: 'guard-msgs-hides-duplicate', class: 'red-team', source: "red-team: '#guard_msgs' hides \"'target' has already been declared\"; the false twin is never added and the audit answers for the clean one", code: "theorem target : (1 : ℕ) = 1 := rfl\n/-- error: 'target' has already been declared -/\n#guard_msgs in\ntheorem target : (1 : ℕ) = 2 := by\n  decide", expected: ['rejected'], caughtBy: 'filter' },
  { id: 'guard-msgs-hides-library-duplicate', class: 'red-team', source: 'red-team: the same against a library name, so the source declares the name once', code: "/-- error: 'Nat.add_comm' has already been declared -/\n#guard_msgs in\ntheorem Nat.add_comm : (1 : ℕ) = 2 := by\n  decide", expected: ['rejected'], caughtBy: 'filter' },
  { id: 'duplicate-name', class: 'red-team', source: 'red-team: a name declared twice (Lean refuses the second; the plan refuses before Lean)', code: 'theorem target : (1 : ℕ) = 1 := rfl\nnamespace Foo\nend Foo\nprivate theorem target : (1 : ℕ) = 2 := by\n  decide', expected: ['rejected'], caughtBy: 'plan' },
  // --- issue 20 (independent review): what the checker must still see through
  { id: 'mutual-end-closes-namespace', class: 'red-team', source: 'issue 20 point 2: `mutual … end` inside a namespace, then a root twin and a namespaced sorryAx', code: `theorem c : True := trivial\nnamespace Foo\nmutual\n  theorem a : True := trivial\n  theorem b : True := trivial\nend\n${off}theorem c : False := sorryAx False\nend Foo`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'namespace-parts-end-one', class: 'red-team', source: 'issue 20 point 2: `namespace A.B` … `end B` closes only B', code: `theorem t : True := trivial\nnamespace A.B\nend B\n${off}theorem t : (1 : ℕ) = 2 := sorryAx _\nend A`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'first-admit-fallback', class: 'sorry', source: 'issue 20 point 3: a name that does not exist makes `first` fall through to admit', code: 'theorem target (a : ℕ) (h : a = 1) : a = 1 := by\n  first | exact a_0 | admit', expected: ['sorry'], caughtBy: 'warning' },
  { id: 'first-admit-fallback-silenced', class: 'silenced-sorry', source: 'issue 20 point 3, the warning off', code: `${off}theorem target (a : ℕ) (h : a = 1) : a = 2 := by\n  first | exact a_0 | admit`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'guillemet-root-name-silenced', class: 'red-team', source: 'issue 20 point 7: `«two plus two»` audited as `_root_.«two plus two»`', code: `${off}theorem «two plus two» : 2 + 2 = 5 := sorryAx _`, expected: ['sorry'], caughtBy: 'audit' },
  { id: 'exit-hides-rest', class: 'red-team', source: 'red-team: `#exit` stops checking', code: `theorem target : (1 : ℕ) = 1 := rfl\n#exit\ntheorem bad : (1 : ℕ) = 2 := sorryAx _`, expected: ['rejected'], caughtBy: 'filter' },
];

/**
 * KNOWN OPEN: cheats the filter (backend/lean/untrusted.ts) still lets through to Lean, where the
 * warning or the audit may or may not stop them; the test marks these `todo`. None since the filter's
 * rewrite (lexer that follows Lean, allow-lists, namespaces).
 */
export const knownOpen: readonly string[] = [];

/**
 * Issue 20 point 1: answers verified for their own theorem that carry commands after the proof (`trailing`) or
 * before it (`leading`, inside the proof text). The editor must write only the target's body
 * (backend/editor/splice.ts `spliceVerifiedProof`): none of these commands may reach the user's file
 * (test/editor/spliceRule.test.ts, for Accept, goal mode and Prove All Sorries). A trailing command is cut
 * off and the proof before it is written; a leading one leaves no proof before it, so the answer is refused;
 * one no list knows at the tactic column is refused by Lean's parse of the proof in tactic parentheses.
 * The stand-in REPL does not model `include` or `instance`, so the structural rule is what refuses them.
 * The second group came from the independent audit: commands the first deny-list did not know (`variable?`
 * and the Mathlib/Batteries/core commands after it) and a command no list knows (the column rule).
 */
export const spliceAttacks: {
  id: string;
  proof: string;
  at: 'trailing' | 'leading' | 'tactic-column' | 'line-break';
}[] = [
  { id: 'variable+include', proof: '\n  norm_num\n\nvariable (h : False)\ninclude h\n', at: 'trailing' },
  { id: 'variable+include indented', proof: '\n  norm_num\n  variable (h : False)\n  include h\n', at: 'trailing' },
  { id: 'include mid-line', proof: ' norm_num\nvariable (h : False) include h', at: 'trailing' },
  { id: 'instance', proof: '\n  norm_num\n\ninstance : Inhabited Empty := ⟨sorry⟩\n', at: 'trailing' },
  { id: 'set_option warn.sorry false', proof: '\n  norm_num\nset_option warn.sorry false\n', at: 'trailing' },
  { id: 'open', proof: '\n  norm_num\n\nopen Real\n', at: 'trailing' },
  { id: 'namespace', proof: '\n  norm_num\nnamespace Evil\nend Evil\nnamespace Other\n', at: 'trailing' },
  { id: 'notation', proof: '\n  norm_num\nnotation "ff" => False\n', at: 'trailing' },
  { id: 'attribute', proof: '\n  norm_num\nattribute [simp] Nat.add_comm\n', at: 'trailing' },
  { id: 'another theorem with doc', proof: '\n  norm_num\n\n/-- doc -/\ntheorem extra : True := trivial\n', at: 'trailing' },
  { id: '@[simp] theorem', proof: '\n  norm_num\n@[simp] theorem extra : True := trivial\n', at: 'trailing' },
  { id: '#eval', proof: '\n  norm_num\n#eval 1\n', at: 'trailing' },
  { id: 'universe + export', proof: '\n  norm_num\nuniverse u\nexport Nat (succ)\n', at: 'trailing' },
  { id: 'macro', proof: '\n  norm_num\nmacro "cheat" : tactic => `(tactic| sorry)\n', at: 'trailing' },
  { id: 'open … in with nothing after', proof: '\n  norm_num\nopen Real in\n', at: 'trailing' },
  { id: 'section + end', proof: '\n  norm_num\nsection\nvariable (h : False)\nend\n', at: 'trailing' },
  { id: 'omit + mutual', proof: '\n  norm_num\nomit h\nmutual\nend\n', at: 'trailing' },
  // --- the audit: commands the first deny-list missed, and one no list knows
  { id: 'variable? (audit)', proof: '\n  norm_num\nvariable? [h : Fact False]\n', at: 'trailing' },
  { id: 'variable? indented', proof: '\n  norm_num\n  variable? [h : Fact False]\n', at: 'trailing' },
  { id: 'add_aesop_rules', proof: '\n  norm_num\nadd_aesop_rules safe (by exact False.elim h)\n', at: 'trailing' },
  { id: 'grind_pattern', proof: '\n  norm_num\ngrind_pattern Nat.succ_le => Nat.succ a\n', at: 'trailing' },
  { id: 'initialize_simps_projections', proof: '\n  norm_num\ninitialize_simps_projections Equiv (toFun → apply)\n', at: 'trailing' },
  { id: 'initialize_simps_projections? indented', proof: '\n  norm_num\n  initialize_simps_projections? Equiv\n', at: 'trailing' },
  { id: 'proof_wanted', proof: '\n  norm_num\nproof_wanted extra : False\n', at: 'trailing' },
  { id: 'theorem_wanted indented', proof: '\n  norm_num\n  theorem_wanted extra : False\n', at: 'trailing' },
  { id: 'recommended_spelling', proof: '\n  norm_num\nrecommended_spelling "ff" for "False" in [False]\n', at: 'trailing' },
  { id: 'extend_docs', proof: '\n  norm_num\nextend_docs False after "x"\n', at: 'trailing' },
  { id: 'scoped instance', proof: '\n  norm_num\nscoped instance : Fact False := ⟨sorry⟩\n', at: 'trailing' },
  { id: 'public section', proof: '\n  norm_num\npublic section\nvariable (h : False)\n', at: 'trailing' },
  { id: 'unknown command at column 0 (column rule)', proof: '\n  norm_num\nsome_new_command [h : Fact False]\n', at: 'trailing' },
  // --- a command no list knows, standing where a tactic could (the tactic column or right of it): only Lean
  // can tell, so the splice asks it with the proof in tactic parentheses, where such a command is a parse error
  { id: 'unknown command at the tactic column (probe)', proof: '\n  norm_num\n  some_new_command [h : Fact False]\n', at: 'tactic-column' },
  { id: 'unknown command right of the tactic column (probe)', proof: '\n  norm_num\n    some_new_command [h : Fact False]\n', at: 'tactic-column' },
  { id: 'unknown command after a nested block (probe)', proof: '\n  have : True := by\n    trivial\n  some_new_command [h : Fact False]\n  norm_num\n', at: 'tactic-column' },
  // --- leading: a command before the proof
  { id: 'leading open', proof: '\nopen Real\n  norm_num\n', at: 'leading' },
  { id: 'leading set_option warn.sorry false in', proof: '\n  set_option warn.sorry false in\n  norm_num\n', at: 'leading' },
  { id: 'leading variable+include', proof: '\nvariable (h : False)\ninclude h\n  norm_num\n', at: 'leading' },
  { id: 'leading variable+include indented', proof: '\n  variable (h : False)\n  include h\n  norm_num\n', at: 'leading' },
  { id: 'leading instance', proof: '\ninstance : Fact False := ⟨sorry⟩\n  norm_num\n', at: 'leading' },
  { id: 'leading namespace', proof: '\nnamespace Evil\n  norm_num\n', at: 'leading' },
  { id: 'leading notation', proof: '\nnotation "ff" => False\n  norm_num\n', at: 'leading' },
  { id: 'leading variable?', proof: '\nvariable? [h : Fact False]\n  norm_num\n', at: 'leading' },
  { id: 'leading open … in + variable', proof: '\nopen Real in\nvariable (h : False)\n  norm_num\n', at: 'leading' },
  { id: 'leading on the by line', proof: ' variable (h : False)\n  norm_num\n', at: 'leading' },
  { id: 'leading unknown command (column rule)', proof: '\nsome_new_command [h : Fact False]\n  norm_num\n', at: 'leading' },
  // --- issue 29: line breaks an editor makes that Lean does not (a lone CR hides the commands behind a `--`
  // from Lean and our lexer; VS Code's buffer breaks the line there), and a `where` that turned the probe off
  { id: 'lone CR hides variable+include (issue 29)', proof: ' norm_num -- done\rvariable (h : False)\rinclude h\rexample : True := by\n  try trivial', at: 'trailing' },
  { id: 'CRLF around variable+include (issue 29)', proof: '\r\n  norm_num\r\nvariable (h : False)\r\ninclude h\r\n', at: 'trailing' },
  { id: 'lone CR at the tactic column (issue 29)', proof: '\n  norm_num -- ok\r  some_new_command [h : Fact False]', at: 'tactic-column' },
  { id: 'NEL hides variable (issue 29)', proof: ' norm_num -- done\u0085variable (h : False)\u0085include h', at: 'line-break' },
  { id: 'LS hides variable (issue 29)', proof: ' norm_num -- done\u2028variable (h : False)\u2028include h', at: 'line-break' },
  { id: 'PS hides variable (issue 29)', proof: ' norm_num -- done\u2029variable (h : False)\u2029include h', at: 'line-break' },
  { id: 'form feed hides variable (issue 29)', proof: ' norm_num -- done\u000cvariable (h : False)', at: 'line-break' },
  { id: 'unknown command before a where (probe, issue 29)', proof: '\n  norm_num\n  some_new_command [h : Fact False]\nwhere\n  aux : True := trivial\n', at: 'tactic-column' },
];

/**
 * Issue 20 point 3 and the audit: proofs of a goal that leave a hole Lean's sorry list does not show
 * (`admit`, `stop`, `sorryAx` in any spelling, a search tactic that admits what it cannot prove). Spliced
 * into a declaration with other sorries left, the re-check's verdict is `sorry` anyway, so only the hole
 * rule refuses them (test/editor/spliceRule.test.ts, for goal mode, Accept and Prove All Sorries).
 */
export const holeAttacks: { id: string; tactics: string }[] = [
  { id: 'admit', tactics: 'admit' },
  { id: 'first | … | admit', tactics: 'first | exact a_0 | admit' },
  { id: 'sorry behind a name mismatch', tactics: 'first | exact a_0 | sorry' },
  { id: 'stop', tactics: 'stop\n  exact h' },
  { id: '_root_.sorryAx behind a name mismatch (audit)', tactics: 'first | exact a_0 | exact _root_.sorryAx _ false' },
  { id: '«sorryAx»', tactics: 'exact «sorryAx» _ false' },
  { id: '_root_.«sorryAx»', tactics: 'exact _root_.«sorryAx» _ false' },
  { id: '@sorryAx with universe', tactics: 'exact @sorryAx.{0} _ false' },
  { id: 'apply? behind a name mismatch', tactics: 'first | exact a_0 | apply?' },
  { id: 'exact?', tactics: 'exact?' },
  { id: 'set_option warn.sorry false in', tactics: 'set_option warn.sorry false in\n  first | exact a_0 | exact h' },
];
