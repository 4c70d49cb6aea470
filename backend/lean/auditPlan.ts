// What the axiom audit reads, and how. Every declaration the snippet adds is audited by its full,
// `_root_`-anchored name (namespaces and sections followed from the source; where they cannot be
// followed with certainty, the plan is refused). The caller's trusted names are always audited too.
// Nameless declarations (`example`, anonymous `instance`) cannot be named in `#print axioms`, and the
// text Lean checks must stay the user's: so they are audited on an *audit copy* of the body, in which
// each `example` becomes a `def` (a def, like an example and unlike a theorem, may use any section
// `variable` in its body) and each anonymous instance gets a name. The copy runs as its own command on
// the header's environment; it feeds only the audit, never the verdict's Lean messages.
import { lexLean, type Token } from './lexer';
import { DECL_KINDS } from './source/keywords';
import { sameDeclarationName } from './verdict';

interface AuditCopy {
  /** The body with `noncomputable section` prepended, examples turned into defs and anonymous instances named. */
  body: string;
  /** Full names of the copy's named declarations, in source order. */
  names: string[];
  /** Shown name per copy name: `example (line N)` / `instance (line N)`, N the caller's line. */
  labels: Map<string, string>;
}

interface AuditPlan {
  /** Full names (no `_root_.`) audited on the body's environment: the caller's, then the source's. */
  names: string[];
  copy?: AuditCopy;
  /**
   * With `lenient` (the user's own file): declarations the plan could not name with certainty, each why. Lean still
   * checks them; a check with any can never be valid (the verifier says so).
   */
  uncertain?: string[];
}

export type AuditPlanResult = { ok: true; plan: AuditPlan } | { ok: false; problem: string };

/** Prefix of the names the audit copy gives; a body that already uses it is refused (it could collide). */
const auditCopyPrefix = 'kimina_audit_';

/** The declaration keywords whose declarations carry a name (every one but `example`). */
const NAMED_KINDS: ReadonlySet<string> = new Set([...DECL_KINDS].filter((kind) => kind !== 'example'));
/**
 * Library commands that add declarations under names the plan does not follow (Mathlib's
 * `irreducible_def NAME`, Batteries' `alias NAME := …` / `alias ⟨a, b⟩ := …`): a sorry in one, with the
 * warning silenced, would go unaudited, so a snippet using them is refused.
 */
const UNFOLLOWED_DECLARATION_COMMANDS = new Set(['irreducible_def', 'alias']);

/** Why a declared or namespace name cannot be audited by line, or undefined: line breaks and controls would split the audit command. */
function unsafeName(parts: string[], what: string, rootAllowedFirst: boolean): string | undefined {
  for (const [i, raw] of parts.entries()) {
    const plain = raw.replace(/[«»]/g, '');
    if (plain === '') return `${what} has an empty name component`;
    if (/[\p{Cc}\p{Zl}\p{Zp}]/u.test(plain)) return `${what} holds a line break or control character`;
    if (plain === '_root_' && !(rootAllowedFirst && i === 0))
      return `${what} holds '_root_' where Lean's reading is not certain`;
  }
  return undefined;
}

interface Scope {
  kind: 'namespace' | 'section' | 'mutual';
  name: string;
}

/**
 * Builds the audit plan for `body`; `trusted` are the caller's full names; `lineOffset` turns body lines
 * into the caller's lines in labels and problems.
 */
export function planAudit(
  body: string,
  trusted: readonly string[] = [],
  lineOffset = 0,
  tokens: Token[] = lexLean(body),
  /** Namespaces already open where the body stands (a file session's prefix: `namespaceAtEnd`). */
  outer: readonly string[] = [],
  /** The user's own file: a declaration command the audit does not follow is noted and skipped, not refused. */
  lenient = false,
): AuditPlanResult {
  const uncertain: string[] = [];
  const note = (t: Token, why: string): void => {
    uncertain.push(`line ${t.line + lineOffset}: ${why}`);
  };
  const refuse = (t: Token, why: string): AuditPlanResult => ({
    ok: false,
    problem: `cannot audit with certainty (line ${t.line + lineOffset}): ${why}`,
  });
  const names: string[] = trusted.map((n) => n.replace(/^_root_\./, ''));
  const declared: string[] = [];
  const scopes: Scope[] = outer.map((name) => ({ kind: 'namespace', name }));
  const anonymous: { kind: 'example' | 'instance'; token: Token; insertAfter: Token; prefix: string }[] = [];
  const prefix = (): string =>
    scopes
      .filter((s) => s.kind === 'namespace')
      .map((s) => s.name + '.')
      .join('');
  let attributeDepth = 0;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    const next = tokens[k + 1];
    if (t.kind === 'ident' && t.text.includes(auditCopyPrefix))
      return refuse(t, `the name '${t.text}' is reserved for the audit`);
    if (t.kind === 'symbol') {
      if (t.text === '@[') attributeDepth = 1;
      else if (attributeDepth > 0 && t.text === '[') attributeDepth++;
      else if (attributeDepth > 0 && t.text === ']') attributeDepth--;
      continue;
    }
    if (t.kind !== 'ident' || attributeDepth > 0) continue;
    if (t.text === 'attribute' && next?.text === '[') {
      attributeDepth = 1;
      k++;
      continue;
    }
    if (UNFOLLOWED_DECLARATION_COMMANDS.has(t.text)) {
      if (!lenient) return refuse(t, `'${t.text}' adds declarations the audit does not follow`);
      note(t, `'${t.text}' adds declarations the audit does not follow`);
      continue;
    }
    if (t.text === 'namespace') {
      if (next?.kind !== 'ident') return refuse(t, '`namespace` without a name');
      const bad = unsafeName(components(next.text), `the namespace '${next.text}'`, false);
      if (bad) return refuse(t, bad);
      for (const part of components(next.text)) scopes.push({ kind: 'namespace', name: part });
      k++;
      continue;
    }
    if (t.text === 'section' || t.text === 'mutual') {
      const named = t.text === 'section' && next?.kind === 'ident' && next.line === t.line;
      if (t.text === 'mutual') scopes.push({ kind: 'mutual', name: '' });
      else if (named) for (const part of components(next.text)) scopes.push({ kind: 'section', name: part });
      else scopes.push({ kind: 'section', name: '' });
      if (named) k++;
      continue;
    }
    if (t.text === 'end') {
      const named = next?.kind === 'ident' && next.line === t.line;
      const parts = named ? components(next.text) : [''];
      for (const part of [...parts].reverse()) {
        const top = scopes.pop();
        if (!top || plain(top.name) !== plain(part))
          return refuse(t, `'end${named ? ' ' + next.text : ''}' does not close the scope the source opened`);
      }
      if (named) k++;
      continue;
    }
    if (t.text === 'example') {
      anonymous.push({ kind: 'example', token: t, insertAfter: t, prefix: prefix() });
      continue;
    }
    if (!NAMED_KINDS.has(t.text)) continue;
    if (t.text === 'instance' && tokens[k - 1]?.text === 'deriving') continue;
    if (t.text === 'class' && (next?.text === 'abbrev' || next?.text === 'inductive')) continue;
    let j = k + 1;
    if (t.text === 'instance' && tokens[j]?.text === '(' && tokens[j + 1]?.text === 'priority') {
      let depth = 0;
      for (; j < tokens.length; j++) {
        if (tokens[j].text === '(') depth++;
        else if (tokens[j].text === ')' && --depth === 0) break;
      }
      j++;
    }
    const nameToken = tokens[j];
    if (nameToken?.kind === 'ident' && !(t.text === 'instance' && nameToken.text === 'where')) {
      const bad = unsafeName(components(nameToken.text), `the name '${nameToken.text}'`, true);
      if (bad) return refuse(t, bad);
      const parts = components(nameToken.text);
      const full = plain(parts[0]) === '_root_' ? parts.slice(1).join('.') : prefix() + nameToken.text;
      // a name the source declares twice (also `private` + public): Lean refuses the second, and if that
      // error were hidden the audit would answer for the first
      if (declared.some((d) => sameDeclarationName(d, full))) return refuse(t, `'${full}' is declared twice`);
      declared.push(full);
      if (!names.some((n) => sameDeclarationName(n, full))) names.push(full);
      k = j;
      continue;
    }
    if (t.text === 'instance') {
      anonymous.push({ kind: 'instance', token: t, insertAfter: tokens[j - 1], prefix: prefix() });
      continue;
    }
    if (!lenient) return refuse(t, `'${t.text}' without a name Lean would certainly give it`);
    note(t, `'${t.text}' without a name Lean would certainly give it`);
  }
  const extra = uncertain.length > 0 ? { uncertain } : {};
  if (anonymous.length === 0) return { ok: true, plan: { names, ...extra } };
  return { ok: true, plan: { names, copy: buildCopy(body, anonymous, lineOffset), ...extra } };
}

/**
 * The namespace components open at the end of `text` (`namespace`/`section`/`mutual`/`end` followed as planAudit
 * follows them), or undefined where an `end` does not close what the text opened.
 */
export function namespaceAtEnd(text: string): string[] | undefined {
  const tokens = lexLean(text);
  const scopes: Scope[] = [];
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    const next = tokens[k + 1];
    if (t.kind !== 'ident') continue;
    const named = next?.kind === 'ident' && next.line === t.line;
    if (t.text === 'namespace' && next?.kind === 'ident') {
      for (const part of components(next.text)) scopes.push({ kind: 'namespace', name: part });
      k++;
    } else if (t.text === 'section' || t.text === 'mutual') {
      if (t.text === 'section' && named)
        for (const part of components(next.text)) scopes.push({ kind: 'section', name: part });
      else scopes.push({ kind: t.text === 'mutual' ? 'mutual' : 'section', name: '' });
      if (t.text === 'section' && named) k++;
    } else if (t.text === 'end') {
      const parts = named ? components(next.text) : [''];
      for (const part of [...parts].reverse()) {
        const top = scopes.pop();
        if (!top || plain(top.name) !== plain(part)) return undefined;
      }
      if (named) k++;
    }
  }
  return scopes.filter((s) => s.kind === 'namespace').map((s) => s.name);
}

/** One name component without its `«»`: `«A»` and `A` are the same component. */
export const plain = (component: string): string => component.replace(/[«»]/g, '');

/**
 * `A.«b.c».d` -> [A, «b.c», d]: dots inside `«»` do not split, and the `«»` stay, so the names built
 * from them (`«b.c».t`) are the names Lean resolves, never `b.c.t`.
 */
export function components(name: string): string[] {
  const out: string[] = [];
  let current = '',
    quoted = false;
  for (const ch of name) {
    if (ch === '«') quoted = true;
    if (ch === '»') quoted = false;
    if (ch === '.' && !quoted) {
      out.push(current);
      current = '';
    } else current += ch;
  }
  out.push(current);
  return out;
}

function buildCopy(
  body: string,
  anonymous: { kind: 'example' | 'instance'; token: Token; insertAfter: Token; prefix: string }[],
  lineOffset: number,
): AuditCopy {
  const lines = body.split('\n').map((l) => Array.from(l));
  const names: string[] = [];
  const labels = new Map<string, string>();
  anonymous.forEach((a, i) => {
    const name = `${auditCopyPrefix}${i + 1}`;
    names.push(a.prefix + name);
    labels.set(a.prefix + name, `${a.kind} (line ${a.token.line + lineOffset})`);
  });
  // right to left, bottom to top, so earlier positions stay valid
  const edits = anonymous
    .map((a, i) => ({ a, name: `${auditCopyPrefix}${i + 1}` }))
    .sort((x, y) => y.a.token.line - x.a.token.line || y.a.token.column - x.a.token.column);
  for (const { a, name } of edits) {
    if (a.kind === 'example') {
      lines[a.token.line - 1].splice(a.token.column, 'example'.length, ...Array.from(`def ${name}`));
    } else {
      const at = a.insertAfter;
      lines[at.endLine - 1].splice(at.endColumn, 0, ...Array.from(` ${name}`));
    }
  }
  return { body: 'noncomputable section\n' + lines.map((l) => l.join('')).join('\n'), names, labels };
}
