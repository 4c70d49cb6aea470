// A theorem that uses an earlier lemma of the user's file: the formal statement carries the earlier
// sorry-free declarations, extraction takes the target's proof (not the first theorem's), and the prove
// loop sends them to Lean. Lean here is the stand-in REPL (a test double: it reports `unknown identifier`
// only for `bogus_*` names) behind the real verifier; the model is the scripted engine (a test double).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { findDeclarations, formalStatementOf, selectDeclaration } from '../../backend/lean/declarations';
import { buildVerifier, verifierSettingsOf } from '../../backend/lean/buildVerifier';
import { readSettings } from '../../backend/settings/settings';
import type { CheckOptions, CheckOutcome, LeanVerifier } from '../../backend/lean/types';
import { extractProof, normalizeStatement, signatureOf } from '../../backend/prover/extract';
import { containsStatement } from '../../backend/prover/format';
import { prove } from '../../backend/prover/prove';
import { standInReplCommand } from '../../backend/demo/stand-in-repl';
import { ScriptedEngine } from './doubles';

const EARLIER_THM = 'theorem earlier_thm (n : ℕ) : n + 0 = n := by simp';
const HELPER = 'lemma helper (a b : ℕ) : a + b = b + a := by\n  simp [Nat.add_comm]';
const FILE = `import Mathlib

${EARLIER_THM}

lemma broken (n : ℕ) : n = n := by
  sorry

lemma uses_broken (n : ℕ) : n = n := broken n

example : True := trivial

${HELPER}

/-- Addition on naturals commutes. -/
theorem main (x y : ℕ) : x + y = y + x := by
  sorry
`;
const FORMAL = `import Mathlib\n\n${EARLIER_THM}\n\n${HELPER}\n\ntheorem main (x y : ℕ) : x + y = y + x := by`;

function answer(tactic: string): string {
  return `<think>
The goal is commutativity of addition, which the helper lemma states for any two naturals.

Apply the helper lemma to x and y:

\`\`\`tactics
theorem main (x y : ℕ) : x + y = y + x := by
  exact ${tactic} x y
\`\`\`

That single step closes the goal, nothing else remains:

\`\`\`tactics
  exact ${tactic} x y
\`\`\`
</think>
Use the helper lemma.

\`\`\`lean4
${FORMAL}
  exact ${tactic} x y
\`\`\``;
}

test('the formal statement holds the earlier sorry-free declarations in file order, before the theorem', () => {
  const f = formalStatementOf(FILE, selectDeclaration(FILE, { name: 'main' }));
  assert.equal(f.text, FORMAL);
  assert.deepEqual(f.leftOut, ['broken', 'uses_broken'], 'the sorry lemma and the one using it are left out');
  assert.equal(f.informal, 'Addition on naturals commutes.');
  // The first theorem of the file has nothing earlier: header and theorem only, as for miniF2F.
  const first = formalStatementOf(FILE, selectDeclaration(FILE, { name: 'earlier_thm' }));
  assert.equal(first.text, `import Mathlib\n\n${EARLIER_THM.replace(' simp', '')}`);
  assert.deepEqual(first.leftOut, []);
});

test("extraction uses the target theorem's signature, not the first theorem's", () => {
  assert.equal(signatureOf(normalizeStatement(FORMAL)), 'main (x y : ℕ) : x + y = y + x');
  const r = extractProof(answer('helper'), FORMAL);
  assert.ok(r.ok);
  assert.equal(r.code, `${FORMAL}\n  exact helper x y`);
  // A model block that only restates the first theorem holds no proof of the target.
  assert.deepEqual(extractProof(`\`\`\`lean4\nimport Mathlib\n\n${EARLIER_THM}\n\`\`\``, FORMAL), {
    ok: false,
    reason: 'No proof found in the output.',
  });
  // Check 8 asks for the target's statement: the earlier declarations are the file's own, checked as they are,
  // so an answer may leave them out; one that restates another conclusion fails.
  const finalBlock = `${FORMAL}\n  exact helper x y`;
  assert.equal(containsStatement(finalBlock, FORMAL), true);
  assert.equal(containsStatement(finalBlock.replace(`${HELPER}\n\n`, ''), FORMAL), true);
  assert.equal(containsStatement(finalBlock.replace('x + y = y + x', 'x + y = x + y'), FORMAL), false);
});

/** Test double wrapper: records what the real verifier is asked, then lets it answer. */
class RecordingVerifier implements LeanVerifier {
  calls: { code: string; options?: CheckOptions }[] = [];
  constructor(private readonly inner: LeanVerifier) {}
  check(code: string, options?: CheckOptions): Promise<CheckOutcome> {
    this.calls.push({ code, options });
    return this.inner.check(code, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}

const built = buildVerifier({
  ...verifierSettingsOf(readSettings()),
  replCommand: standInReplCommand(),
  sandbox: 'none',
  replMemoryMb: 0,
  maxRepls: 1,
  initRepls: {},
});
after(() => built.verifier.close());

test(
  "proved through the loop: Lean gets the helper, audits only the target, the proof is the target's",
  { timeout: 60_000 },
  async () => {
    const verifier = new RecordingVerifier(built.verifier);
    const engine = new ScriptedEngine(() => answer('helper'));
    const result = await prove({ code: FILE, theorem: 'main', samples: 1, fixTurns: 0 }, { engine, verifier });
    assert.equal(result.status, 'proved');
    assert.equal(result.proof, `${FORMAL}\n  exact helper x y`);
    assert.equal(result.tactics, '\n  exact helper x y');
    assert.ok(verifier.calls.length >= 1);
    for (const call of verifier.calls) {
      assert.ok(call.code.includes(HELPER), 'the snippet sent to Lean declares helper');
      assert.ok(!call.code.includes('broken'), 'the sorry lemma is not sent');
      assert.deepEqual(call.options?.theorems, ['main'], 'the axiom audit covers the target only');
    }
    const prompt = engine.calls[0].conversations[0].at(-1)!.content;
    assert.ok(prompt.includes(FORMAL), 'the model sees the declarations it may use');
  },
);

test(
  'the stand-in Lean still fails an unknown name, so the helper check above can fail',
  { timeout: 60_000 },
  async () => {
    const engine = new ScriptedEngine(() => answer('bogus_helper'));
    const result = await prove(
      { code: FILE, theorem: 'main', samples: 1, fixTurns: 0 },
      { engine, verifier: built.verifier },
    );
    assert.equal(result.status, 'not_proved');
    assert.equal(result.attempts[0].verdict?.status, 'lean_error');
  },
);

test(
  'a sorry left in a kept earlier declaration can never pass: the whole snippet is judged',
  { timeout: 60_000 },
  async () => {
    // Lean's view: the verdict covers every declaration of the snippet, not only the audited target.
    const outcome = await built.verifier.check(
      `import Mathlib\n\nlemma helper (a b : ℕ) : a + b = b + a := by\n  sorry\n\ntheorem main (x y : ℕ) : x + y = y + x := by\n  exact helper x y\n`,
      { theorems: ['main'] },
    );
    assert.equal(outcome.verdict.status, 'sorry');
  },
);

test('commands indented after a proof end that declaration: a later statement gets them as the scope commands they are, never as part of a proof', () => {
  const src = [
    'import Mathlib',
    '',
    'theorem a : 2 + 2 = 4 := by',
    '  norm_num',
    '  variable (h : False)',
    '  include h',
    '',
    'theorem b : False := by',
    '  sorry',
  ].join('\n');
  const decls = findDeclarations(src);
  const a = decls.find((d) => d.name === 'a')!;
  assert.equal(src.slice(a.start.offset, a.end.offset), 'theorem a : 2 + 2 = 4 := by\n  norm_num');
  const b = decls.find((d) => d.name === 'b')!;
  const text = formalStatementOf(src, b).text;
  assert.equal(
    text,
    'import Mathlib\n\ntheorem a : 2 + 2 = 4 := by\n  norm_num\n\nvariable (h : False)\n\ninclude h\n\ntheorem b : False := by',
  );
});
