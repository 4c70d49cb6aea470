// The worked examples of kimina-format.md §8, verbatim: test data shared by the prover tests and the decode benchmarks.
export const STATEMENT = `import Mathlib

theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry`;

export const WELL_FORMED = `<think>
The hypothesis is linear in x, so subtracting 3 and halving should give the claim.

Start from the statement and isolate 2 * x first:

\`\`\`tactics
theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  have h₁ : 2 * x = 8 := by linarith
\`\`\`

With h₁ available, linear arithmetic closes the goal directly:

\`\`\`tactics
  have h₁ : 2 * x = 8 := by linarith
  linarith
\`\`\`
</think>
Isolate 2x, then finish with linear arithmetic.

\`\`\`lean4
import Mathlib

theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  have h₁ : 2 * x = 8 := by linarith
  linarith
\`\`\``;

export const REPEATED_SENTENCE =
  'Therefore the value of x must be four because two times x equals eight exactly here always.';

/** §8.3: the failing attempt and the exact fix message. */
export const FAILING_CODE = `import Mathlib

theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  have h₁ : 2 * x = 8 := by linarith
  exact h₁`;

export const TYPE_MISMATCH = `type mismatch
  h₁
has type
  2 * x = 8 : Prop
but is expected to have type
  x = 4 : Prop`;

export const FIX_MESSAGE = `# Error 1:
Goals state before error position: 
x : ℝ
h₀ : 2 * x + 3 = 11
h₁ : 2 * x = 8
⊢ x = 4

Error message: 
type mismatch
  h₁
has type
  2 * x = 8 : Prop
but is expected to have type
  x = 4 : Prop

Lean 4 code snippet with error:
\`\`\`lean4
002  | theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
003  |   have h₁ : 2 * x = 8 := by linarith
004 >|   exact h₁
\`\`\`
`;

/**
 * FIX_MESSAGE as the prover writes it by default: the released checkpoints' numbering (kimina-lean-server before
 * PR #56, kimina-format.md §6.4), which puts the marker one line above the error line in this layout.
 */
export const FIX_MESSAGE_RELEASED = FIX_MESSAGE.replace('```lean4\n002', '```lean4\n001  | \n002')
  .replace('003  |   have', '003 >|   have')
  .replace('004 >|   exact', '004  |   exact');

/**
 * A short well-formed Kimina answer for `statement` (a theorem line ending `:= by`): a think block with the two
 * tactics blocks the format reward asks for (each `thinkTactic`), then the final lean4 block proving it by
 * `finalTactic`. Reward and verifier tests and benches build rollouts from it.
 */
export function shortAnswer(statement: string, finalTactic: string, thinkTactic = finalTactic): string {
  return [
    '<think>',
    'Simplify.',
    '```tactics',
    'import Mathlib',
    statement,
    `  ${thinkTactic}`,
    '```',
    '```tactics',
    `  ${thinkTactic}`,
    '```',
    '</think>',
    'Done.',
    '',
    '```lean4',
    'import Mathlib',
    '',
    statement,
    `  ${finalTactic}`,
    '```',
  ].join('\n');
}
