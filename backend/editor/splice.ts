// Builds the edits that put a verified proof into the user's file: the whole proof of a declaration,
// or one `sorry` replaced by the proof of its goal, indented so that Lean parses it in place.
import type { ProofEdit } from '../protocol';
import { type Declaration, type SorrySite, positionAt } from './leanSource';

/** Drops leading/trailing blank lines and the indentation all remaining lines share. */
export function dedent(text: string): string[] {
  const lines = text.replace(/\r\n/g, '\n').split('\n');
  while (lines.length && lines[0].trim() === '') lines.shift();
  while (lines.length && lines[lines.length - 1].trim() === '') lines.pop();
  const widths = lines.filter((l) => l.trim() !== '').map((l) => l.length - l.trimStart().length);
  const common = widths.length ? Math.min(...widths) : 0;
  return lines.map((l) => (l.trim() === '' ? '' : l.slice(common).trimEnd()));
}

/** The proof text after the statement's `:=` (with a leading `by` dropped) in a checked snippet. */
export function proofBodyOf(code: string, decl: Declaration): string | null {
  if (decl.statementEnd === null) return null;
  const body = code.slice(decl.statementEnd, decl.end).replace(/^\s*by(?=\s)/, '');
  return body.trim() === '' ? null : body;
}

function indentLines(lines: string[], indent: string, firstToo: boolean): string {
  return lines.map((l, i) => (l === '' ? '' : i === 0 && !firstToo ? l : indent + l)).join('\n');
}

/** Replaces everything after the statement's `:=` with `by` and the proof, one indent step in from the declaration. */
export function theoremEdit(text: string, decl: Declaration, tactics: string): { edit: ProofEdit; newText: string } {
  if (decl.statementEnd === null) throw new Error(`'${decl.name}' has no ':=' to put a proof after`);
  const lines = dedent(tactics);
  if (lines.length === 0) throw new Error('the proof is empty');
  const replacement = ' by\n' + indentLines(lines, ' '.repeat(decl.indent + 2), true);
  const edit = {
    range: { start: positionAt(text, decl.statementEnd), end: positionAt(text, decl.end) },
    newText: replacement,
  };
  return { edit, newText: text.slice(0, decl.statementEnd) + replacement + text.slice(decl.end) };
}

/**
 * Replaces one `sorry` with a proof of its goal. In tactic position the tactics go in place, later lines
 * aligned under the first (Lean's tactic blocks are column-based); in term position they go in `(by …)`.
 */
export function sorryEdit(text: string, sorry: SorrySite, tactics: string): { edit: ProofEdit; newText: string } {
  const lines = dedent(tactics);
  if (lines.length === 0) throw new Error('the proof is empty');
  const lineStart = sorry.offset - sorry.character;
  const column = Array.from(text.slice(lineStart, sorry.offset)).length;
  let replacement: string;
  if (sorry.position === 'tactic') {
    replacement = indentLines(lines, ' '.repeat(column), false);
  } else if (lines.length === 1) {
    replacement = `(by ${lines[0]})`;
  } else {
    const lineIndent = text.slice(lineStart).length - text.slice(lineStart).trimStart().length;
    replacement = '(by\n' + indentLines(lines, ' '.repeat(lineIndent + 4), true) + ')';
  }
  const start = positionAt(text, sorry.offset);
  const edit = { range: { start, end: { line: start.line, character: start.character + 5 } }, newText: replacement };
  return { edit, newText: text.slice(0, sorry.offset) + replacement + text.slice(sorry.offset + 5) };
}

/** Applies an edit to text (used to re-check the spliced declaration and in tests). */
export function applyEdit(
  text: string,
  edit: ProofEdit,
  offsetOf: (line: number, character: number) => number,
): string {
  const from = offsetOf(edit.range.start.line, edit.range.start.character);
  const to = offsetOf(edit.range.end.line, edit.range.end.character);
  return text.slice(0, from) + edit.newText + text.slice(to);
}
