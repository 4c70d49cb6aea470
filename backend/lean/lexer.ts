// The one Lean 4 lexer of the backend, just precise enough for the untrusted-code filter and for finding
// declarations: comments (nested), string and char literals are skipped, so words inside them never count.
// Positions are Lean's: 1-based line, 0-based column in Unicode codepoints. The skipped parts can be
// recorded as UTF-16 spans (`Trivia`), which is what `maskLean` (declarations.ts) blanks out.

export type TokenKind = 'ident' | 'command' | 'name' | 'number' | 'symbol';
export interface Token {
  kind: TokenKind;
  text: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

const identStart = /[\p{L}_]/u;
const identRest = /[\p{L}\p{N}_'!?\u2080-\u209c\u1d62-\u1d6a\u2c7c]/u;
// λ, Π and Σ are Lean tokens, not letters.
const notLetters = new Set(['λ', 'Π', 'Σ']);
const isIdentStart = (c: string | undefined): boolean => c !== undefined && !notLetters.has(c) && identStart.test(c);
const isIdentRest = (c: string | undefined): boolean => c !== undefined && !notLetters.has(c) && identRest.test(c);

/** A skipped stretch of source, in UTF-16 offsets (JS string indices), end exclusive. */
export interface Trivia {
  kind: 'comment' | 'doc' | 'string' | 'char';
  start: number;
  end: number;
}

/** Lexes `source`; when `trivia` is given, the comments, strings (code inside `{…}` of `s!"…"` excluded) and char literals are appended to it. */
export function lexLean(source: string, trivia?: Trivia[]): Token[] {
  const chars = Array.from(source);
  const tokens: Token[] = [];
  const skipped: Trivia[] = trivia ?? [];
  let i = 0, line = 1, column = 0, offset = 0;
  const at = (k = 0): string | undefined => chars[i + k];
  const step = (): void => {
    if (chars[i] === '\n') { line++; column = 0; } else column++;
    offset += chars[i].length;
    i++;
  };
  type Mark = { i: number; line: number; column: number; offset: number; skipped: number };
  const mark = (): Mark => ({ i, line, column, offset, skipped: skipped.length });
  /** Back to `m`, then `n` characters (on the same line) further; drops what was recorded since. */
  const resume = (m: Mark, n: number): void => {
    i = m.i; line = m.line; column = m.column; offset = m.offset; skipped.length = m.skipped;
    for (let k = 0; k < n; k++) step();
  };
  const push = (kind: TokenKind, text: string, l: number, c: number): void => {
    tokens.push({ kind, text, line: l, column: c, endLine: line, endColumn: column });
  };

  // Where Lean's reading could differ from ours (an unterminated comment or string, an unknown
  // escape), Lean reports an error and resumes at the next command it recognises; so we read the
  // rest as code too, and the filter errs on the side of flagging.
  const skipBlockComment = (): void => {
    const start = mark();
    const doc = at(2) === '-' && at(3) !== '/';
    let depth = 0;
    do {
      if (at() === '/' && at(1) === '-') { depth++; step(); step(); continue; }
      if (at() === '-' && at(1) === '/') { depth--; step(); step(); continue; }
      step();
    } while (i < chars.length && depth > 0);
    if (depth > 0) { resume(start, 2); return; }
    skipped.push({ kind: doc ? 'doc' : 'comment', start: start.offset, end: offset });
  };

  const validEscape = /^(\\[\\"'nrt]|\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|\\\n)/;

  // Strings; an interpolated one (`s!"…{e}…"`) has its `{…}` parts lexed as code.
  const lexString = (interpolated: boolean): void => {
    const start = mark();
    let pieceStart = offset;
    step(); // opening quote
    while (i < chars.length && at() !== '"') {
      if (at() === '\\') {
        if (!validEscape.test(chars.slice(i, i + 6).join(''))) { resume(start, 1); return; }
        step(); step();
        continue;
      }
      if (interpolated && at() === '{') {
        step();
        skipped.push({ kind: 'string', start: pieceStart, end: offset });
        lexCodeUntilBrace();
        pieceStart = offset - 1; // the closing `}`
        continue;
      }
      step();
    }
    if (i >= chars.length) { resume(start, 1); return; }
    step(); // closing quote
    skipped.push({ kind: 'string', start: pieceStart, end: offset });
  };

  const lexIdent = (): string => {
    let text = '';
    for (;;) {
      if (at() === '«') {
        while (i < chars.length && at() !== '»') { text += at(); step(); }
        if (at() === '»') { text += '»'; step(); }
      } else {
        while (isIdentRest(at())) { text += at(); step(); }
      }
      if (at() === '.' && (isIdentStart(at(1)) || at(1) === '«')) { text += '.'; step(); continue; }
      return text;
    }
  };

  // Lexes tokens until the `}` that closes the current interpolation (or the end).
  function lexCodeUntilBrace(): void {
    let depth = 0;
    while (i < chars.length) {
      if (at() === '}' && depth === 0) { step(); return; }
      if (at() === '{') depth++;
      if (at() === '}') depth--;
      lexOne();
    }
  }

  // Lean's number literals: 0x…, 0b…, 0o…, or decimal with an optional fraction and exponent.
  // (Read exactly, so `1builtin_initialize` is the number 1 and then a command, as Lean reads it.)
  function lexNumber(): void {
    const digits = (re: RegExp): void => { while (at() !== undefined && re.test(at() as string)) step(); };
    const radix = at() === '0' ? at(1) : undefined;
    if (radix === 'x' || radix === 'X') { step(); step(); digits(/[0-9a-fA-F_]/); return; }
    if (radix === 'b' || radix === 'B') { step(); step(); digits(/[01_]/); return; }
    if (radix === 'o' || radix === 'O') { step(); step(); digits(/[0-7_]/); return; }
    digits(/[0-9_]/);
    if (at() === '.' && /[0-9]/.test(at(1) ?? '')) { step(); digits(/[0-9_]/); }
    if ((at() === 'e' || at() === 'E') && /[0-9+-]/.test(at(1) ?? '')) { step(); if (at() === '+' || at() === '-') step(); digits(/[0-9_]/); }
  }

  function lexOne(): void {
    const c = at() as string;
    const l = line, col = column;
    if (c === '-' && at(1) === '-') {
      const from = offset;
      while (i < chars.length && at() !== '\n') step();
      skipped.push({ kind: 'comment', start: from, end: offset });
      return;
    }
    if (c === '/' && at(1) === '-') { skipBlockComment(); return; }
    if (c === '"') { lexString(tokens.length > 0 && tokens[tokens.length - 1].text === '!' && tokens[tokens.length - 1].endColumn === column); return; }
    if (c === "'" && !(tokens.length && tokens[tokens.length - 1].endLine === line && tokens[tokens.length - 1].endColumn === column && tokens[tokens.length - 1].kind === 'ident')) {
      // char literal 'x' or '\n' / '\x41' / '\u{..}'
      const m = /^'(\\[\\"'nrt]|\\x[0-9a-fA-F]{2}|\\u[0-9a-fA-F]{4}|[^\\'\n])'/u.exec(chars.slice(i, i + 12).join(''));
      if (m) {
        const from = offset;
        for (let k = 0; k < Array.from(m[0]).length; k++) step();
        skipped.push({ kind: 'char', start: from, end: offset });
        return;
      }
    }
    if (c === '#' && isIdentStart(at(1))) { step(); push('command', '#' + lexIdent(), l, col); return; }
    if (c === '`') {
      step(); if (at() === '`') step();
      if (isIdentStart(at()) || at() === '«') { push('name', lexIdent(), l, col); }
      return;
    }
    if (isIdentStart(c) || c === '«') {
      const text = lexIdent();
      // `s!"…"`, `m!"…"`: the `!` belongs to the identifier lexically; split it off before a string.
      if (text.endsWith('!') && at() === '"') {
        tokens.push({ kind: 'ident', text: text.slice(0, -1), line: l, column: col, endLine: line, endColumn: column - 1 });
        tokens.push({ kind: 'symbol', text: '!', line, column: column - 1, endLine: line, endColumn: column });
        return;
      }
      push('ident', text, l, col);
      return;
    }
    if (/[0-9]/.test(c)) { lexNumber(); push('number', '', l, col); return; }
    if (/\s/u.test(c)) { step(); return; }
    if (c === '@' && at(1) === '[') { step(); step(); push('symbol', '@[', l, col); return; }
    if (c === ':' && at(1) === '=') { step(); step(); push('symbol', ':=', l, col); return; }
    step();
    push('symbol', c, l, col);
  }

  while (i < chars.length) lexOne();
  return tokens;
}
