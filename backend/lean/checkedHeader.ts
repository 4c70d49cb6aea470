// What the verifier sends to Lean for a file's header, by who wrote the file:
// - the user's file (`UserSource`): its header exactly as written (`module`, `prelude`, `public`/`meta`/`all`
//   imports, one module per `import`), comments left out: Lean's header means only those words;
// - a snippet nobody vouches for: the same header with every `Mathlib…` import collapsed into `Mathlib`, as
//   kimina-lean-server does, so snippets share warm REPLs.
// The header command is rebuilt from the module names (never the text between them), so nothing in a header
// comment reaches Lean. The body is the rest of the file from the line of its first command, that line's
// header part (if any) blanked, so line N of the body is line N + headerLines of the file.
import type { ReplMessage } from '../protocol';
import { lexLeanFull } from './lexer';

export interface HeaderImportWords {
  module: string;
  public: boolean;
  meta: boolean;
  all: boolean;
}

export interface CheckedHeader {
  /** The env-less first command (also the pool's key): the header rebuilt, one import per line. */
  command: string;
  body: string;
  /** File lines before the body's first line. */
  headerLines: number;
  isModule: boolean;
  imports: HeaderImportWords[];
}

/** The header as Lean's `Parser.Module.header` reads it: `module`? `prelude`? (`public`? `meta`? `import` `all`? Name)*. */
export interface HeaderWords {
  module: boolean;
  prelude: boolean;
  imports: HeaderImportWords[];
  /** Line (1-based) and codepoint column where the first command (or doc comment) starts; past the end when none. */
  bodyLine: number;
  bodyColumn: number;
  /** The last line the header's words or the comments glued to them reach (0 without a header). */
  lastLine: number;
}

/**
 * Reads the header with the one lexer (comments and strings skipped as Lean skips them). A doc comment ends the
 * header, as in Lean (`/--` and `/-!` are tokens, not whitespace). `public section` / `meta def` after the imports
 * are the body's first command (the grammar's `atomic`).
 */
export function readHeaderWords(code: string): HeaderWords {
  const { tokens, trivia } = lexLeanFull(code);
  const lineOf = lineIndex(code);
  // a doc comment, a string or a char literal is a token to Lean's parser: the header ends there
  const firstDoc = trivia.find((t) => t.kind !== 'comment');
  const docAt = firstDoc ? lineOf(firstDoc.start) : undefined;
  const beforeDoc = (i: number): boolean =>
    tokens[i] !== undefined &&
    !tokens[i].quoted &&
    (docAt === undefined ||
      tokens[i].line < docAt.line ||
      (tokens[i].line === docAt.line && tokens[i].column < docAt.column));
  let k = 0;
  const words: HeaderWords = { module: false, prelude: false, imports: [], bodyLine: 0, bodyColumn: 0, lastLine: 0 };
  if (beforeDoc(k) && tokens[k].text === 'module') {
    words.module = true;
    k++;
  }
  if (beforeDoc(k) && tokens[k].text === 'prelude') {
    words.prelude = true;
    k++;
  }
  for (;;) {
    let j = k;
    const mods = { public: false, meta: false };
    if (beforeDoc(j) && tokens[j].text === 'public') ((mods.public = true), j++);
    if (beforeDoc(j) && tokens[j].text === 'meta') ((mods.meta = true), j++);
    if (!beforeDoc(j) || tokens[j].text !== 'import') break;
    j++;
    let all = false;
    if (beforeDoc(j) && tokens[j].text === 'all' && beforeDoc(j + 1) && tokens[j + 1].kind === 'ident') {
      all = true;
      j++;
    }
    if (!beforeDoc(j) || tokens[j].kind !== 'ident') break; // `import` without a name: the body's (Lean's error)
    words.imports.push({ module: tokens[j].text, ...mods, all });
    k = j + 1;
  }
  // the header's last line, stretched over comments that start on it and end lower down
  let last = k > 0 ? tokens[k - 1].endLine : 0;
  for (const c of trivia) {
    if (c.kind !== 'comment') continue;
    const from = lineOf(c.start).line;
    if (from > last) break;
    last = Math.max(last, lineOf(c.end).line);
  }
  words.lastLine = last;
  const next = beforeDoc(k) ? tokens[k] : undefined;
  const at = next ? { line: next.line, column: next.column } : docAt;
  words.bodyLine = at?.line ?? code.split('\n').length + 1;
  words.bodyColumn = at?.column ?? 0;
  return words;
}

function rebuild(words: HeaderWords, modules: HeaderImportWords[]): string {
  const lines: string[] = [];
  if (words.module) lines.push('module');
  if (words.prelude) lines.push('prelude');
  for (const i of modules)
    lines.push(`${i.public ? 'public ' : ''}${i.meta ? 'meta ' : ''}import ${i.all ? 'all ' : ''}${i.module}`);
  return lines.join('\n');
}

function split(code: string, words: HeaderWords, modules: HeaderImportWords[]): CheckedHeader {
  const lines = code.split('\n');
  // the header's lines, then the blank lines after them (kimina-lean-server's split keeps those in the header too)
  let headerLines = Math.min(words.lastLine, lines.length);
  while (headerLines < lines.length && headerLines + 1 < words.bodyLine && lines[headerLines].trim() === '')
    headerLines++;
  const shared = words.bodyLine <= headerLines;
  if (shared) headerLines = words.bodyLine - 1;
  const body = lines.slice(headerLines);
  if (body.length > 0 && shared && words.bodyColumn > 0) {
    // the first command shares its line with the header's end: blank the header's part, keep the columns
    const chars = Array.from(body[0]);
    body[0] = ' '.repeat(words.bodyColumn) + chars.slice(words.bodyColumn).join('');
  }
  return {
    command: rebuild(words, modules),
    body: body.join('\n'),
    headerLines,
    isModule: words.module,
    imports: modules,
  };
}

/** The user's file: its header exactly (comments aside). */
export function userHeader(code: string): CheckedHeader {
  const words = readHeaderWords(code);
  return split(code, words, words.imports);
}

/** A snippet nobody vouches for: `Mathlib…` imports collapsed into one `import Mathlib` (same modifiers as the first). */
export function snippetHeader(code: string): CheckedHeader {
  const words = readHeaderWords(code);
  const modules: HeaderImportWords[] = [];
  for (const i of words.imports) {
    const m = i.module === 'Mathlib' || i.module.startsWith('Mathlib.') ? { ...i, module: 'Mathlib', all: false } : i;
    if (!modules.some((o) => o.module === m.module)) modules.push(m);
  }
  return split(code, words, modules);
}

/** UTF-16 offset → 1-based line and codepoint column. */
function lineIndex(code: string): (offset: number) => { line: number; column: number } {
  const starts = [0];
  for (let i = 0; i < code.length; i++) if (code[i] === '\n') starts.push(i + 1);
  return (offset) => {
    let lo = 0,
      hi = starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (starts[mid] <= offset) lo = mid;
      else hi = mid - 1;
    }
    return { line: lo + 1, column: Array.from(code.slice(starts[lo], offset)).length };
  };
}

/**
 * Places messages Lean gave on the rebuilt header command at the file's own import: the one whose module the message
 * names (`unknown module prefix 'Bogus'` names `Bogus.Thing`), else the import on the message's line of the rebuilt
 * header (the collapsed `import Mathlib` stands for any `Mathlib…`), else the file's first line.
 */
export function placeCheckedHeaderMessages(
  messages: readonly ReplMessage[],
  code: string,
  header: CheckedHeader,
): ReplMessage[] {
  const written: { line: number; column: number; module: string }[] = [];
  code
    .split('\n')
    .slice(0, header.headerLines)
    .forEach((text, i) => {
      const re = /\bimport\s+(?:all\s+)?([^\s/-][^\s]*)/g;
      for (let m = re.exec(text); m; m = re.exec(text)) {
        const column = Array.from(text.slice(0, m.index + m[0].length - m[1].length)).length;
        written.push({ line: i + 1, column, module: m[1] });
      }
    });
  const rebuilt = header.command.split('\n');
  const at = (m: ReplMessage, w: (typeof written)[number]): ReplMessage => ({
    ...m,
    pos: { line: w.line, column: w.column },
    endPos: { line: w.line, column: w.column + Array.from(w.module).length },
  });
  return messages.map((m) => {
    const named = written.find(
      (w) =>
        m.data.includes(`'${w.module}'`) ||
        m.data.includes(`'${w.module.split('.')[0]}'`) ||
        m.data.includes(`\`${w.module}\``),
    );
    if (named) return at(m, named);
    const module = /import (?:all )?(\S+)$/.exec(rebuilt[m.pos.line - 1] ?? '')?.[1] ?? '';
    const same = written.find((w) => w.module === module || (module === 'Mathlib' && w.module.startsWith('Mathlib.')));
    if (same) return at(m, same);
    return { ...m, pos: { line: written[0]?.line ?? 1, column: 0 }, endPos: null };
  });
}
