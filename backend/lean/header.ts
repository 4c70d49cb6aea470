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

/** A column edit made to the body before Lean saw it (e.g. `example` renamed): undone on positions. */
export interface ColumnEdit { line: number; column: number; delta: number }

function movePos(pos: ReplPos, lineOffset: number, edits: readonly ColumnEdit[]): ReplPos {
  let column = pos.column;
  for (const e of edits) if (e.line === pos.line && pos.column > e.column) column = Math.max(e.column, column - e.delta);
  return { line: pos.line + lineOffset, column };
}

/** Shifts every message and sorry position of a body response by `lineOffset` lines, undoing `edits`. */
export function rebaseResponse(response: CommandResponse, lineOffset: number, edits: readonly ColumnEdit[] = []): CommandResponse {
  const out: CommandResponse = { ...response };
  if (response.messages) {
    out.messages = response.messages.map((m): ReplMessage => ({
      ...m, pos: movePos(m.pos, lineOffset, edits), endPos: m.endPos ? movePos(m.endPos, lineOffset, edits) : m.endPos,
    }));
  }
  if (response.sorries) {
    out.sorries = response.sorries.map((s): ReplSorry => ({
      ...s,
      ...(s.pos ? { pos: movePos(s.pos, lineOffset, edits) } : {}),
      ...(s.endPos ? { endPos: movePos(s.endPos, lineOffset, edits) } : {}),
    }));
  }
  return out;
}
