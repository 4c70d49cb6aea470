// Splitting a snippet into its header (as Lean's parser reads it: source/moduleHeader.ts) and its body, and moving
// the REPL's body-relative positions back to the full snippet the caller sent.
import type { CommandResponse, ReplMessage, ReplPos, ReplSorry } from '../protocol';
import { type HeaderImport, type ModuleHeader, importLine, readHeader } from './source/moduleHeader';

export interface SplitSnippet {
  /**
   * The header as Lean reads it (readHeader, source/moduleHeader.ts), one item per line: `module`, `prelude`, then
   * each import with its flags. With `collapseMathlib` (the default: the pool reuses REPLs per header, as
   * kimina-lean-server does), the plain `import Mathlib…` lines of a non-module header become one `import Mathlib`;
   * repeated imports are dropped.
   */
  header: string;
  /**
   * Everything after the header, from the first non-blank line after its last token (comments after the imports stay
   * in the body); where the header's last line goes on with code or a block comment, from Lean's own body start with
   * what precedes it on its line blanked (one space per codepoint). Lines and columns of the body are those of the
   * snippet minus `headerLines`.
   */
  body: string;
  /** Lines of the original snippet that precede the body's first line. */
  headerLines: number;
  /** The header as read, with positions in the original snippet. */
  read: ModuleHeader;
  /** Per line of `header`, the imports of the snippet it stands for (empty for `module` and `prelude`). */
  sources: HeaderImport[][];
}

const isMathlib = (module: string): boolean => module === 'Mathlib' || module.startsWith('Mathlib.');

/**
 * Splits a snippet into its header (Lean's header grammar: comments, `module`, `prelude`, `public`/`meta`/`all`
 * imports) and its body. An import-free snippet gets the empty header: the pool still sends it as its own first
 * command, so every body runs on a fresh environment.
 */
export function splitHeader(code: string, options: { collapseMathlib?: boolean } = {}): SplitSnippet {
  const read = readHeader(code);
  const collapse = (options.collapseMathlib ?? true) && !read.module;
  const lines: string[] = [];
  const sources: HeaderImport[][] = [];
  if (read.module) {
    lines.push('module');
    sources.push([]);
  }
  if (read.prelude) {
    lines.push('prelude');
    sources.push([]);
  }
  for (const i of read.imports) {
    const plain = !i.public && !i.meta && !i.all;
    const line = collapse && plain && isMathlib(i.module) ? 'import Mathlib' : importLine(i);
    const k = lines.indexOf(line);
    if (k >= 0) sources[k].push(i);
    else {
      lines.push(line);
      sources.push([i]);
    }
  }
  // The body starts at the first non-blank line after the header's last token, comments there included (as
  // kimina-lean-server sends them), unless something else stands on that token's line or a block comment runs past
  // it: then at Lean's own body start, the rest of its line blanked.
  const headerEnd = read.module || read.prelude || read.imports.length > 0 ? read.end : null;
  let headerLines: number;
  let body: string;
  const eol = headerEnd ? code.indexOf('\n', headerEnd.offset) : -1;
  const restOfLine = headerEnd ? code.slice(headerEnd.offset, eol < 0 ? code.length : eol).trim() : '';
  if (!headerEnd) {
    headerLines = 0;
    body = code;
  } else if (read.bodyStart.line > headerEnd.line && (restOfLine === '' || restOfLine.startsWith('--'))) {
    // blank lines after the header belong to it, as in kimina-lean-server's split (the recipe's line numbers)
    headerLines = headerEnd.line;
    let from = eol < 0 ? code.length : eol + 1;
    for (
      let next = code.indexOf('\n', from);
      next >= 0 && code.slice(from, next).trim() === '';
      next = code.indexOf('\n', from)
    ) {
      headerLines++;
      from = next + 1;
    }
    if (code.slice(from).trim() === '') from = code.length;
    body = code.slice(from);
  } else {
    headerLines = read.bodyStart.line - 1;
    body = ' '.repeat(read.bodyStart.column) + code.slice(read.bodyStart.offset);
  }
  return { header: lines.join('\n'), body, headerLines, read, sources };
}

function movePos(pos: ReplPos, lineOffset: number): ReplPos {
  return { line: pos.line + lineOffset, column: pos.column };
}

/** Shifts every message and sorry position of a body response by `lineOffset` lines (Lean saw the body unchanged). */
export function rebaseResponse(response: CommandResponse, lineOffset: number): CommandResponse {
  const out: CommandResponse = { ...response };
  if (response.messages) {
    out.messages = response.messages.map((m): ReplMessage => ({
      ...m,
      pos: movePos(m.pos, lineOffset),
      endPos: m.endPos ? movePos(m.endPos, lineOffset) : m.endPos,
    }));
  }
  if (response.sorries) {
    out.sorries = response.sorries.map((s): ReplSorry => ({
      ...s,
      ...(s.pos ? { pos: movePos(s.pos, lineOffset) } : {}),
      ...(s.endPos ? { endPos: movePos(s.endPos, lineOffset) } : {}),
    }));
  }
  return out;
}

/**
 * Places messages Lean gave on the normalised header (`header` of splitHeader) at the user's own import:
 * the module the message names (`unknown module prefix 'Bogus'` names `Bogus.Thing`), else the import(s) the
 * message's line of the normalised header stands for (the collapsed `import Mathlib` stands for any `Mathlib…`);
 * failing both, the user's first import.
 */
export function placeHeaderMessages(messages: readonly ReplMessage[], code: string): ReplMessage[] {
  const { read, sources } = splitHeader(code);
  const imports = read.imports;
  const at = (m: ReplMessage, i: HeaderImport): ReplMessage => ({
    ...m,
    pos: { line: i.moduleStart.line, column: i.moduleStart.column },
    endPos: { line: i.moduleEnd.line, column: i.moduleEnd.column },
  });
  return messages.map((m) => {
    const named = imports.find(
      (i) =>
        m.data.includes(`'${i.module}'`) ||
        m.data.includes(`'${i.module.split('.')[0]}'`) ||
        m.data.includes(`\`${i.module}\``),
    );
    if (named) return at(m, named);
    const same = sources[m.pos.line - 1]?.[0];
    if (same) return at(m, same);
    return { ...m, pos: { line: imports[0]?.moduleStart.line ?? 1, column: 0 }, endPos: null };
  });
}
