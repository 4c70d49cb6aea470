// Proving in a file shaped as current projects write them (copyright header, `module`, `public import`s of the
// project's own modules, `@[expose] public section`, a namespace, the file's own definitions and notation):
// the model is shown what the statement needs within the budget, its answer is read for the target's proof
// whatever header or context it repeats, and Lean checks that proof after the real prefix of the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { prove } from '../../backend/prover/prove';
import { extractProof } from '../../backend/prover/extract';
import { checkAnswer } from '../../backend/prover/format';
import { STATEMENT_TOKEN_BUDGET, estimateTokens, shownStatement } from '../../backend/prover/statementContext';
import { findDeclarations, formalStatementOf, selectDeclaration } from '../../backend/lean/declarations';
import { ScriptedEngine, StandInVerifier, valid } from './doubles';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const PREFIX = `/-
Copyright (c) 2026 Jane Doe. All rights reserved.
Released under Apache 2.0 license as described in the file LICENSE.
Authors: Jane Doe
-/
module

public import Mathlib.Algebra.Group.Defs
public import MyProject.Basic

/-!
# Doubling

Facts about doubling a natural number.
-/

@[expose] public section

namespace MyProject

/-- Twice a number. -/
def double (n : Nat) : Nat := n + n

def unrelated (n : Nat) : Nat := n * 7 + 3
`;
const TARGET = 'theorem double_eq (x : Nat) : double x = 2 * x := by';
const FILE = `${PREFIX}
${TARGET}
  sorry

end MyProject
`;

/** A well-formed answer (kimina-format.md §2) whose final block is `final`; tactics sketch its lines. */
function answer(final: string): string {
  const lines = final.split('\n').filter((l) => l.trim() !== '');
  return `<think>
Unfold double and let omega finish.

\`\`\`tactics
${lines.slice(0, Math.ceil(lines.length / 2)).join('\n')}
\`\`\`

Then the rest:

\`\`\`tactics
${lines.slice(Math.ceil(lines.length / 2)).join('\n')}
\`\`\`
</think>
Unfold and compute.

\`\`\`lean4
${final}
\`\`\``;
}

const PROOF = '  unfold double\n  omega';
const withImportMathlib = answer(`import Mathlib\n\n${TARGET}\n${PROOF}`);

test('an answer writing `import Mathlib` for a module file: format ok, checked after the real prefix, proved', async () => {
  const verifier = new StandInVerifier(() => ({ verdict: valid() }));
  const engine = new ScriptedEngine(() => withImportMathlib);
  const result = await prove({ code: FILE, samples: 1, fixTurns: 0 }, { engine, verifier });
  assert.equal(result.status, 'proved');
  const [attempt] = result.attempts;
  assert.deepEqual([attempt.format.ok, attempt.format.error], [true, 'NONE']);
  // Lean gets the user's own prefix (copyright, module, public imports, public section, namespace), never the model's.
  const checked = verifier.calls[0].code;
  assert.ok(checked.startsWith(PREFIX.trimEnd().split('\n\n/-- Twice')[0]), checked);
  assert.ok(!checked.includes('import Mathlib\n'), 'the model header is not checked');
  assert.ok(checked.endsWith(`${TARGET}\n${PROOF}`));
  assert.equal(result.tactics, `\n${PROOF}`);
});

test('an answer restating the target inside its own namespace and line breaks is read by the target name', () => {
  const statement = formalStatementOf(FILE, selectDeclaration(FILE, { name: 'double_eq' })).text;
  const restated = answer(
    `import Mathlib\n\nnamespace MyProject\n\ntheorem double_eq (x : Nat) :\n    double x = 2 * x := by\n${PROOF}\n\nend MyProject`,
  );
  const r = extractProof(restated, statement);
  assert.ok(r.ok, 'the proof is found by the name');
  // the proof stops at its declaration: the answer's `end MyProject` is not part of it
  assert.equal(r.proof, `\n${PROOF}`);
  assert.ok(r.code.startsWith('/-\nCopyright'));
  // a declaration of another name holds no proof of the target
  const other = answer(`import Mathlib\n\ntheorem double_eq' (x : Nat) :\n    double x = 2 * x := by\n${PROOF}`);
  assert.deepEqual(extractProof(other, statement), { ok: false, reason: 'No proof found in the output.' });
  // check 8 still asks for the target's statement: a weakened restatement fails the format
  const weakened = answer(`import Mathlib\n\ntheorem double_eq (x : Nat) : double x = double x := by\n  rfl`);
  assert.equal(checkAnswer(weakened, statement).error, 'LEAN4_CODE_NOT_START_WITH_STATEMENT');
  assert.equal(checkAnswer(withImportMathlib, statement).error, 'NONE');
});

test('the model is shown the header, the scope in force and the definitions the statement mentions', async () => {
  const engine = new ScriptedEngine(() => withImportMathlib);
  const verifier = new StandInVerifier(() => ({ verdict: valid() }));
  // 300 unrelated definitions make the prefix far larger than the budget.
  const filler = Array.from({ length: 300 }, (_, k) => `def filler${k} (n : Nat) : Nat := n + ${k} * n * n`).join(
    '\n\n',
  );
  const big = FILE.replace('def unrelated', `${filler}\n\ndef unrelated`);
  const decl = selectDeclaration(big, { name: 'double_eq' });
  assert.ok(estimateTokens(formalStatementOf(big, decl).text) > STATEMENT_TOKEN_BUDGET, 'the whole prefix is over');
  await prove({ code: big, samples: 1, fixTurns: 0 }, { engine, verifier });
  const user = engine.calls[0].conversations[0][1].content;
  const shown = user.slice(user.indexOf('```lean4\n') + 9, user.lastIndexOf('\n```'));
  assert.equal(
    shown,
    [
      'module\npublic import Mathlib.Algebra.Group.Defs\npublic import MyProject.Basic',
      '@[expose] public section',
      'namespace MyProject\n\ndef double (n : Nat) : Nat := n + n',
      TARGET,
    ].join('\n\n'),
  );
  assert.ok(estimateTokens(shown) <= STATEMENT_TOKEN_BUDGET);
  // …and Lean still checks after the whole real prefix
  assert.ok(verifier.calls[0].code.includes('def filler299'));
});

test("a file's own notation that the statement uses is shown; a closed section's commands are not", () => {
  const file = `import Mathlib

section Helpers
open Real
def unused := 1
end Helpers

namespace Order
variable {α : Type} [LE α]

def Below (a b : α) : Prop := a ≤ b ∧ a ≤ b

infix:50 " ≼ " => Below

def other := 2

theorem below_refl (a : α) : a ≼ a := by
  sorry
end Order
`;
  const decl = findDeclarations(file).find((d) => d.name === 'below_refl')!;
  const shown = shownStatement(file, decl, { budget: 100 });
  assert.equal(shown.whole, false);
  assert.equal(
    shown.text,
    [
      'import Mathlib',
      'namespace Order',
      'variable {α : Type} [LE α]',
      'def Below (a b : α) : Prop := a ≤ b ∧ a ≤ b',
      'infix:50 " ≼ " => Below',
      'theorem below_refl (a : α) : a ≼ a := by',
    ].join('\n\n'),
  );
  assert.deepEqual(shown.shown, ['Below']);
});

test("a small file's statement is the file's own prefix, byte for byte (the recipe's miniF2F statements)", () => {
  const mini =
    'import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real\n\ntheorem t (x : ℝ) (h : x = 1) : x + 1 = 2 := by\n  sorry\n';
  const decl = selectDeclaration(mini);
  const shown = shownStatement(mini, decl);
  assert.equal(shown.whole, true);
  assert.equal(shown.text, formalStatementOf(mini, decl).text);
  // a module file under the budget is shown whole as well (copyright and all: it is the user's text)
  const whole = shownStatement(FILE, selectDeclaration(FILE, { name: 'double_eq' }));
  assert.equal(whole.whole, true);
});

test('on the vendored real-file corpus every target is shown within the budget', () => {
  const root = join(__dirname, '..', 'fixtures', 'real-lean');
  const files = (readdirSync(root, { recursive: true }) as string[]).filter((f) => f.endsWith('.lean'));
  assert.ok(files.length >= 30);
  let targets = 0;
  for (const f of files) {
    const src = readFileSync(join(root, f), 'utf8');
    for (const d of findDeclarations(src).filter((x) => ['theorem', 'lemma', 'example', 'custom'].includes(x.kind))) {
      const shown = shownStatement(src, d);
      assert.ok(shown.tokens <= STATEMENT_TOKEN_BUDGET, `${f}: ${d.name} is shown in ${shown.tokens} tokens`);
      assert.ok(shown.text.endsWith(d.statement.trim()), `${f}: ${d.name}: the shown statement ends with the target`);
      targets++;
    }
  }
  assert.ok(targets > 500);
});
