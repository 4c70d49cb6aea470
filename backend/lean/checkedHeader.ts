// What the verifier sends to Lean for a file's header, by who wrote the file:
// - the user's file (`UserSource`): its header exactly as written (`module`, `prelude`, `public`/`meta`/`all`
//   imports, one module per `import`), comments left out: Lean's header means only those words;
// - a snippet nobody vouches for: the same header with every `Mathlib…` import collapsed into `Mathlib`, as
//   kimina-lean-server does, so snippets share warm REPLs.
// The header command is rebuilt from the module names (never the text between them), so nothing in a header
// comment reaches Lean. Header and body are split by the one reader (header.ts `splitHeader`): line N of the body
// is line N + headerLines of the file.
import type { ReplMessage } from '../protocol';
import { splitHeader } from './header';

interface HeaderImportWords {
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

function checked(code: string, collapseMathlib: boolean): CheckedHeader {
  const split = splitHeader(code, { collapseMathlib });
  return {
    command: split.header,
    body: split.body,
    headerLines: split.headerLines,
    isModule: split.read.module,
    imports: split.read.imports.map((i) => ({ module: i.module, public: i.public, meta: i.meta, all: i.all })),
  };
}

/** The user's file: its header exactly (comments aside). */
export function userHeader(code: string): CheckedHeader {
  return checked(code, false);
}

/** A snippet nobody vouches for: plain `Mathlib…` imports collapsed into one `import Mathlib` (header.ts). */
export function snippetHeader(code: string): CheckedHeader {
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
