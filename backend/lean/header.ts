// Splitting a snippet into its import header and its body (kimina-lean-server's rule), and moving
// the REPL's body-relative positions back to the full snippet the caller sent.
import type { CommandResponse, ReplMessage, ReplPos, ReplSorry } from '../protocol';

export interface SplitSnippet {
  /** Normalised header: one `import` per line; every `import Mathlib…` collapsed into `import Mathlib`. */
  header: string;
  /** Everything after the header, verbatim. */
  body: string;
  /** Lines of the original snippet that precede the body. */
  headerLines: number;
}

/**
 * The header is the leading run of lines that are blank or start with `import ` (after trimming).
 * Unlike kimina-lean-server, an import-free snippet gets the empty header: the pool still sends it as
 * its own first command, so every body runs on a fresh environment.
 */
export function splitHeader(code: string): SplitSnippet {
  const lines = code.split('\n');
  let n = 0;
  const imports: string[] = [];
  for (; n < lines.length; n++) {
    const t = lines[n].trim();
    if (t === '') continue;
    if (!t.startsWith('import ')) break;
    for (const module of t.slice('import '.length).trim().split(/\s+/)) {
      const normal = module === 'Mathlib' || module.startsWith('Mathlib.') ? 'Mathlib' : module;
      if (!imports.includes(normal)) imports.push(normal);
    }
  }
  return { header: imports.map((m) => `import ${m}`).join('\n'), body: lines.slice(n).join('\n'), headerLines: n };
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
 * the module the message names (`unknown module prefix 'Bogus'` names `Bogus.Thing`), else the module
 * on the message's line of the normalised header (the collapsed `import Mathlib` stands for any
 * `Mathlib…`); failing both, the user's first import line.
 */
export function placeHeaderMessages(messages: readonly ReplMessage[], code: string): ReplMessage[] {
  const { header, headerLines } = splitHeader(code);
  const normal = header.split('\n');
  const imports: { line: number; column: number; module: string }[] = [];
  code
    .split('\n')
    .slice(0, headerLines)
    .forEach((text, i) => {
      if (!text.trim().startsWith('import ')) return;
      const re = /\S+/g;
      for (let w = re.exec(text); w; w = re.exec(text)) {
        if (w[0] !== 'import')
          imports.push({ line: i + 1, column: Array.from(text.slice(0, w.index)).length, module: w[0] });
      }
    });
  const at = (m: ReplMessage, i: (typeof imports)[number]): ReplMessage => ({
    ...m,
    pos: { line: i.line, column: i.column },
    endPos: { line: i.line, column: i.column + Array.from(i.module).length },
  });
  return messages.map((m) => {
    const named = imports.find(
      (i) =>
        m.data.includes(`'${i.module}'`) ||
        m.data.includes(`'${i.module.split('.')[0]}'`) ||
        m.data.includes(`\`${i.module}\``),
    );
    if (named) return at(m, named);
    const module = normal[m.pos.line - 1]?.slice('import '.length) ?? '';
    const same = imports.find((i) => i.module === module || (module === 'Mathlib' && i.module.startsWith('Mathlib.')));
    if (same) return at(m, same);
    return { ...m, pos: { line: imports[0]?.line ?? 1, column: 0 }, endPos: null };
  });
}
