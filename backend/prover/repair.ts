// Repairing a user's broken proof with the recipe's error-fix turn (kimina-format.md §6), seeded with the user's
// proof instead of a model answer: [system, user(the prompt with the statement), assistant(the user's proof in
// Kimina's answer format), user(Lean's messages in the recipe's feedback form)]. Every round is a fresh batch of
// samples of that one fix turn: the model was trained on one fix turn, so no deeper turn follows
// (docs/prover.md, "Repairing a proof").
import type { Attempt, ChatMessage, ReplMessage, RepairInfo, Verdict } from '../protocol';
import type { CommandResponse } from '../protocol';
import { splitHeader } from '../lean/header';
import { buildFeedback, MAX_FEEDBACK_ERRORS } from './feedback';
import { codePoints, MAX_FEEDBACK_CHARS, MAX_PROMPT_TOKENS } from './fixTurn';
import { checkAnswer } from './format';
import { normalizeStatement } from './extract';
import type { ProveContext } from './context';

/**
 * Lean's deprecation warning when the deprecated constant names its replacement. Current Lean
 * (leanprover/lean4 `src/Lean/Linter/Deprecated.lean`, `checkDeprecated`, at 00e991dd):
 * "`old` has been deprecated: Use `new` instead" (notes and a "Replace the deprecated name" hint may follow);
 * older Lean 4 releases wrote "`old` has been deprecated, use `new` instead".
 */
const DEPRECATED = /^`([^`]+)` has been deprecated[:,] [Uu]se `([^`]+)` instead/;

/** The rename a deprecation warning names, or null when the message is not one (or names no replacement). */
export function renameOf(message: ReplMessage): { from: string; to: string } | null {
  if (message.severity !== 'warning') return null;
  const m = DEPRECATED.exec(message.data);
  return m ? { from: m[1], to: m[2] } : null;
}

/** The messages a repair's feedback carries, in order: Lean's errors (at most 3), then the deprecation warnings naming a replacement (at most 3). */
function repairMessages(verdict: Verdict): ReplMessage[] {
  const errors = verdict.messages.filter((m) => m.severity === 'error').slice(0, MAX_FEEDBACK_ERRORS);
  const renames = verdict.messages.filter((m) => renameOf(m) !== null).slice(0, MAX_FEEDBACK_ERRORS);
  return [...errors, ...renames];
}

/**
 * The user's proof as an assistant turn in Kimina's answer format, so that the recipe's format check (which walks
 * every assistant turn) passes on it: a think block holding the proof's lines as two `tactics` blocks, then the
 * proof as the final `lean4` block. The chat template drops the think block of an earlier assistant turn, so the
 * model sees the final block only, as it saw its own first answer in training.
 */
export function userAnswer(code: string): string {
  const lines = code.split('\n').filter((l) => l.trim() !== '' && !l.includes('```'));
  const half = Math.max(1, Math.ceil(lines.length / 2));
  const first = lines.slice(0, half);
  const second = lines.length > half ? lines.slice(half) : first;
  return (
    '<think>\nThe proof as it stands in the file:\n\n' +
    `\`\`\`tactics\n${first.join('\n')}\n\`\`\`\n\n` +
    `\`\`\`tactics\n${second.join('\n')}\n\`\`\`\n` +
    '</think>\n' +
    `\`\`\`lean4\n${code}\n\`\`\``
  );
}

export type RepairSeed =
  | { ok: true; conversation: ChatMessage[]; info: RepairInfo; attempt: Attempt }
  | { ok: false; info: RepairInfo; attempt: Attempt | null };

/**
 * Checks the user's proof (`body`: the text after the statement's `:= by`) and builds the fix turn from Lean's
 * messages. The feedback is shortened, one message at a time from the end, until it fits the recipe's limits
 * (3000 characters of feedback, 8192 tokens of prompt); when even one message does not fit, nothing is sent.
 */
export async function seedRepair(ctx: ProveContext, prompt: ChatMessage[], body: string): Promise<RepairSeed> {
  const code = normalizeStatement(ctx.statement) + body;
  let outcome: { verdict: Verdict; response?: CommandResponse };
  const started = Date.now();
  try {
    outcome = await ctx.deps.verifier.check(code, {
      timeout: ctx.deps.options?.verifyTimeout,
      infotree: ctx.deps.options?.infotree === undefined ? 'original' : ctx.deps.options.infotree,
      theorems: ctx.theoremName ? [ctx.theoremName] : undefined,
      signal: ctx.signal,
    });
  } catch (err) {
    const verdict: Verdict = {
      status: 'server_error',
      reason: `the Lean verifier failed: ${(err as Error).message}`,
      messages: [],
      sorries: [],
      time: 0,
    };
    outcome = { verdict };
  }
  const verdict = outcome.verdict;
  const response = userAnswer(code);
  const format = checkAnswer(response, ctx.statement);
  const attempt: Attempt = {
    user: true,
    sample: 0,
    turn: 1,
    response,
    think: '',
    code,
    format: { ok: format.ok, error: format.error, message: format.message },
    verdict,
    timings: { generateMs: 0, verifyMs: Date.now() - started },
  };
  const info = (extra: Partial<RepairInfo>): RepairInfo => ({
    before: verdict,
    feedback: null,
    conversation: null,
    messagesShown: 0,
    rounds: 0,
    ...extra,
  });
  const skip = (why: string): RepairSeed => {
    attempt.fixSkipped = verdict.status === 'valid' ? 'valid' : undefined;
    return { ok: false, info: info({ skipped: why }), attempt };
  };
  if (verdict.status === 'valid') return skip('Lean accepts the proof as it is: nothing to repair.');
  if (['server_error', 'repl_error', 'rejected'].includes(verdict.status))
    return skip(`Lean could not judge the proof: ${verdict.reason}`);
  const messages = repairMessages(verdict);
  if (!messages.some((m) => m.severity === 'error') && verdict.status !== 'timeout_error')
    return skip(
      verdict.status === 'sorry'
        ? 'The proof has no Lean error, only a sorry: prove it instead of repairing it.'
        : `Lean reports no error in the proof (${verdict.reason}).`,
    );
  const infotreeLineOffset = splitHeader(code).headerLines;
  const maxChars = ctx.deps.options?.maxFeedbackChars ?? MAX_FEEDBACK_CHARS;
  const maxTokens = ctx.deps.options?.maxPromptTokens ?? MAX_PROMPT_TOKENS;
  let tooLong = '';
  // A timeout has no messages: the recipe's `# System Error:` form (n = 0).
  for (let n = messages.length; n >= (messages.length === 0 ? 0 : 1); n--) {
    const feedback = buildFeedback(code, verdict, outcome.response, {
      infotreeLineOffset,
      messages: messages.slice(0, n),
    });
    const chars = codePoints(feedback);
    if (chars > maxChars) {
      tooLong = `${chars} characters of feedback (the recipe drops feedback over ${maxChars})`;
      continue;
    }
    const conversation: ChatMessage[] = [
      ...prompt,
      { role: 'assistant', content: response },
      { role: 'user', content: feedback },
    ];
    const tokens = await ctx.deps.engine.countPromptTokens(conversation);
    if (tokens > maxTokens) {
      tooLong = `a prompt of ${tokens} tokens (the model was trained on prompts of at most ${maxTokens})`;
      continue;
    }
    attempt.feedback = feedback;
    return { ok: true, conversation, attempt, info: info({ feedback, conversation, messagesShown: n }) };
  }
  attempt.feedback = null;
  attempt.fixSkipped = tooLong.includes('tokens') ? 'max_prompt_token_len_exceeded' : 'feedback_too_long';
  return skip(`The fix turn does not fit, even with one of Lean's messages: ${tooLong}.`);
}
