// Building the error-fix conversation with the recipe's filters (kimina-format.md §6.1, §6.3), in order.
import type { ChatMessage } from '../protocol';
import type { Engine } from '../model/engine';

export const MAX_FEEDBACK_CHARS = 3000;
export const MAX_PROMPT_TOKENS = 8192;

type FixSkipReason = 'valid' | 'filtered' | 'feedback_too_long' | 'exceed_max_turn' | 'max_prompt_token_len_exceeded';

export type FixPlan = { ok: true; conversation: ChatMessage[] } | { ok: false; reason: FixSkipReason };

export interface FixInput {
  /** The conversation the answer replied to: [system, user] on turn 1, longer on later turns. */
  conversation: ChatMessage[];
  /** The full assistant text of the failed answer (think block included: the chat template strips it). */
  response: string;
  /** null when Lean accepted the proof; 'filtered' when nothing could be extracted. */
  feedback: string | null | 'filtered';
  /** Fix turns allowed after the first answer. */
  maxFixTurns: number;
  engine: Pick<Engine, 'countPromptTokens'>;
  maxFeedbackChars?: number;
  maxPromptTokens?: number;
}

/** Python's len() of a str: Unicode code points. */
export function codePoints(s: string): number {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/** Number of user messages = the turn the answer belongs to. */
function turnOf(conversation: ChatMessage[]): number {
  return conversation.filter((m) => m.role === 'user').length;
}

export async function planFixTurn(input: FixInput): Promise<FixPlan> {
  if (input.feedback === null) return { ok: false, reason: 'valid' };
  if (input.feedback === 'filtered') return { ok: false, reason: 'filtered' };
  // Characters as Python's len() counts them (code points): a Mathlib letter like 𝕜 is one, not two UTF-16 units.
  if (codePoints(input.feedback) > (input.maxFeedbackChars ?? MAX_FEEDBACK_CHARS))
    return { ok: false, reason: 'feedback_too_long' };
  if (turnOf(input.conversation) > input.maxFixTurns) return { ok: false, reason: 'exceed_max_turn' };
  const conversation: ChatMessage[] = [
    ...input.conversation,
    { role: 'assistant', content: input.response },
    { role: 'user', content: input.feedback },
  ];
  const tokens = await input.engine.countPromptTokens(conversation);
  if (tokens > (input.maxPromptTokens ?? MAX_PROMPT_TOKENS))
    return { ok: false, reason: 'max_prompt_token_len_exceeded' };
  return { ok: true, conversation };
}
