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

type TokenKind = 'ident' | 'command' | 'name' | 'number' | 'symbol';
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
interface LexProblem {
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
function isIdFirst(ch: string | undefined): boolean {
  if (ch === undefined) return false;
  const c = code(ch);
  return isAsciiLetter(c) || ch === '_' || isLetterLike(c);
}
/** Lean's `isIdRest`, strict. */
function isIdRest(ch: string | undefined): boolean {
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

/** Where the lexer is: index, line, column and offset, and how much it has recorded (for going back). */
type Mark = {
  i: number;
  line: number;
  column: number;
  offset: number;
  tokens: number;
  trivia: number;
  problems: number;
};

/**
 * The lexer's state and readers, one per kind of thing Lean reads (comments, strings, char literals, identifiers,
 * numbers, other characters), each a member over the shared position; `lexLeanFull` runs one over a source.
 */
class LeanLexer {
  readonly tokens: Token[] = [];
  readonly trivia: Trivia[] = [];
  readonly problems: LexProblem[] = [];
  private readonly chars: string[];
  private i = 0;
  private line = 1;
  private column = 0;
  private offset = 0;
  /** Inside the `{…}` of a plain string: tokens are `quoted`. */
  private quoted = 0;
  /** The last thing read is an `s!`-like prefix (no literal since), so a string here is interpolated. */
  private afterInterpolationPrefix = false;
  /** A module beyond Lean's own was imported: Mathlib's notations are taken to be in Lean's token table. */
  private mathlibImported = false;
  /** Strings inside `{…}` of strings: bounded, so no input can exhaust the stack. */
  private interpolationDepth = 0;
  /** Characters the interpolated readings of plain strings may cover in all: linear time on any input. */
  private secondReadingBudget: number;
  private readonly lastClosingGuillemet: number;
  /** Characters that may be read again after unterminated literals and comments, in all. */
  private rescanBudget: number;

  constructor(private readonly source: string) {
    this.chars = Array.from(source);
    this.secondReadingBudget = 4 * this.chars.length + 10_000;
    this.lastClosingGuillemet = this.chars.lastIndexOf('»');
    this.rescanBudget = 4 * this.chars.length + 10_000;
  }

  /** Lexes the whole source. */
  run(): Lexed {
    this.lexCode(false);
    return { tokens: this.tokens, trivia: this.trivia, problems: this.problems };
  }

  private readonly at = (k = 0): string | undefined => this.chars[this.i + k];
  private readonly step = (): void => {
    if (this.chars[this.i] === '\n') {
      this.line++;
      this.column = 0;
    } else this.column++;
    this.offset += this.chars[this.i].length;
    this.i++;
  };
  private readonly stepN = (n: number): void => {
    for (let k = 0; k < n && this.i < this.chars.length; k++) this.step();
  };
  private readonly mark = (): Mark => ({
    i: this.i,
    line: this.line,
    column: this.column,
    offset: this.offset,
    tokens: this.tokens.length,
    trivia: this.trivia.length,
    problems: this.problems.length,
  });
  /** Back to `m`, dropping what was recorded since. */
  private readonly restore = (m: Mark): void => {
    this.i = m.i;
    this.line = m.line;
    this.column = m.column;
    this.offset = m.offset;
    this.tokens.length = m.tokens;
    this.trivia.length = m.trivia;
    this.problems.length = m.problems;
  };
  private readonly push = (kind: TokenKind, text: string, from: Mark): void => {
    this.afterInterpolationPrefix = kind === 'ident' && interpolationPrefixes.has(text);
    if (kind === 'ident' && this.tokens[this.tokens.length - 1]?.text === 'import' && !coreModules.test(text))
      this.mathlibImported = true;
    this.tokens.push({
      kind,
      text,
      line: from.line,
      column: from.column,
      endLine: this.line,
      endColumn: this.column,
      ...(this.quoted > 0 ? { quoted: true as const } : {}),
    });
  };
  private readonly problem = (message: string, from: Mark): void => {
    const end =
      this.i > from.i ? { line: this.line, column: this.column } : { line: from.line, column: from.column + 1 };
    this.problems.push({ message, line: from.line, column: from.column, endLine: end.line, endColumn: end.column });
  };
  /**
   * After a literal or comment that never ends (read from `from` up to index `reached`), whether the
   * text after its start may be read again as code. Once the budget is spent (only on contrived input)
   * the rest is left unread, with a problem: the filter refuses it either way, and time stays linear.
   */
  private readonly mayRescan = (from: Mark, reached: number): boolean => {
    this.rescanBudget -= reached - from.i;
    if (this.rescanBudget >= 0) return true;
    if (this.rescanBudget + (reached - from.i) >= 0)
      this.problem('too many unterminated literals or comments: the rest is not read', from);
    this.stepN(this.chars.length - this.i);
    return false;
  };

  // ---- comments ----
  private readonly lineComment = (): void => {
    const from = this.offset;
    while (this.i < this.chars.length && this.at() !== '\n') this.step();
    this.trivia.push({ kind: 'comment', start: from, end: this.offset });
  };
  /** `finishCommentBlock`: from just inside the comment, to just after the `-/` that closes nesting 1. */
  private readonly finishCommentBlock = (): boolean => {
    let depth = 1;
    while (this.i < this.chars.length) {
      const c = this.at();
      this.step();
      if (c === '-' && this.at() === '/') {
        this.step();
        if (--depth === 0) return true;
      } else if (c === '/' && this.at() === '-') {
        this.step();
        depth++;
      }
    }
    return false;
  };
  private readonly blockComment = (): void => {
    const start = this.mark();
    const doc = this.at(2) === '-';
    this.stepN(3); // a doc comment's body starts after `/--` (`/-!`); a plain one skips the char after `/-` unread
    if (!this.finishCommentBlock()) {
      if (!this.mayRescan(start, this.i)) return;
      this.restore(start);
      this.problem('unterminated comment', start);
      this.stepN(2); // read the rest as code, as Lean's error recovery could
      return;
    }
    this.trivia.push({ kind: doc ? 'doc' : 'comment', start: start.offset, end: this.offset });
  };

  // ---- strings ----
  /**
   * One escape after the `\` at `chars[j]` (Lean's `quotedCharCoreFn`): the index after it, or an error.
   * `braces`: `\{` is an escape (interpolated strings); `gaps`: `\`+newline+spaces (strings, not chars).
   */
  private readonly escapeEnd = (j: number, braces: boolean, gaps: boolean): number | string => {
    const c = this.chars[j + 1];
    if (c === undefined) return 'unterminated escape';
    if ('\\"\'rnt'.includes(c) || (braces && c === '{')) return j + 2;
    if (c === 'x')
      return isHexDigit(this.chars[j + 2]) && isHexDigit(this.chars[j + 3])
        ? j + 4
        : 'invalid \\x escape (two hex digits expected)';
    if (c === 'u')
      return [2, 3, 4, 5].every((k) => isHexDigit(this.chars[j + k]))
        ? j + 6
        : 'invalid \\u escape (four hex digits expected)';
    if (gaps && c === '\n') {
      let k = j + 2;
      while (this.chars[k] !== undefined && isLeanWhitespace(this.chars[k])) {
        if (this.chars[k] === '\n') return 'unexpected additional newline in string gap';
        k++;
      }
      return k;
    }
    return `invalid escape sequence '\\${c}'`;
  };
  /** Lean's plain string literal from the `"` at `chars[j]`: the index after its closing quote, or an error. */
  private readonly plainStringEnd = (j: number): { end: number } | { error: string; at: number } => {
    let k = j + 1;
    while (k < this.chars.length) {
      if (this.chars[k] === '"') return { end: k + 1 };
      if (this.chars[k] === '\\') {
        const e = this.escapeEnd(k, false, true);
        if (typeof e === 'string') return { error: e, at: k };
        k = e;
      } else k++;
    }
    return { error: 'unterminated string literal', at: j };
  };
  /** Reads an interpolated string from its `"`, lexing the `{…}` parts as code; an error message or null. */
  private readonly interpolatedString = (): string | null => {
    if (this.interpolationDepth >= maxInterpolationDepth) return 'string interpolation nested too deeply';
    this.interpolationDepth++;
    try {
      return this.interpolatedStringBody();
    } finally {
      this.interpolationDepth--;
    }
  };
  private readonly interpolatedStringBody = (): string | null => {
    let pieceStart = this.offset;
    this.step(); // opening quote
    while (this.i < this.chars.length) {
      const c = this.at();
      if (c === '"') {
        this.step();
        this.trivia.push({ kind: 'string', start: pieceStart, end: this.offset });
        return null;
      }
      if (c === '\\') {
        const e = this.escapeEnd(this.i, true, true);
        if (typeof e === 'string') return e;
        this.stepN(e - this.i);
        continue;
      }
      this.step();
      if (c === '{') {
        this.trivia.push({ kind: 'string', start: pieceStart, end: this.offset });
        if (!this.lexCode(true)) return 'unterminated `{` in an interpolated string';
        pieceStart = this.offset - 1; // the closing `}`
      }
    }
    return 'unterminated string literal';
  };
  private readonly string = (): void => {
    const start = this.mark();
    const known = this.afterInterpolationPrefix;
    this.afterInterpolationPrefix = false;
    if (known) {
      const error = this.interpolatedString();
      if (error === null) return;
      if (!this.mayRescan(start, this.i)) return;
      this.restore(start);
      this.problem(`interpolated string: ${error}`, start);
      this.step(); // read the rest as code, as Lean's error recovery could
      this.afterInterpolationPrefix = false;
      return;
    }
    const plain = this.plainStringEnd(this.i);
    if ('error' in plain) {
      if (!this.mayRescan(start, plain.at === start.i ? this.chars.length : plain.at)) return;
      const here = this.mark();
      this.stepN(plain.at - this.i);
      const where = this.mark();
      this.restore(here);
      this.problem(
        plain.error === 'unterminated string literal' ? plain.error : `${plain.error} in a string literal`,
        plain.at === start.i ? start : where,
      );
      this.step();
      return;
    }
    const text = this.chars.slice(this.i + 1, plain.end - 1);
    if (text.includes('{') && (this.quoted > 0 || this.secondReadingBudget <= 0)) {
      // within a string that may be interpolated, or after too many: refused rather than read twice
      // again (which would take exponential time)
      this.problem(
        this.quoted > 0
          ? 'a string literal with `{` inside a string that may be interpolated'
          : 'too many string literals with `{` to read both ways',
        start,
      );
    } else if (text.includes('{')) {
      // Lean reads this as plain text here, but as code inside `{…}` after `throwError`, `m!`-like syntax:
      // check that code too, and refuse the string when the two readings end in different places.
      this.quoted++;
      const error = this.interpolatedString();
      this.quoted--;
      this.secondReadingBudget -= this.i - start.i;
      const agree = error === null && this.i === plain.end;
      const codeTokens = this.tokens.slice(start.tokens);
      const codeProblems = this.problems.slice(start.problems);
      this.restore(start);
      for (const t of codeTokens) this.tokens.push({ ...t, quoted: true });
      for (const p of codeProblems) this.problems.push(p);
      if (!agree)
        this.problem(
          'a string literal with `{` that reads differently as plain and as interpolated string (Lean interpolates after `s!`, `throwError` and similar syntax)',
          start,
        );
    }
    const from = this.offset;
    this.stepN(plain.end - this.i);
    this.trivia.push({ kind: 'string', start: from, end: this.offset });
    this.afterInterpolationPrefix = false;
  };
  /** `r##"…"##` from the `r`. */
  private readonly rawString = (): void => {
    const start = this.mark();
    this.afterInterpolationPrefix = false;
    const before = this.i > 0 ? this.chars[this.i - 1] : undefined;
    if (before !== undefined && mayEndLongerToken(before)) {
      // a token ending in `r` would leave a plain string here, escapes and all
      this.problem(`a raw string glued to '${before}': Lean may read a longer token there`, start);
    }
    this.step();
    let hashes = 0;
    while (this.at() === '#') {
      hashes++;
      this.step();
    }
    this.step(); // opening quote
    while (this.i < this.chars.length) {
      if (
        this.at() === '"' &&
        this.chars.slice(this.i + 1, this.i + 1 + hashes).every((c) => c === '#') &&
        this.i + hashes < this.chars.length
      ) {
        this.stepN(1 + hashes);
        this.trivia.push({ kind: 'string', start: start.offset, end: this.offset });
        return;
      }
      this.step();
    }
    if (!this.mayRescan(start, this.i)) return;
    this.restore(start);
    this.problem('unterminated raw string literal', start);
    this.step(); // read the rest as code
  };
  private readonly isRawStringStart = (): boolean => {
    let k = this.i + 1;
    while (this.chars[k] === '#') k++;
    return this.chars[k] === '"';
  };

  // ---- char literals ----
  /**
   * Whether Lean reading a char literal at the `'` at `j` (and, when it is malformed, starting over
   * three characters later, as its error recovery does) sees the same code as our reading of that `'`
   * as the end of a token: no string, comment, name or identifier that only one reading has.
   */
  private readonly charReadingAgrees = (j: number): boolean => {
    const [c, d, e] = [this.chars[j + 1], this.chars[j + 2], this.chars[j + 3]];
    const special = (ch: string | undefined): boolean => ch !== undefined && '"\'\\-/«`'.includes(ch);
    if (c === undefined) return true;
    if (special(c) || c === 'r') return false;
    if (d === "'") return isIdFirst(c) && !isIdRest(e) && e !== '.'; // `X'h'`: the identifier `h'` ends where the char does
    return !special(d) && !(isIdRest(d) && isIdRest(e));
  };
  /** Whether `X'` (X the character before the quote) is surely a token: Lean core's, or Mathlib's once imported. */
  private readonly quoteToken = (before: string): boolean =>
    coreQuoteTokens.has(before) || (this.mathlibImported && mathlibQuoteTokens.has(before));
  /**
   * A `'` at a token start. Lean reads a char literal, except `''` (Mathlib's image) and where a token
   * goes on with `'` (`xs[i]'h`, `Σ'`, `×'`, `⊕'`; Mathlib's `∑'`, `∏'`, `⁻¹'`). A quote glued to a
   * symbol is read as the end of that symbol's token; where that token may not exist and the char
   * reading would see other code, the text is refused as ambiguous.
   */
  private readonly charLiteral = (): void => {
    const start = this.mark();
    this.afterInterpolationPrefix = false;
    const before = this.i > 0 ? this.chars[this.i - 1] : undefined;
    const glued = before !== undefined && (before === ']' || mayEndLongerToken(before));
    const ambiguous = (): void =>
      this.problem(`a quote after '${before ?? ''}': Lean may read a token or a character literal here`, start);
    if (this.at(1) === "'") {
      this.stepN(2);
      this.push('symbol', "''", start);
      if (glued || !(this.mathlibImported || this.charReadingAgrees(start.i + 1))) ambiguous();
      return;
    }
    if (glued) {
      this.step();
      this.push('symbol', "'", start);
      if (!this.quoteToken(before) && !this.charReadingAgrees(start.i)) ambiguous();
      return;
    }
    let k = this.i + 1;
    if (this.chars[k] === '\\') {
      const e = this.escapeEnd(k, false, false);
      if (typeof e === 'string') {
        this.step();
        this.problem(`${e} in a character literal`, start);
        return;
      }
      k = e;
    } else if (k < this.chars.length) k++;
    if (this.chars[k] !== "'") {
      this.step();
      this.problem('missing end of character literal', start);
      return;
    }
    this.stepN(k + 1 - this.i);
    this.trivia.push({ kind: 'char', start: start.offset, end: this.offset });
  };

  // ---- names and numbers ----
  /** Lean's `identFnAux`: parts joined by `.`; each part an identifier or `«…»`. False when a `«` is unterminated. */
  private readonly identifier = (): string | null => {
    let text = '';
    for (;;) {
      if (this.at() === '«') {
        const part = this.mark();
        this.step();
        while (this.i < this.chars.length && this.at() !== '»') this.step();
        if (this.i >= this.chars.length) {
          if (!this.mayRescan(part, this.i)) return text === '' ? null : text;
          this.restore(part);
          this.problem('unterminated identifier escape `«`', part);
          this.step();
          return text === '' ? null : text;
        }
        this.step();
        text += this.source.slice(part.offset, this.offset);
      } else {
        const from = this.offset;
        while (isIdRest(this.at())) this.step();
        text += this.source.slice(from, this.offset);
      }
      if (this.at() === '.' && (isIdFirst(this.at(1)) || this.at(1) === '«')) {
        this.step();
        text += '.';
        continue;
      }
      return text;
    }
  };
  /** Lean's `numberFnAux` (with `_` separators); problems for what Lean rejects. */
  private readonly number = (start: Mark): void => {
    const digits = (ok: (ch: string | undefined) => boolean, needDigit: boolean): boolean => {
      let need = needDigit;
      for (;;) {
        if (this.at() === '_') {
          this.step();
          need = true;
          continue;
        }
        if (ok(this.at())) {
          this.step();
          need = false;
          continue;
        }
        return !need;
      }
    };
    const radix = this.at() === '0' ? this.at(1)?.toLowerCase() : undefined;
    let ok = true;
    if (radix === 'x' || radix === 'b' || radix === 'o') {
      this.stepN(2);
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
      if (ok && this.at() === '.') {
        this.step();
        if (isDigit(this.at())) ok = digits(isDigit, false);
      }
      if (ok && (this.at() === 'e' || this.at() === 'E')) {
        const sign = this.at(1) === '+' || this.at(1) === '-' ? 1 : 0;
        if (isDigit(this.at(1 + sign))) {
          this.stepN(1 + sign);
          ok = digits(isDigit, false);
        } else ok = false;
      }
    }
    this.push('number', this.source.slice(start.offset, this.offset), start);
    if (!ok) this.problem('malformed number literal', start);
  };

  // ---- other characters ----
  // Tabs, no-break spaces, control characters: Lean reports its own error, and they cannot hide code
  // (both readings split there), so they are left to Lean.
  private readonly otherCharacter = (start: Mark): void => {
    const c = this.at() as string;
    this.step();
    this.push('symbol', c, start);
    if (hasGuillemetByte(c) && this.lastClosingGuillemet >= this.i) {
      this.problem(
        `'${c}' (${hex(c)}): if it is no token, Lean's error recovery reads one of its bytes as '«' and takes the text up to the next '»' as a name`,
        start,
      );
    } else if (/[\p{L}\p{M}\p{N}]/u.test(c) && !letterTokens.has(c) && (isIdFirst(this.at()) || this.at() === '«')) {
      const why = isLatinLetterOfRecentLean(code(c))
        ? 'is an identifier character only in recent Lean; older Lean reports an error here'
        : 'is not an identifier character in Lean: Lean reports an error here';
      this.problem(`'${c}' (${hex(c)}) ${why} and reads what follows as new code`, start);
    }
  };

  private lexToken(): void {
    const start = this.mark();
    const c = this.at() as string;
    if (c === '"') {
      this.string();
      return;
    }
    if (c === "'") {
      this.charLiteral();
      return;
    }
    if (isDigit(c) && this.chars[this.i - 1] === '.' && this.i >= 2 && !isLeanWhitespace(this.chars[this.i - 2])) {
      // `h.2.elim`: a projection's field index (Lean's `fieldIdxFn`), digits only, not a number literal
      while (isDigit(this.at())) this.step();
      this.push('number', this.source.slice(start.offset, this.offset), start);
      return;
    }
    if (isDigit(c)) {
      this.number(start);
      return;
    }
    if (c === 'r' && this.isRawStringStart()) {
      this.rawString();
      return;
    }
    if (
      c === '`' &&
      (isIdFirst(this.at(1)) ||
        this.at(1) === '«' ||
        (this.at(1) === '`' && (isIdFirst(this.at(2)) || this.at(2) === '«')))
    ) {
      this.stepN(this.at(1) === '`' ? 2 : 1);
      const name = this.identifier();
      if (name) this.push('name', name, start);
      return;
    }
    if (c === '#' && isIdFirst(this.at(1))) {
      this.step();
      const name = this.identifier();
      this.push('command', '#' + (name ?? ''), start);
      return;
    }
    if (isIdFirst(c) || c === '«') {
      const name = this.identifier();
      if (name) this.push('ident', name, start);
      return;
    }
    if (c === '@' && this.at(1) === '[') {
      this.stepN(2);
      this.push('symbol', '@[', start);
      return;
    }
    if (c === ':' && this.at(1) === '=') {
      this.stepN(2);
      this.push('symbol', ':=', start);
      return;
    }
    this.otherCharacter(start);
  }

  /** Lexes code to the end, or (`untilBrace`) to the `}` closing an interpolation: false when it never comes. */
  private lexCode(untilBrace: boolean): boolean {
    let depth = 0;
    while (this.i < this.chars.length) {
      const c = this.at() as string;
      if (isLeanWhitespace(c)) {
        this.step();
        continue;
      }
      if ((c === '-' && this.at(1) === '-') || (c === '/' && this.at(1) === '-')) {
        const before = this.i > 0 ? this.chars[this.i - 1] : undefined;
        if (before !== undefined && mayEndLongerToken(before)) {
          // `<--`, `//-`: Lean's longest-match token (`<-`, `//`) may take the first character, and
          // then there is no comment
          this.problem(`a comment start glued to '${before}': Lean may read a longer token there`, this.mark());
        }
        if (c === '-') this.lineComment();
        else this.blockComment();
        continue;
      }
      if (untilBrace && c === '}' && depth === 0) {
        this.step();
        return true;
      }
      if (untilBrace && c === '{') depth++;
      if (untilBrace && c === '}') depth--;
      this.lexToken();
    }
    return !untilBrace;
  }
}

/** Lexes `source`, reporting what Lean would reject or might read otherwise. */
export function lexLeanFull(source: string): Lexed {
  return new LeanLexer(source).run();
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

/**
 * UTF-16 offsets of each token's start and end in `source` (`lexLean`'s tokens: in source order, none inside another):
 * one forward walk over the source, since a token never starts before the previous one ends.
 */
export function tokenSpans(source: string, tokens: Token[]): { start: number; end: number }[] {
  let offset = 0;
  let line = 1;
  let column = 0;
  // moves the cursor forward to (toLine, toColumn): lines by their newlines, columns in codepoints
  const seek = (toLine: number, toColumn: number): number => {
    while (line < toLine && offset < source.length) {
      if (source[offset] === '\n') {
        line++;
        column = 0;
      }
      offset++;
    }
    while (column < toColumn && offset < source.length) {
      offset += (source.codePointAt(offset) ?? 0) > 0xffff ? 2 : 1;
      column++;
    }
    return offset;
  };
  return tokens.map((t) => ({ start: seek(t.line, t.column), end: seek(t.endLine, t.endColumn) }));
}
