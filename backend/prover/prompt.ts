// The prompt of the Kimina-Prover-RL training recipe (`prepare_data.py`, kimina-format.md §1.1), byte for byte.
import type { ChatMessage } from '../protocol';

export const SYSTEM_PROMPT = 'You are an expert in mathematics and proving theorems in Lean 4.';

/** The user message: "problems" plural and "Statement" capitalised are part of the trained template. */
export function userPrompt(formalStatement: string, informal: string): string {
  return (
    'Think about and solve the following problems step by step in Lean 4.\n\n' +
    `# Problem:\n${informal}\n\n` +
    `# Formal Statement:\n\`\`\`lean4\n${formalStatement}\n\`\`\`\n`
  );
}

/** `[system, user]`, the exact message list the recipe renders with the model's chat template. */
export function buildPrompt(formalStatement: string, informal = ''): ChatMessage[] {
  return [
    { role: 'system', content: SYSTEM_PROMPT },
    { role: 'user', content: userPrompt(formalStatement, informal) },
  ];
}

/** A doc comment body as informal text: the comment's own text, trimmed (`/--` and `-/` already removed). */
export function informalFromDocComment(doc: string | null | undefined): string {
  return (doc ?? '').trim();
}
