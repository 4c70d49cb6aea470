// Which section `variable`s a theorem's statement gains, as Lean elaborates it. Since Lean v4.11 (the `include`
// command, leanprover/lean4 #4814) a theorem takes a section variable when its statement (signature) names it, or
// when `include x` is in force for it (until `omit x` or the end of its section or namespace); instance binders
// whose type names a taken variable come along (not followed here). A variable taken by `include` that the written
// statement never names is a hypothesis the reader of the statement cannot see: the theorem proves `h → P`, not `P`.
// Read from the source: the scope commands in column 0 (`section`, `namespace`, `end`, `variable`, `include`,
// `omit`) with comments and strings masked.
import { findDeclarations, maskLean, type Declaration } from '../lean/declarations';

interface SectionBinder {
  name: string;
  /** The binder as written, e.g. `(h : 1 = 2)`. */
  text: string;
}

export interface Gained {
  /** Every section variable the statement takes, in the order the variables were declared. */
  binders: SectionBinder[];
  /** Those taken only because of `include` (the written statement does not name them). */
  hidden: SectionBinder[];
  /** The statement (to its `:=`, which is left out) with the taken variables as binders after the name. */
  elaborated: string;
}

interface Scope {
  vars: SectionBinder[];
  included: Set<string>;
}

const OPEN = '({[⦃';
const CLOSE: Record<string, string> = { '(': ')', '{': '}', '[': ']', '⦃': '⦄' };

/** The bracketed binders of a `variable` command's text (masked), each with its names. */
function binderGroups(text: string, original: string): SectionBinder[] {
  const out: SectionBinder[] = [];
  let i = 0;
  while (i < text.length) {
    const open = text[i];
    if (!OPEN.includes(open)) {
      i++;
      continue;
    }
    let depth = 0;
    let j = i;
    for (; j < text.length; j++) {
      if (OPEN.includes(text[j])) depth++;
      else if (')}]⦄'.includes(text[j])) depth--;
      if (depth === 0) break;
    }
    const inner = text.slice(i + 1, j);
    const colon = inner.indexOf(':');
    // `(x)` (changing a binder's kind) and anonymous instance binders `[Foo α]` declare no name of their own
    if (colon >= 0 && text[j] === CLOSE[open]) {
      const names = inner.slice(0, colon).trim().split(/\s+/).filter(Boolean);
      const type = original.slice(i + 1 + colon + 1, j).trim();
      for (const name of names) out.push({ name, text: `${open}${name} : ${type}${CLOSE[open]}` });
    }
    i = j + 1;
  }
  return out;
}

/** Identifier-ish words of a masked text. */
function words(text: string): Set<string> {
  return new Set(text.match(/[\p{L}_][\p{L}\p{N}_'!?.₀-₉]*/gu) ?? []);
}

/** Per theorem/lemma of `source` (keyed by its start offset): what its statement gains from section variables. */
export function gainedVariables(source: string): Map<number, Gained> {
  const masked = maskLean(source).text;
  const decls = findDeclarations(source);
  const lines = masked.split('\n');
  const scopes: Scope[] = [{ vars: [], included: new Set() }];
  const out = new Map<number, Gained>();
  let offset = 0;
  let d = 0;
  const visit = (upTo: number) => {
    for (; d < decls.length && decls[d].start.offset < upTo; d++) record(decls[d]);
  };
  const record = (decl: Declaration) => {
    if (decl.kind !== 'theorem' && decl.kind !== 'lemma') return;
    const vars = scopes.flatMap((s) => s.vars);
    if (vars.length === 0) return;
    const included = new Set(scopes.flatMap((s) => [...s.included]));
    const sigEnd = decl.signatureEnd?.offset ?? decl.end.offset;
    const named = words(masked.slice(decl.head.offset, sigEnd));
    const binders = vars.filter((v) => named.has(v.name) || included.has(v.name));
    if (binders.length === 0) return;
    const hidden = binders.filter((v) => !named.has(v.name));
    const statement = decl.statement.trim().replace(/\s*:=\s*(by)?$/, '');
    const at = decl.name ? statement.indexOf(decl.name) : -1;
    const elaborated =
      at >= 0
        ? `${statement.slice(0, at + decl.name.length)} ${binders.map((b) => b.text).join(' ')}${statement.slice(at + decl.name.length)}`
        : `${binders.map((b) => b.text).join(' ')} ${statement}`;
    out.set(decl.start.offset, { binders, hidden, elaborated });
  };
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n];
    const start = offset;
    offset += line.length + 1;
    const m = /^(section|namespace|end|variable|include|omit)(?![\p{L}\p{N}_'])(.*)$/u.exec(line);
    if (!m) continue;
    visit(start);
    const [, cmd, rest] = m;
    if (cmd === 'section' || cmd === 'namespace') {
      // `namespace A.B` opens two scopes, `end B` closes one (Lean's Command.lean); one is enough for variables
      const depth = cmd === 'namespace' ? Math.max(1, rest.trim().split('.').length) : 1;
      for (let k = 0; k < depth; k++) scopes.push({ vars: [], included: new Set() });
    } else if (cmd === 'end') {
      const depth = Math.max(1, rest.trim() ? rest.trim().split('.').length : 1);
      for (let k = 0; k < depth && scopes.length > 1; k++) scopes.pop();
    } else if (cmd === 'variable') {
      // the command runs to the next line that starts in column 0
      let end = n + 1;
      while (end < lines.length && (lines[end].trim() === '' || /^\s/.test(lines[end]))) end++;
      const text = lines.slice(n, end).join('\n').slice('variable'.length);
      const original = source.slice(start + 'variable'.length, start + 'variable'.length + text.length);
      scopes[scopes.length - 1].vars.push(...binderGroups(text, original));
    } else if (cmd === 'include') {
      for (const name of rest.trim().split(/\s+/).filter(Boolean)) scopes[scopes.length - 1].included.add(name);
    } else {
      for (const name of rest.trim().split(/\s+/).filter(Boolean)) for (const s of scopes) s.included.delete(name);
    }
  }
  visit(Number.MAX_SAFE_INTEGER);
  return out;
}
