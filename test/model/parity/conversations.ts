// Conversations the parity suite renders with the Qwen3 chat template in transformers and in our
// engine: Kimina first turns and fix turns whose earlier answers have think blocks, text after
// </think> that starts with newlines and spaces, indented Lean, trailing newlines, Unicode.
const SYSTEM = 'You are an expert in mathematics and proving theorems in Lean 4.';
const USER =
  'Think about and solve the following problems step by step in Lean 4.\n\n# Problem:\nSolve 2x + 3 = 11.\n\n' +
  '# Formal Statement:\n```lean4\nimport Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n```\n';
const ERROR =
  '# Error 1:\nError message: \nlinarith failed to find a contradiction\n  x : ℝ\n  h₀ : 2 * x + 3 = 11\n⊢ False\n';
const answer = (think: string, after: string) => `<think>${think}</think>${after}`;

export interface ParityConversation {
  messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>;
  add_generation_prompt: boolean;
}

export const parityConversations: ParityConversation[] = [
  {
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
    ],
    add_generation_prompt: true,
  },
  {
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
      {
        role: 'assistant',
        content: answer(
          '\nFirst, 2x = 8.\n\n```tactics\n  linarith\n```\n',
          '\n   Indented summary.\n\n```lean4\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  linarith\n```\n',
        ),
      },
      { role: 'user', content: ERROR },
    ],
    add_generation_prompt: true,
  },
  {
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
      {
        role: 'assistant',
        content: answer(
          '\n\n  spaces before\n',
          '\n\n\t  tab and spaces\n```lean4\n  nlinarith [sq_nonneg x]\n```\n\n',
        ),
      },
      { role: 'user', content: ERROR },
      { role: 'assistant', content: answer('  no newline first\n\n', '  two spaces, no newline\n') },
      { role: 'user', content: '\n  leading whitespace in the user turn\n' },
    ],
    add_generation_prompt: true,
  },
  {
    messages: [
      { role: 'user', content: USER },
      { role: 'assistant', content: answer('\n  closing turn keeps its reasoning\n\n', '\n \n  after\n') },
    ],
    add_generation_prompt: false,
  },
  {
    messages: [
      { role: 'user', content: USER },
      { role: 'assistant', content: '\n\n   no think block at all\n' },
      { role: 'user', content: ERROR },
    ],
    add_generation_prompt: true,
  },
  {
    messages: [
      { role: 'system', content: SYSTEM },
      { role: 'user', content: USER },
      { role: 'assistant', content: answer('\n\u3000ideographic space\n', '\n\u00a0\u2003  unicode spaces ≤ ∀ ∃\n') },
      { role: 'user', content: ERROR },
    ],
    add_generation_prompt: true,
  },
];
