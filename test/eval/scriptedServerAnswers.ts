// TEST DOUBLE answers for the stand-in OpenAI server: Kimina-format text built from the prompt's
// statement, scripted per problem (scriptedKind) so an evaluation has known results. The stand-in
// REPL rejects identifiers starting with bogus_ and accepts the rest.
import { scriptedKind } from './helpers';

const VALID = '  nlinarith [sq_nonneg (2 : ℝ)]';
const BOGUS = '  exact bogus_lemma';

function answerWith(statement: string, proof: string): string {
  // Two tactics blocks that together repeat the final code, each shorter than it (format checks 6 and 7b).
  const lines = [...statement.split('\n'), proof];
  const half = Math.ceil(lines.length / 2);
  return [
    '<think>',
    'Restate the setting first.',
    '',
    '```tactics',
    ...lines.slice(0, half),
    '```',
    '',
    'Then the goal, closed by one tactic:',
    '',
    '```tactics',
    ...lines.slice(half),
    '```',
    '</think>',
    'One tactic finishes it.',
    '',
    '```lean4',
    statement,
    proof,
    '```',
  ].join('\n');
}

/** The statement inside the first user message's ```lean4 block (the problem prompt). */
export function statementOf(messages: Array<{ role: string; content: string }>): string {
  const user = messages.find((m) => m.role === 'user');
  const m = user ? /```lean4\n([\s\S]*?)\n```/.exec(user.content) : null;
  if (!m) throw new Error('stand-in answers: no statement in the prompt');
  return m[1];
}

export function theoremOf(statement: string): string {
  return /theorem\s+(\S+)/.exec(statement)?.[1] ?? '?';
}

/**
 * easy: valid first answer; fixable: bogus first answer, valid fix; half: valid when the request's
 * seed is even (so it varies by sample), else bogus twice; hopeless: prose without a lean4 block.
 */
export function scriptedAnswer(
  messages: Array<{ role: string; content: string }>,
  _sample: number,
  seed: number | undefined,
): string {
  const statement = statementOf(messages);
  const kind = scriptedKind(theoremOf(statement));
  const fixTurn = messages.filter((m) => m.role === 'user').length > 1;
  if (kind === 'hopeless') return '<think>\nNo idea.\n</think>\nI cannot prove this.';
  if (kind === 'easy') return answerWith(statement, VALID);
  if (kind === 'fixable') return answerWith(statement, fixTurn ? VALID : BOGUS);
  return answerWith(statement, seed !== undefined && seed % 2 === 0 ? VALID : BOGUS);
}
