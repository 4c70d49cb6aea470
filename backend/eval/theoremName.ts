// Finds the theorem to prove in a benchmark file: the first `theorem`/`lemma`, as the one Lean source reader
// (lean/declarations.ts, lean/source/) finds it, so a benchmark is loaded the way every other path reads it.
import { findDeclarations } from '../lean/declarations';

/** The first theorem or lemma name, or null when the text declares none. */
export function firstTheoremName(source: string): string | null {
  const first = findDeclarations(source).find((d) => (d.kind === 'theorem' || d.kind === 'lemma') && d.name !== '');
  return first ? first.name : null;
}
