// String helpers with Python 3 semantics, so the format checks and extraction behave exactly like the
// recipe's Python (`str.splitlines`, `re` with `\s`/`\w` on Unicode text, its comment regexes). `str.strip` and the
// whitespace class are model/pythonStrings.ts's (pyStrip, PY_SPACE), the one copy.
import { pyStrip } from '../model/pythonStrings';

/** Python's Unicode `\w`: letters, numbers (str.isalnum) and underscore. */
export const PY_WORD = '\\p{L}\\p{N}_';

/** Python's `str.splitlines()`: every line boundary Python knows, no empty last element after a final break. */
export function pySplitlines(s: string): string[] {
  if (s === '') return [];
  const parts = s.split(/\r\n|[\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]/u);
  if (parts[parts.length - 1] === '') parts.pop();
  return parts;
}

/** Every non-overlapping match's first group (Python `re.findall` with one group). */
export function findAllGroups(re: RegExp, text: string): string[] {
  const g = new RegExp(re.source, re.flags.includes('g') ? re.flags : re.flags + 'g');
  return [...text.matchAll(g)].map((m) => m[1]);
}

/** Count of non-overlapping occurrences (Python `str.count`). */
export function pyCount(text: string, sub: string): number {
  let n = 0;
  for (let i = text.indexOf(sub); i >= 0; i = text.indexOf(sub, i + sub.length)) n++;
  return n;
}

/**
 * The recipe's `remove_comments`: non-greedy `/-` … `-/` (or `--/`), then `--` to the end of the line.
 * Nested comments and `--` inside strings are not understood, on purpose (same as the recipe).
 * With `removeEmptyLines`, runs of blank lines collapse to one (blank = whitespace only).
 */
export function removeComments(code: string, removeEmptyLines = false): string {
  let out = code.replace(/\/-[\s\S]*?(?:--\/|-\/)/g, '').replace(/--[^\n]*/g, '');
  if (removeEmptyLines) {
    const kept: string[] = [];
    let blankRun = 0;
    for (const line of out.split('\n')) {
      if (pyStrip(line) === '') {
        blankRun++;
        if (blankRun < 2) kept.push(line);
      } else {
        blankRun = 0;
        kept.push(line);
      }
    }
    out = kept.join('\n');
  }
  return out;
}

/** The recipe's `remove_trailing_comments`: drops trailing blank lines, then trailing `--` comment lines. */
export function removeTrailingComments(code: string): string {
  const lines = pySplitlines(code);
  while (lines.length > 0 && pyStrip(lines[lines.length - 1]) === '') lines.pop();
  while (lines.length > 0 && pyStrip(lines[lines.length - 1], null, 'left').startsWith('--')) lines.pop();
  return lines.join('\n');
}

/** The strict fenced blocks the recipe matches with ```` ```lang\n(.*?)\n``` ```` (DOTALL). */
export function strictBlocks(text: string, lang: 'lean4' | 'tactics'): string[] {
  return findAllGroups(new RegExp('```' + lang + '\\n([\\s\\S]*?)\\n```', 'g'), text);
}
