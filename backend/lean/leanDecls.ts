// Finds the theorem-like declarations of a snippet (full names, with namespaces) from its tokens,
// for the axiom audit and per-declaration verdicts.
import { lexLean, type Token } from './lexer';

export type DeclKind = 'theorem' | 'lemma' | 'example' | 'def' | 'abbrev' | 'instance' | 'axiom' | 'opaque';
export interface FoundDecl {
  kind: DeclKind;
  /** Full name (namespace included); for `example`, empty. */
  name: string;
  /** Position of the keyword (1-based line, codepoint column). */
  line: number;
  column: number;
}

const declKinds = new Set<string>(['theorem', 'lemma', 'example', 'def', 'abbrev', 'instance', 'axiom', 'opaque']);

export function findLeanDecls(source: string, tokens: Token[] = lexLean(source)): FoundDecl[] {
  const scopes: { kind: 'namespace' | 'section'; name: string }[] = [];
  const out: FoundDecl[] = [];
  const prefix = (): string => scopes.filter((s) => s.kind === 'namespace').map((s) => s.name + '.').join('');
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind !== 'ident') continue;
    const next = tokens[k + 1];
    if (t.text === 'namespace' && next?.kind === 'ident') { scopes.push({ kind: 'namespace', name: next.text }); k++; continue; }
    if (t.text === 'section') {
      const named = next?.kind === 'ident' && next.line === t.line;
      scopes.push({ kind: 'section', name: named ? next.text : '' });
      if (named) k++;
      continue;
    }
    if (t.text === 'end') {
      const named = next?.kind === 'ident' && next.line === t.line ? next.text : '';
      // `end A.B` closes the namespaces A and B opened as `namespace A.B` (one scope entry here)
      if (scopes.length) scopes.pop();
      if (named) k++;
      continue;
    }
    if (!declKinds.has(t.text)) continue;
    const kind = t.text as DeclKind;
    let name = '';
    if (kind !== 'example' && next?.kind === 'ident' && !declKinds.has(next.text)) {
      name = next.text.startsWith('_root_.') ? next.text.slice('_root_.'.length) : prefix() + next.text;
      k++;
    }
    out.push({ kind, name, line: t.line, column: t.column });
  }
  return out;
}
