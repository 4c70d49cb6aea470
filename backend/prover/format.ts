// The recipe's format reward (`FormatReward.check_format_error` with its default thresholds), as a pure
// function: the checks run in the recipe's order and the first failure names the error. See
// kimina-format.md §4; regexes keep Python's semantics (pyText.ts).
import type { ChatMessage, FormatErrorName, FormatResult } from '../protocol';
import { PY_SPACE, pyStrip } from '../model/pythonStrings';
import {
  PY_WORD,
  findAllGroups,
  pyCount,
  pySplitlines,
  removeComments,
  removeTrailingComments,
  strictBlocks,
} from './pyText';
import { STOPWORDS } from './stopwords';
import { findDeclarations } from '../lean/declarations';
import { isRecipeStatement } from './extract';

/** The recipe's texts for each error (the `FormatError` enum values). */
export const FORMAT_ERROR_TEXT: Record<FormatErrorName, string> = {
  NONE: 'No error.',
  NO_VALID_LEAN4_CODE_BLOCK: 'Could not find a valid lean4 code block.',
  NO_VALID_THINK_BLOCK: 'Could not find a valid think block.',
  INVALID_THINK_BLOCK_COUNT: 'There must be exactly one think block.',
  INVALID_LEAN4_CODE_BLOCK_COUNT: 'There must be exactly one lean4 code block.',
  GENERATION_REPEATS: 'Generation repeats.',
  INSUFFICIENT_TACTICS_BLOCKS: 'There must be more than one tactics block.',
  TACTIC_CODE_TOO_MANY_LINES: 'Tactic code contains too many lines.',
  TACTIC_BLOCK_FORMATTING_ERROR: 'Tactic block formatting error.',
  TACTICS_LEAN4_NOT_MATCH: 'Tactics and Lean4 code do not match.',
  LEAN4_CODE_NOT_START_WITH_STATEMENT: 'Lean 4 code does not start with the formal statement.',
};

/** The recipe's defaults as `reward.py` builds `FormatReward()`. */
const FORMAT_THRESHOLDS = {
  tacticsBlocks: 2,
  totalTacticBlockLines: 0.95,
  tacticsLean4Match: 0.7,
  repeatedLines: 6,
  /** Content tokens a thinking line needs before it is counted for repetition. */
  significantLineTokens: 10,
} as const;

export interface FormatCheck extends FormatResult {
  /** The final `lean4` block, trimmed and without trailing comment lines, when every check passed. */
  finalCode: string | null;
}

const firstLean4 = new RegExp('```lean4[' + PY_SPACE + ']*([\\s\\S]+?)[' + PY_SPACE + ']*```', 'u');
const hasWord = new RegExp('[' + PY_WORD + ']', 'u');
const words = new RegExp('[' + PY_WORD + ']+', 'gu');

function fail(error: FormatErrorName): FormatCheck {
  return { ok: false, error, message: FORMAT_ERROR_TEXT[error], finalCode: null };
}

/** Check 4's input: the lower-cased thinking lines with at least 10 non-stop-word tokens. */
export function significantThinkingLines(thinkBlock: string): string[] {
  const clean = thinkBlock.replace(/```tactics\n[\s\S]*?\n```/g, '');
  const lines: string[] = [];
  for (const raw of pySplitlines(clean)) {
    const line = pyStrip(raw);
    if (line === '' || !hasWord.test(line)) continue;
    const lower = line.toLowerCase();
    const content = (lower.match(words) ?? []).filter((t) => !STOPWORDS.has(t));
    if (content.length >= FORMAT_THRESHOLDS.significantLineTokens) lines.push(lower);
  }
  return lines;
}

/** Check 7a: the line-based `tactics` fence parser over the whole response; null on a formatting error. */
export function parseTacticBlocks(text: string): string[] | null {
  const lines = text.split('\n');
  const blocks: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (pyStrip(lines[i]) !== '```tactics') continue;
    let close = -1;
    for (let j = i + 1; j < lines.length; j++)
      if (pyStrip(lines[j]) === '```') {
        close = j;
        break;
      }
    if (close < 0) return null;
    blocks.push(lines.slice(i + 1, close).join('\n'));
    i = close;
  }
  return blocks.some((b) => b.includes('```')) ? null : blocks;
}

function codeLineSet(code: string): Set<string> {
  return new Set(
    removeComments(code, true)
      .split('\n')
      .map((l) => pyStrip(l))
      .filter((l) => l !== ''),
  );
}

/** Check 7b's score: distinct final-code lines also found in the tactics blocks, over distinct final-code lines. */
export function intersectionOverFinal(tacticBlocks: string[], finalCode: string): number {
  const tactics = new Set(tacticBlocks.flatMap((b) => [...codeLineSet(b)]));
  const final = codeLineSet(finalCode);
  if (final.size === 0) return 0;
  let shared = 0;
  for (const line of final) if (tactics.has(line)) shared++;
  return shared / final.size;
}

/** Checks 1–7 on one assistant answer. */
function checkThinking(text: string): FormatErrorName {
  const first = firstLean4.exec(text);
  if (!first) return 'NO_VALID_LEAN4_CODE_BLOCK';
  if (pyStrip(text.slice(first.index + first[0].length)) !== '') return 'NO_VALID_LEAN4_CODE_BLOCK';

  const thinkAt = text.indexOf('<think>');
  if (thinkAt < 0) return 'NO_VALID_THINK_BLOCK';
  const afterThink = text.slice(thinkAt);
  const thinkBlocks = findAllGroups(/<think>([\s\S]*?)<\/think>/g, afterThink);
  if (thinkBlocks.length !== 1) return 'INVALID_THINK_BLOCK_COUNT';
  if (pyCount(afterThink, '<think>') !== 1 || pyCount(afterThink, '</think>') !== 1) return 'INVALID_THINK_BLOCK_COUNT';

  const lean4Blocks = strictBlocks(afterThink, 'lean4');
  if (lean4Blocks.length !== 1) return 'INVALID_LEAN4_CODE_BLOCK_COUNT';

  const counts = new Map<string, number>();
  for (const line of significantThinkingLines(thinkBlocks[0])) counts.set(line, (counts.get(line) ?? 0) + 1);
  if ([...counts.values()].some((n) => n >= FORMAT_THRESHOLDS.repeatedLines)) return 'GENERATION_REPEATS';

  const tacticBlocks = strictBlocks(afterThink, 'tactics');
  if (tacticBlocks.length < FORMAT_THRESHOLDS.tacticsBlocks) return 'INSUFFICIENT_TACTICS_BLOCKS';
  const finalLines = pyStrip(lean4Blocks[0]).split('\n').length;
  const maxLines = Math.max(5, Math.floor(finalLines * FORMAT_THRESHOLDS.totalTacticBlockLines));
  // Code lines plus comment lines of a block always add up to its raw line count in the recipe.
  if (tacticBlocks.some((b) => b.split('\n').length > maxLines)) return 'TACTIC_CODE_TOO_MANY_LINES';

  const parsed = parseTacticBlocks(text);
  if (parsed === null) return 'TACTIC_BLOCK_FORMATTING_ERROR';
  const wholeLean4 = strictBlocks(text, 'lean4');
  // The recipe asserts exactly one here; a second strict block before <think> is the only way to miss it.
  if (wholeLean4.length !== 1) return 'INVALID_LEAN4_CODE_BLOCK_COUNT';
  if (intersectionOverFinal(parsed, pyStrip(wholeLean4[0])) < FORMAT_THRESHOLDS.tacticsLean4Match)
    return 'TACTICS_LEAN4_NOT_MATCH';
  return 'NONE';
}

function normalizeForStatement(s: string): string {
  return pyStrip(
    removeComments(s)
      .replaceAll('sorry', '')
      .replace(new RegExp(`[${PY_SPACE}]+`, 'gu'), ' '),
  );
}

/**
 * What check 8 asks the answer to restate: the recipe's whole statement when it is shaped as the recipe's (one
 * declaration after `import`/`open`/`set_option` lines); for a statement taken from a user's file, only the
 * target declaration from its keyword on. Its header, scopes and earlier declarations are the file's own (the
 * check uses them as they are), so an answer that writes `import Mathlib` or a shorter context is not at fault.
 */
function restatedPart(formalStatement: string): string {
  if (isRecipeStatement(formalStatement)) return formalStatement;
  const target = findDeclarations(formalStatement).at(-1);
  if (!target) return formalStatement;
  return formalStatement.slice(target.head.offset).replace(LEADING_MODIFIERS, '');
}
const LEADING_MODIFIERS =
  /^(?:(?:@\[[^\]]*\]|private|protected|public|noncomputable|scoped|local|meta|partial|unsafe|nonrec)\s+)*/u;

/** Check 8: the final code contains every paragraph of the trusted statement and no `axiom`/`local_instance`. */
export function containsStatement(finalCode: string, formalStatement: string): boolean {
  const paragraphs = removeComments(restatedPart(formalStatement))
    .split('\n\n')
    .map(normalizeForStatement)
    .filter((p) => p !== '' && !p.startsWith('import') && !p.startsWith('set_option') && !p.startsWith('open'));
  const code = normalizeForStatement(finalCode);
  if (code.includes('axiom') || code.includes('local_instance')) return false;
  return paragraphs.every((p) => code.includes(p));
}

/** Every check on one assistant answer against the trusted statement. */
export function checkAnswer(response: string, formalStatement: string): FormatCheck {
  const error = checkThinking(response);
  if (error !== 'NONE') return fail(error);
  const blocks = strictBlocks(response, 'lean4');
  const code = pyStrip(blocks[blocks.length - 1]);
  if (!containsStatement(code, formalStatement)) return fail('LEAN4_CODE_NOT_START_WITH_STATEMENT');
  return { ok: true, error: 'NONE', message: FORMAT_ERROR_TEXT.NONE, finalCode: pyStrip(removeTrailingComments(code)) };
}

/** Multi-turn: every assistant message is checked in order; the first failure wins. */
export function checkConversation(messages: ChatMessage[], formalStatement: string): FormatCheck {
  const answers = messages.filter((m) => m.role === 'assistant');
  if (answers.length === 0) throw new Error('the conversation has no assistant message to check');
  let last: FormatCheck | null = null;
  for (const answer of answers) {
    last = checkAnswer(answer.content, formalStatement);
    if (!last.ok) return last;
  }
  return last as FormatCheck;
}
