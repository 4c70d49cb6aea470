// One line of `kimina format-check`: `{"statement", "response"}` or `{"statement", "messages"}` in,
// `{"ok", "error", "proof"}` out. `ok`/`error` are the format reward; `proof` is the extracted code
// (independent of the format, as in the recipe) or null. Bad input gets an `error` naming the problem.
import type { ChatMessage } from '../protocol';
import { checkAnswer, checkConversation } from './format';
import { extractProof } from './extract';

export interface CheckLineResult {
  ok: boolean;
  error: string;
  proof: string | null;
}

const ROLES = new Set(['system', 'user', 'assistant']);

function invalid(problem: string): CheckLineResult {
  return { ok: false, error: `invalid input: ${problem}`, proof: null };
}

function parseMessages(raw: unknown): ChatMessage[] | string {
  if (!Array.isArray(raw)) return '"messages" must be an array';
  for (const [i, m] of raw.entries()) {
    if (typeof m !== 'object' || m === null) return `messages[${i}] must be an object`;
    const { role, content } = m as Record<string, unknown>;
    if (typeof role !== 'string' || !ROLES.has(role)) return `messages[${i}].role must be system, user or assistant`;
    if (typeof content !== 'string') return `messages[${i}].content must be a string`;
  }
  const messages = raw as ChatMessage[];
  if (!messages.some((m) => m.role === 'assistant')) return '"messages" has no assistant message';
  return messages;
}

export function checkLine(line: string): CheckLineResult {
  if (line.trim() === '') return invalid('empty line');
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (err) {
    return invalid(`not JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return invalid('expected a JSON object');
  const { statement, response, messages } = value as Record<string, unknown>;
  if (typeof statement !== 'string') return invalid('"statement" must be a string');
  if ((response === undefined) === (messages === undefined))
    return invalid('give exactly one of "response" or "messages"');
  if (response !== undefined) {
    if (typeof response !== 'string') return invalid('"response" must be a string');
    const format = checkAnswer(response, statement);
    const proof = extractProof(response, statement);
    return { ok: format.ok, error: format.error, proof: proof.ok ? proof.code : null };
  }
  const parsed = parseMessages(messages);
  if (typeof parsed === 'string') return invalid(parsed);
  const format = checkConversation(parsed, statement);
  const last = parsed.filter((m) => m.role === 'assistant').at(-1) as ChatMessage;
  const proof = extractProof(last.content, statement);
  return { ok: format.ok, error: format.error, proof: proof.ok ? proof.code : null };
}
