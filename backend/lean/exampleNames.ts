// `example` declarations have no name, so `#print axioms` cannot reach them. Policy: before Lean
// sees the body, each `example` keyword becomes `theorem kimina_example_<n>`; the column shift this
// makes on that line is undone on every position Lean reports (see rebaseResponse).
import type { ColumnEdit } from './header';
import { lexLean } from './lexer';

export interface NamedExamples { body: string; edits: ColumnEdit[] }

export function nameExamples(body: string): NamedExamples {
  const examples = lexLean(body).filter((t) => t.kind === 'ident' && t.text === 'example');
  if (examples.length === 0) return { body, edits: [] };
  const lines = body.split('\n');
  const edits: ColumnEdit[] = [];
  // right to left within a line keeps earlier columns valid
  const ordered = [...examples].sort((a, b) => a.line - b.line || b.column - a.column);
  const numbers = new Map(examples.map((t, i) => [t, i + 1]));
  for (const t of ordered) {
    const chars = Array.from(lines[t.line - 1]);
    const replacement = `theorem kimina_example_${numbers.get(t)}`;
    chars.splice(t.column, 'example'.length, replacement);
    lines[t.line - 1] = chars.join('');
    edits.push({ line: t.line, column: t.column, delta: Array.from(replacement).length - 'example'.length });
  }
  // edits on one line must be undone right to left as well: sort by column descending
  edits.sort((a, b) => a.line - b.line || b.column - a.column);
  return { body: lines.join('\n'), edits };
}
