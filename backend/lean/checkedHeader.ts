// What the verifier sends to Lean for a file's header, by who wrote the file:
// - the user's file (`UserSource`): its header exactly as written (`module`, `prelude`, `public`/`meta`/`all`
//   imports, one module per `import`), comments left out: Lean's header means only those words;
// - a snippet nobody vouches for: the same header with every `Mathlib…` import collapsed into `Mathlib`, as
//   kimina-lean-server does, so snippets share warm REPLs.
// The header command is rebuilt from the module names (never the text between them), so nothing in a header
// comment reaches Lean. The body is the rest of the file from the line of its first command, that line's
// header part (if any) blanked, so line N of the body is line N + headerLines of the file.
import type { ReplMessage } from '../protocol';
import { splitHeader } from './header';
import { lexLeanFull } from './lexer';
import { PositionIndex } from './source/moduleHeader';

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

/** What the header region holds that Lean reads as a token but the header reader skips, or hides across lines. */
export interface HeaderTrap {
  message: string;
  line: number;
  column: number;
}

function checked(code: string, collapseMathlib: boolean): CheckedHeader & { traps: HeaderTrap[] } {
  const split = splitHeader(code, { collapseMathlib });
  const read = split.read;
  const { trivia } = lexLeanFull(code);
  const positions = new PositionIndex(code);
  const lines = code.split('\n');
  // the header's last line, stretched over comments that start on it and end lower down
  const headerEnd = read.imports.length > 0 || read.module || read.prelude ? read.end : undefined;
  let last = headerEnd?.line ?? 0;
  const traps: HeaderTrap[] = [];
  for (const t of trivia) {
    if (t.start >= read.bodyStart.offset) break;
    const from = positions.at(t.start);
    // a string or char literal is a token to Lean's parser (it ends the header there): never skipped as a comment
    if (t.kind === 'string' || t.kind === 'char')
      traps.push({ message: 'a string or character literal in the header', line: from.line, column: from.column });
    const to = positions.at(t.end);
    // a block comment glued to the header's last token and running past its line (`import Mathlib.Tactic/-`)
    if (headerEnd && from.line === headerEnd.line && from.offset >= headerEnd.offset && to.line > from.line)
      traps.push({
        message: 'a comment opened on an import line and running past it',
        line: from.line,
        column: from.column,
      });
    if (from.line <= last) last = Math.max(last, to.line);
  }
  // the header's lines, then the blank lines after them (kimina-lean-server's split keeps those in the header too);
  // comments between the header and the first command stay in the body, as the user wrote them
  let headerLines = Math.min(last, lines.length);
  while (headerLines < lines.length && headerLines + 1 < read.bodyStart.line && lines[headerLines].trim() === '')
    headerLines++;
  const shared = read.bodyStart.line <= headerLines;
  if (shared) headerLines = read.bodyStart.line - 1;
  const body = lines.slice(headerLines);
  if (body.length > 0 && shared && read.bodyStart.column > 0) {
    // the first command shares its line with the header's end: blank the header's part, keep the columns
    body[0] = ' '.repeat(read.bodyStart.column) + Array.from(body[0]).slice(read.bodyStart.column).join('');
  }
  return {
    command: split.header,
    body: body.join('\n'),
    headerLines,
    isModule: read.module,
    imports: read.imports.map((i) => ({ module: i.module, public: i.public, meta: i.meta, all: i.all })),
    traps,
  };
}

/** The user's file: its header exactly (comments aside). */
export function userHeader(code: string): CheckedHeader & { traps: HeaderTrap[] } {
  return checked(code, false);
}

/** A snippet nobody vouches for: plain `Mathlib…` imports collapsed into one `import Mathlib` (header.ts). */
export function snippetHeader(code: string): CheckedHeader & { traps: HeaderTrap[] } {
  return checked(code, true);
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
