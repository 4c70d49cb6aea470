// The one Lean 4 lexer of the backend: the untrusted-code filter, the declaration finder and the editor
// all read source through it, so they never disagree on what is code. It follows Lean's own tokenizer
// (src/Lean/Parser/Basic.lean: `whitespace`, `finishCommentBlock`, `strLitFnAux`, `rawStrLitFnAux`,
// `charLitFnAux`, `quotedCharCoreFn`, `stringGapFn`, `numberFnAux`, `identFnAux`, `tokenFnAux`;
// src/Lean/Parser/StrInterpolation.lean; `isIdFirst`/`isIdRest`/`isLetterLike` in Init/Meta):
// - comments: `--` to the end of the line; `/- … -/` nested, where the character right after `/-` is
//   skipped unread (so `/-/-` opens one level, as in Lean); doc comments `/--`, `/-!` nest too;
// - strings with Lean's escapes (\\ \" \' \r \n \t \xHH \uHHHH, gaps `\`+newline), raw strings
//   `r"…"`, `r#"…"#` (any number of `#`, no escapes), interpolated strings whose `{…}` hold code;
// - char literals (a `'` at a token start, unless `''`), `«…»` escaped names, `` `name `` literals,
//   numbers (0x/0b/0o, `_` separators, scientific) and identifiers with Lean's character classes.
// Whatever Lean would reject or read differently across versions or contexts is reported as a
// `LexProblem`; the filter refuses any. Positions are Lean's: 1-based line, 0-based column in
// codepoints. Skipped parts are recorded as UTF-16 spans (`Trivia`), which `maskLean` blanks out.

export type TokenKind = 'ident' | 'command' | 'name' | 'number' | 'symbol';
export interface Token {
  kind: TokenKind;
  text: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
  /**
   * Read inside the `{…}` of a plain string literal: Lean reads it as code only where the string is
   * interpolated (after `throwError`, `trace[…]`, a library's own syntax). The filter checks such
   * tokens; `lexLean` leaves them out.
   */
  quoted?: true;
}

/** A skipped stretch of source, in UTF-16 offsets (JS string indices), end exclusive. */
export interface Trivia {
  kind: 'comment' | 'doc' | 'string' | 'char';
  start: number;
  end: number;
}

/** Something Lean would reject, or could read otherwise than we do. */
export interface LexProblem {
  message: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

export interface Lexed {
  /** Every token, `quoted` ones included. */
  tokens: Token[];
  trivia: Trivia[];
  problems: LexProblem[];
}

// ---- Lean's character classes (Init/Meta: isLetterLike, isSubScriptAlnum, isIdFirst, isIdRest) ----

const inRange = (c: number, lo: number, hi: number): boolean => lo <= c && c <= hi;
/** `isLetterLike` as every supported Lean has it: Greek (but λ Π Σ), Coptic, Greek Extended, Letterlike, math script/double-struck/fraktur. */
function isLetterLike(c: number): boolean {
  return (
    (inRange(c, 0x3b1, 0x3c9) && c !== 0x3bb) ||
    (inRange(c, 0x391, 0x3a9) && c !== 0x3a0 && c !== 0x3a3) ||
    inRange(c, 0x3ca, 0x3fb) ||
    inRange(c, 0x1f00, 0x1ffe) ||
    inRange(c, 0x2100, 0x214f) ||
    inRange(c, 0x1d49c, 0x1d59f)
  );
}
/** Latin-1 and Latin Extended-A letters: identifier characters in recent Lean only (older Lean rejects them). */
function isLatinLetterOfRecentLean(c: number): boolean {
  return (inRange(c, 0xc0, 0xff) && c !== 0xd7 && c !== 0xf7) || inRange(c, 0x100, 0x17f);
}
function isSubScriptAlnum(c: number): boolean {
  return inRange(c, 0x2080, 0x2089) || inRange(c, 0x2090, 0x209c) || inRange(c, 0x1d62, 0x1d6a) || c === 0x2c7c;
}
const isAsciiLetter = (c: number): boolean => inRange(c, 0x41, 0x5a) || inRange(c, 0x61, 0x7a);
const isDigit = (ch: string | undefined): boolean => ch !== undefined && ch >= '0' && ch <= '9';
const isHexDigit = (ch: string | undefined): boolean => ch !== undefined && /^[0-9a-fA-F]$/.test(ch);
const code = (ch: string): number => ch.codePointAt(0) as number;

/** Lean's `isIdFirst`, strict: a character every supported Lean version accepts. */
export function isIdFirst(ch: string | undefined): boolean {
  if (ch === undefined) return false;
  const c = code(ch);
  return isAsciiLetter(c) || ch === '_' || isLetterLike(c);
}
/** Lean's `isIdRest`, strict. */
export function isIdRest(ch: string | undefined): boolean {
  if (ch === undefined) return false;
  const c = code(ch);
  return isIdFirst(ch) || isDigit(ch) || ch === "'" || ch === '!' || ch === '?' || isSubScriptAlnum(c);
}
/** Lean's `Char.isWhitespace`; anything else (no-break space, …) is not whitespace to Lean. */
const isLeanWhitespace = (ch: string | undefined): boolean => ch === ' ' || ch === '\n' || ch === '\r' || ch === '\t';
/** Letters that are Lean tokens, not identifier characters. */
const letterTokens = new Set(['λ', 'Π', 'Σ']);
/** A symbol character that a multi-character token (`<-`, `//`, Mathlib's notations) may go on from. */
function mayEndLongerToken(ch: string): boolean {
  return !isLeanWhitespace(ch) && !isIdRest(ch) && !'()[]{}⟨⟩⦃⦄,;"\'»`'.includes(ch);
}
/**
 * Lean's recovery skips an untokenizable character one byte at a time and reads its continuation
 * bytes as U+0080–U+00BF; byte 0xAB reads as `«`, which opens an escaped name up to the next `»`.
 */
const utf8 = new TextEncoder();
function hasGuillemetByte(ch: string): boolean {
  return utf8.encode(ch).subarray(1).includes(0xab);
}
/** Characters after which `'` belongs to a Lean core token: `xs[i]'h`, `Σ'`, `×'`, `⊕'`. */
const coreQuoteTokens = new Set([']', 'Σ', '×', '⊕']);
/**
 * The same for Mathlib's tokens (`∑'`, `∏'`, `⁻¹'`; `''` too), trusted once a module beyond Lean's own
 * (`coreModules`) is imported: Mathlib or a project built on it. With only core imports they are no
 * tokens, and the char-literal reading is checked.
 */
const mathlibQuoteTokens = new Set(['∑', '∏', '¹']);
const coreModules = /^(Init|Lean|Std|Lake)(\.|$)/;
const maxInterpolationDepth = 16;
/** Prefixes whose string Lean always reads as interpolated. */
const interpolationPrefixes = new Set(['s!', 'm!', 'f!']);

const hex = (ch: string): string => 'U+' + code(ch).toString(16).toUpperCase().padStart(4, '0');

/** Lexes `source`, reporting what Lean would reject or might read otherwise. */
export function lexLeanFull(source: string): Lexed {
  const chars = Array.from(source);
  const tokens: Token[] = [];
  const trivia: Trivia[] = [];
  const problems: LexProblem[] = [];
  let i = 0,
    line = 1,
    column = 0,
    offset = 0;
  /** Inside the `{…}` of a plain string: tokens are `quoted`. */
  let quoted = 0;
  /** The last thing read is an `s!`-like prefix (no literal since), so a string here is interpolated. */
  let afterInterpolationPrefix = false;
  /** A module beyond Lean's own was imported: Mathlib's notations are taken to be in Lean's token table. */
  let mathlibImported = false;
  /** Strings inside `{…}` of strings: bounded, so no input can exhaust the stack. */
  let interpolationDepth = 0;
  /** Characters the interpolated readings of plain strings may cover in all: linear time on any input. */
  let secondReadingBudget = 4 * chars.length + 10_000;
  const lastClosingGuillemet = chars.lastIndexOf('»');
  /** Characters that may be read again after unterminated literals and comments, in all. */
  let rescanBudget = 4 * chars.length + 10_000;

  const at = (k = 0): string | undefined => chars[i + k];
  const step = (): void => {
    if (chars[i] === '\n') {
      line++;
      column = 0;
    } else column++;
    offset += chars[i].length;
    i++;
  };
  const stepN = (n: number): void => {
    for (let k = 0; k < n && i < chars.length; k++) step();
  };
  type Mark = {
    i: number;
    line: number;
    column: number;
    offset: number;
    tokens: number;
    trivia: number;
    problems: number;
  };
  const mark = (): Mark => ({
    i,
    line,
    column,
    offset,
    tokens: tokens.length,
    trivia: trivia.length,
    problems: problems.length,
  });
  /** Back to `m`, dropping what was recorded since. */
  const restore = (m: Mark): void => {
    i = m.i;
    line = m.line;
    column = m.column;
    offset = m.offset;
    tokens.length = m.tokens;
    trivia.length = m.trivia;
    problems.length = m.problems;
  };
  const push = (kind: TokenKind, text: string, from: Mark): void => {
    afterInterpolationPrefix = kind === 'ident' && interpolationPrefixes.has(text);
    if (kind === 'ident' && tokens[tokens.length - 1]?.text === 'import' && !coreModules.test(text))
      mathlibImported = true;
    tokens.push({
      kind,
      text,
      line: from.line,
      column: from.column,
      endLine: line,
      endColumn: column,
      ...(quoted > 0 ? { quoted: true as const } : {}),
    });
  };
  const problem = (message: string, from: Mark): void => {
    const end = i > from.i ? { line, column } : { line: from.line, column: from.column + 1 };
    problems.push({ message, line: from.line, column: from.column, endLine: end.line, endColumn: end.column });
  };
  /**
   * After a literal or comment that never ends (read from `from` up to index `reached`), whether the
   * text after its start may be read again as code. Once the budget is spent (only on contrived input)
   * the rest is left unread, with a problem: the filter refuses it either way, and time stays linear.
   */
  const mayRescan = (from: Mark, reached: number): boolean => {
    rescanBudget -= reached - from.i;
    if (rescanBudget >= 0) return true;
    if (rescanBudget + (reached - from.i) >= 0)
      problem('too many unterminated literals or comments: the rest is not read', from);
    stepN(chars.length - i);
    return false;
  };

  // ---- comments ----
  const lineComment = (): void => {
    const from = offset;
    while (i < chars.length && at() !== '\n') step();
    trivia.push({ kind: 'comment', start: from, end: offset });
  };
  /** `finishCommentBlock`: from just inside the comment, to just after the `-/` that closes nesting 1. */
  const finishCommentBlock = (): boolean => {
    let depth = 1;
    while (i < chars.length) {
      const c = at();
      step();
      if (c === '-' && at() === '/') {
        step();
        if (--depth === 0) return true;
      } else if (c === '/' && at() === '-') {
        step();
        depth++;
      }
    }
    return false;
  };
  const blockComment = (): void => {
    const start = mark();
    const doc = at(2) === '-';
    stepN(3); // a doc comment's body starts after `/--` (`/-!`); a plain one skips the char after `/-` unread
    if (!finishCommentBlock()) {
      if (!mayRescan(start, i)) return;
      restore(start);
      problem('unterminated comment', start);
      stepN(2); // read the rest as code, as Lean's error recovery could
      return;
    }
    trivia.push({ kind: doc ? 'doc' : 'comment', start: start.offset, end: offset });
  };

  // ---- strings ----
  /**
   * One escape after the `\` at `chars[j]` (Lean's `quotedCharCoreFn`): the index after it, or an error.
   * `braces`: `\{` is an escape (interpolated strings); `gaps`: `\`+newline+spaces (strings, not chars).
   */
  const escapeEnd = (j: number, braces: boolean, gaps: boolean): number | string => {
    const c = chars[j + 1];
    if (c === undefined) return 'unterminated escape';
    if ('\\"\'rnt'.includes(c) || (braces && c === '{')) return j + 2;
    if (c === 'x')
      return isHexDigit(chars[j + 2]) && isHexDigit(chars[j + 3])
        ? j + 4
        : 'invalid \\x escape (two hex digits expected)';
    if (c === 'u')
      return [2, 3, 4, 5].every((k) => isHexDigit(chars[j + k]))
        ? j + 6
        : 'invalid \\u escape (four hex digits expected)';
    if (gaps && c === '\n') {
      let k = j + 2;
      while (chars[k] !== undefined && isLeanWhitespace(chars[k])) {
        if (chars[k] === '\n') return 'unexpected additional newline in string gap';
        k++;
      }
      return k;
    }
    return `invalid escape sequence '\\${c}'`;
  };
  /** Lean's plain string literal from the `"` at `chars[j]`: the index after its closing quote, or an error. */
  const plainStringEnd = (j: number): { end: number } | { error: string; at: number } => {
    let k = j + 1;
    while (k < chars.length) {
      if (chars[k] === '"') return { end: k + 1 };
      if (chars[k] === '\\') {
        const e = escapeEnd(k, false, true);
        if (typeof e === 'string') return { error: e, at: k };
        k = e;
      } else k++;
    }
    return { error: 'unterminated string literal', at: j };
  };
  /** Reads an interpolated string from its `"`, lexing the `{…}` parts as code; an error message or null. */
  const interpolatedString = (): string | null => {
    if (interpolationDepth >= maxInterpolationDepth) return 'string interpolation nested too deeply';
    interpolationDepth++;
    try {
      return interpolatedStringBody();
    } finally {
      interpolationDepth--;
    }
  };
  const interpolatedStringBody = (): string | null => {
    let pieceStart = offset;
    step(); // opening quote
    while (i < chars.length) {
      const c = at();
      if (c === '"') {
        step();
        trivia.push({ kind: 'string', start: pieceStart, end: offset });
        return null;
      }
      if (c === '\\') {
        const e = escapeEnd(i, true, true);
        if (typeof e === 'string') return e;
        stepN(e - i);
        continue;
      }
      step();
      if (c === '{') {
        trivia.push({ kind: 'string', start: pieceStart, end: offset });
        if (!lexCode(true)) return 'unterminated `{` in an interpolated string';
        pieceStart = offset - 1; // the closing `}`
      }
    }
    return 'unterminated string literal';
  };
  const string = (): void => {
    const start = mark();
    const known = afterInterpolationPrefix;
    afterInterpolationPrefix = false;
    if (known) {
      const error = interpolatedString();
      if (error === null) return;
      if (!mayRescan(start, i)) return;
      restore(start);
      problem(`interpolated string: ${error}`, start);
      step(); // read the rest as code, as Lean's error recovery could
      afterInterpolationPrefix = false;
      return;
    }
    const plain = plainStringEnd(i);
    if ('error' in plain) {
      if (!mayRescan(start, plain.at === start.i ? chars.length : plain.at)) return;
      const here = mark();
      stepN(plain.at - i);
      const where = mark();
      restore(here);
      problem(
        plain.error === 'unterminated string literal' ? plain.error : `${plain.error} in a string literal`,
        plain.at === start.i ? start : where,
      );
      step();
      return;
    }
    const text = chars.slice(i + 1, plain.end - 1);
    if (text.includes('{') && (quoted > 0 || secondReadingBudget <= 0)) {
      // within a string that may be interpolated, or after too many: refused rather than read twice
      // again (which would take exponential time)
      problem(
        quoted > 0
          ? 'a string literal with `{` inside a string that may be interpolated'
          : 'too many string literals with `{` to read both ways',
        start,
      );
    } else if (text.includes('{')) {
      // Lean reads this as plain text here, but as code inside `{…}` after `throwError`, `m!`-like syntax:
      // check that code too, and refuse the string when the two readings end in different places.
      quoted++;
      const error = interpolatedString();
      quoted--;
      secondReadingBudget -= i - start.i;
      const agree = error === null && i === plain.end;
      const codeTokens = tokens.slice(start.tokens);
      const codeProblems = problems.slice(start.problems);
      restore(start);
      for (const t of codeTokens) tokens.push({ ...t, quoted: true });
      for (const p of codeProblems) problems.push(p);
      if (!agree)
        problem(
          'a string literal with `{` that reads differently as plain and as interpolated string (Lean interpolates after `s!`, `throwError` and similar syntax)',
          start,
        );
    }
    const from = offset;
    stepN(plain.end - i);
    trivia.push({ kind: 'string', start: from, end: offset });
    afterInterpolationPrefix = false;
  };
  /** `r##"…"##` from the `r`. */
  const rawString = (): void => {
    const start = mark();
    afterInterpolationPrefix = false;
    const before = i > 0 ? chars[i - 1] : undefined;
    if (before !== undefined && mayEndLongerToken(before)) {
      // a token ending in `r` would leave a plain string here, escapes and all
      problem(`a raw string glued to '${before}': Lean may read a longer token there`, start);
    }
    step();
    let hashes = 0;
    while (at() === '#') {
      hashes++;
      step();
    }
    step(); // opening quote
    while (i < chars.length) {
      if (at() === '"' && chars.slice(i + 1, i + 1 + hashes).every((c) => c === '#') && i + hashes < chars.length) {
        stepN(1 + hashes);
        trivia.push({ kind: 'string', start: start.offset, end: offset });
        return;
      }
      step();
    }
    if (!mayRescan(start, i)) return;
    restore(start);
    problem('unterminated raw string literal', start);
    step(); // read the rest as code
  };
  const isRawStringStart = (): boolean => {
    let k = i + 1;
    while (chars[k] === '#') k++;
    return chars[k] === '"';
  };

  // ---- char literals ----
  /**
   * Whether Lean reading a char literal at the `'` at `j` (and, when it is malformed, starting over
   * three characters later, as its error recovery does) sees the same code as our reading of that `'`
   * as the end of a token: no string, comment, name or identifier that only one reading has.
   */
  const charReadingAgrees = (j: number): boolean => {
    const [c, d, e] = [chars[j + 1], chars[j + 2], chars[j + 3]];
    const special = (ch: string | undefined): boolean => ch !== undefined && '"\'\\-/«`'.includes(ch);
    if (c === undefined) return true;
    if (special(c) || c === 'r') return false;
    if (d === "'") return isIdFirst(c) && !isIdRest(e) && e !== '.'; // `X'h'`: the identifier `h'` ends where the char does
    return !special(d) && !(isIdRest(d) && isIdRest(e));
  };
  /** Whether `X'` (X the character before the quote) is surely a token: Lean core's, or Mathlib's once imported. */
  const quoteToken = (before: string): boolean =>
    coreQuoteTokens.has(before) || (mathlibImported && mathlibQuoteTokens.has(before));
  /**
   * A `'` at a token start. Lean reads a char literal, except `''` (Mathlib's image) and where a token
   * goes on with `'` (`xs[i]'h`, `Σ'`, `×'`, `⊕'`; Mathlib's `∑'`, `∏'`, `⁻¹'`). A quote glued to a
   * symbol is read as the end of that symbol's token; where that token may not exist and the char
   * reading would see other code, the text is refused as ambiguous.
   */
  const charLiteral = (): void => {
    const start = mark();
    afterInterpolationPrefix = false;
    const before = i > 0 ? chars[i - 1] : undefined;
    const glued = before !== undefined && (before === ']' || mayEndLongerToken(before));
    const ambiguous = (): void =>
      problem(`a quote after '${before ?? ''}': Lean may read a token or a character literal here`, start);
    if (at(1) === "'") {
      stepN(2);
      push('symbol', "''", start);
      if (glued || !(mathlibImported || charReadingAgrees(start.i + 1))) ambiguous();
      return;
    }
    if (glued) {
      step();
      push('symbol', "'", start);
      if (!quoteToken(before) && !charReadingAgrees(start.i)) ambiguous();
      return;
    }
    let k = i + 1;
    if (chars[k] === '\\') {
      const e = escapeEnd(k, false, false);
      if (typeof e === 'string') {
        step();
        problem(`${e} in a character literal`, start);
        return;
      }
      k = e;
    } else if (k < chars.length) k++;
    if (chars[k] !== "'") {
      step();
      problem('missing end of character literal', start);
      return;
    }
    stepN(k + 1 - i);
    trivia.push({ kind: 'char', start: start.offset, end: offset });
  };

  // ---- names and numbers ----
  /** Lean's `identFnAux`: parts joined by `.`; each part an identifier or `«…»`. False when a `«` is unterminated. */
  const identifier = (): string | null => {
    let text = '';
    for (;;) {
      if (at() === '«') {
        const part = mark();
        step();
        while (i < chars.length && at() !== '»') step();
        if (i >= chars.length) {
          if (!mayRescan(part, i)) return text === '' ? null : text;
          restore(part);
          problem('unterminated identifier escape `«`', part);
          step();
          return text === '' ? null : text;
        }
        step();
        text += source.slice(part.offset, offset);
      } else {
        const from = offset;
        while (isIdRest(at())) step();
        text += source.slice(from, offset);
      }
      if (at() === '.' && (isIdFirst(at(1)) || at(1) === '«')) {
        step();
        text += '.';
        continue;
      }
      return text;
    }
  };
  /** Lean's `numberFnAux` (with `_` separators); problems for what Lean rejects. */
  const number = (start: Mark): void => {
    const digits = (ok: (ch: string | undefined) => boolean, needDigit: boolean): boolean => {
      let need = needDigit;
      for (;;) {
        if (at() === '_') {
          step();
          need = true;
          continue;
        }
        if (ok(at())) {
          step();
          need = false;
          continue;
        }
        return !need;
      }
    };
    const radix = at() === '0' ? at(1)?.toLowerCase() : undefined;
    let ok = true;
    if (radix === 'x' || radix === 'b' || radix === 'o') {
      stepN(2);
      ok = digits(
        radix === 'x'
          ? isHexDigit
          : radix === 'b'
            ? (c) => c === '0' || c === '1'
            : (c) => c !== undefined && c >= '0' && c <= '7',
        true,
      );
    } else {
      ok = digits(isDigit, false);
      if (ok && at() === '.') {
        step();
        if (isDigit(at())) ok = digits(isDigit, false);
      }
      if (ok && (at() === 'e' || at() === 'E')) {
        const sign = at(1) === '+' || at(1) === '-' ? 1 : 0;
        if (isDigit(at(1 + sign))) {
          stepN(1 + sign);
          ok = digits(isDigit, false);
        } else ok = false;
      }
    }
    push('number', source.slice(start.offset, offset), start);
    if (!ok) problem('malformed number literal', start);
  };

  // ---- other characters ----
  // Tabs, no-break spaces, control characters: Lean reports its own error, and they cannot hide code
  // (both readings split there), so they are left to Lean.
  const otherCharacter = (start: Mark): void => {
    const c = at() as string;
    step();
    push('symbol', c, start);
    if (hasGuillemetByte(c) && lastClosingGuillemet >= i) {
      problem(
        `'${c}' (${hex(c)}): if it is no token, Lean's error recovery reads one of its bytes as '«' and takes the text up to the next '»' as a name`,
        start,
      );
    } else if (/[\p{L}\p{M}\p{N}]/u.test(c) && !letterTokens.has(c) && (isIdFirst(at()) || at() === '«')) {
      const why = isLatinLetterOfRecentLean(code(c))
        ? 'is an identifier character only in recent Lean; older Lean reports an error here'
        : 'is not an identifier character in Lean: Lean reports an error here';
      problem(`'${c}' (${hex(c)}) ${why} and reads what follows as new code`, start);
    }
  };

  function lexToken(): void {
    const start = mark();
    const c = at() as string;
    if (c === '"') {
      string();
      return;
    }
    if (c === "'") {
      charLiteral();
      return;
    }
    if (isDigit(c) && chars[i - 1] === '.' && i >= 2 && !isLeanWhitespace(chars[i - 2])) {
      // `h.2.elim`: a projection's field index (Lean's `fieldIdxFn`), digits only, not a number literal
      while (isDigit(at())) step();
      push('number', source.slice(start.offset, offset), start);
      return;
    }
    if (isDigit(c)) {
      number(start);
      return;
    }
    if (c === 'r' && isRawStringStart()) {
      rawString();
      return;
    }
    if (c === '`' && (isIdFirst(at(1)) || at(1) === '«' || (at(1) === '`' && (isIdFirst(at(2)) || at(2) === '«')))) {
      stepN(at(1) === '`' ? 2 : 1);
      const name = identifier();
      if (name) push('name', name, start);
      return;
    }
    if (c === '#' && isIdFirst(at(1))) {
      step();
      const name = identifier();
      push('command', '#' + (name ?? ''), start);
      return;
    }
    if (isIdFirst(c) || c === '«') {
      const name = identifier();
      if (name) push('ident', name, start);
      return;
    }
    if (c === '@' && at(1) === '[') {
      stepN(2);
      push('symbol', '@[', start);
      return;
    }
    if (c === ':' && at(1) === '=') {
      stepN(2);
      push('symbol', ':=', start);
      return;
    }
    otherCharacter(start);
  }

  /** Lexes code to the end, or (`untilBrace`) to the `}` closing an interpolation: false when it never comes. */
  function lexCode(untilBrace: boolean): boolean {
    let depth = 0;
    while (i < chars.length) {
      const c = at() as string;
      if (isLeanWhitespace(c)) {
        step();
        continue;
      }
      if ((c === '-' && at(1) === '-') || (c === '/' && at(1) === '-')) {
        const before = i > 0 ? chars[i - 1] : undefined;
        if (before !== undefined && mayEndLongerToken(before)) {
          // `<--`, `//-`: Lean's longest-match token (`<-`, `//`) may take the first character, and
          // then there is no comment
          problem(`a comment start glued to '${before}': Lean may read a longer token there`, mark());
        }
        if (c === '-') lineComment();
        else blockComment();
        continue;
      }
      if (untilBrace && c === '}' && depth === 0) {
        step();
        return true;
      }
      if (untilBrace && c === '{') depth++;
      if (untilBrace && c === '}') depth--;
      lexToken();
    }
    return !untilBrace;
  }

  lexCode(false);
  return { tokens, trivia, problems };
}

/**
 * The tokens of `source` that Lean reads as code (without `quoted` ones); when `trivia` is given, the
 * comments, strings (code inside `{…}` of `s!"…"` excluded) and char literals are appended to it.
 * Never fails: after a lexical problem it reads on as code (see `lexLeanFull` for the problems).
 */
export function lexLean(source: string, trivia?: Trivia[]): Token[] {
  const lexed = lexLeanFull(source);
  if (trivia) for (const t of lexed.trivia) trivia.push(t);
  return lexed.tokens.filter((t) => !t.quoted);
}
