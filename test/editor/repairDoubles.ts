import { userAnswer } from '../../backend/prover/repair';

export const BROKEN_FILE = `import Mathlib

theorem ratio_one (a b c : ℝ) (hc : 0 < c) (h : a ≤ b * c) : a / c ≤ b := by
  rw [div_le_iff hc]
  exact h

theorem ratio_two (a b c : ℝ) (hc : 0 < c) (h : a ≤ b * c) (hb : 0 ≤ b) : a / c ≤ b + b := by
  rw [div_le_iff hc]
  nlinarith

theorem ratio_three (a c : ℝ) (hc : 0 < c) (h : a ≤ c) : a / c ≤ 1 := by
  rw [div_le_iff hc]
  linarith
`;

function renamesIn(feedback: string): [string, string][] {
  return [...feedback.matchAll(/`([^`]+)` has been deprecated[:,] [Uu]se `([^`]+)` instead/g)].map((m) => [m[1], m[2]]);
}

export function repairAnswer(messages: { role: string; content: string }[]): string {
  const lastUser = [...messages].reverse().find((m) => m.role === 'user')?.content ?? '';
  const assistant = [...messages].reverse().find((m) => m.role === 'assistant')?.content ?? '';
  const blocks = [...assistant.matchAll(/```lean4\n([\s\S]*?)\n```/g)];
  let code = blocks.at(-1)?.[1] ?? '';
  for (const [from, to] of renamesIn(lastUser))
    code = code.replace(
      new RegExp(`(?<![\\p{L}\\p{N}_.'])${from.replace(/\./g, '\\.')}(?![\\p{L}\\p{N}_'])`, 'gu'),
      to,
    );
  return userAnswer(code);
}
