// THE reader of Lean source: every path that reads a Lean file without Lean (the verifier's header split, the
// declaration finder, formal statements, the splice rule, harvest, repair, the prover's targets) reads it here, so
// they never disagree on where a header, a statement, a proof or a `sorry` is. Pure functions of the text; no I/O.
//
// API (positions are `SourcePos`: UTF-16 offset, 1-based line, 0-based codepoint column, as Lean counts):
// - `readHeader(source): ModuleHeader` (moduleHeader.ts): `module`, `prelude`, imports with `public`/`meta`/`all`
//   (one module per `import`), comments before and between them, `end` and `bodyStart` (where Lean starts reading
//   commands: rebase the body's positions by `bodyStart.line - 1` lines), `problems` (what Lean refuses there).
//   `headerText(header)` / `importLine(import)` write it back one item per line.
// - `splitHeader(code, { collapseMathlib })` (../header.ts, re-exported here): the verifier's header/body split built
//   on readHeader: `header` (rebuilt, one item per line), `body`, `headerLines`, `read` (the ModuleHeader).
// - `findDeclarations(source): Declaration[]` (../declarations.ts): every declaration with `kind` (`theorem` …
//   `opaque`, or `custom` for a project's own command such as `problem`, named by `command`), `name`, `namespace`,
//   `start`/`head`/`end`, `statement` (text up to the proof's `:=`, plus ` by`), `proof` (where the proof starts,
//   `:=` / `|` alternatives / `where`, as Lean reads the statement: `let`, `have`, `match`, structure instances and
//   default arguments inside the type do not end it), `body` (after `:=`/`:= by`), `sorries`.
//   `trailer` is the `where` / `termination_by` / `decreasing_by` clause after the proof (where Lean ends the proof).
//   A project's own command is recognised by shape (`customCommandLine`): a column-0 word after a blank line that is
//   no known command, term or tactic word, with `<word> <name> … : … :=` up to the next blank line.
// - `commandsOf(source): LeanCommand[]` (../declarations.ts): every command after the header with its word, its
//   kind (`declaration`, `scope`: open/namespace/section/end/variable/universe/include/omit/set_option, `other`)
//   and its range.
// - `proofStart(tokens, from, to)` / `trailingClause(tokens, from, to)` (statementEnd.ts): the token where a
//   signature's proof starts / where the clause after a proof starts.
// - `byBlockEnd(tokens, k, limit)`: the token index past the tactic block opened by the `by` at `k`.
// - `readLean(source): LeanSource`: the header and the declarations together.
// - `sorriesOf(source): SorryTarget[]`: every `sorry` of the code (not in comments or strings), each with its
//   enclosing declaration (kind, name, full name, range, statement range, body range) and the innermost targetable
//   term holding it: the `by` block it stands in, or the `sorry` term itself; `position` tactic or term; `part`
//   body (a proof to write) or statement (`example : P ↔ sorry`: a placeholder of the user's, not a proof target);
//   `whereClause` the `where` auxiliary it stands in (name, statement, body), if any.
import { type Declaration, findDeclarations, firstTokenAt, maskLean, sourceTokens } from '../declarations';
import type { Token } from '../lexer';
import { type ModuleHeader, readHeader } from './moduleHeader';
import { PositionIndex, type SourcePos } from './positions';
import { proofStart } from './statementEnd';
import { CLOSING_BRACKETS, OPENING_BRACKETS } from './keywords';

export { headerText, readHeader } from './moduleHeader';
export { commandsOf, findDeclarations } from '../declarations';

interface SourceRange {
  start: SourcePos;
  end: SourcePos;
}

export interface LeanSource {
  header: ModuleHeader;
  declarations: Declaration[];
}

/** The header and every declaration of `source`. */
export function readLean(source: string): LeanSource {
  return { header: readHeader(source), declarations: findDeclarations(source) };
}

interface EnclosingDeclaration {
  kind: Declaration['kind'];
  /** The keyword or the project's own command word (`problem`). */
  command: string;
  /** As written (`''` for `example` and anonymous instances). */
  name: string;
  /** With the enclosing namespaces. */
  fullName: string;
  /** The whole declaration, attributes and modifiers included, doc comment excluded. */
  range: SourceRange;
  /** From the declaration's start to where its proof starts (the `:=`, `|` or `where`; its end when none). */
  statement: SourceRange;
  /** From just after `:=` (or at the first `|` alternative, or at `where`) to the declaration's end; null when none. */
  body: SourceRange | null;
  /** The declaration as the finder reports it. */
  declaration: Declaration;
}

export interface SorryTarget {
  /** The `sorry` token. */
  sorry: SourceRange;
  /** Tactic position (`by sorry`, a tactic line) or term position (`:= sorry`, `exact sorry`). */
  position: 'tactic' | 'term';
  /** The declaration holding it; null for a sorry outside every declaration (`#check sorry`). */
  declaration: EnclosingDeclaration | null;
  /**
   * Where in its declaration it stands: `body` (a proof or value to write), or `statement` (`example : P ↔ sorry`, a
   * placeholder the user fills: never a proof target, since a proof must not change the statement); null outside
   * every declaration.
   */
  part: 'statement' | 'body' | null;
  /**
   * When it stands in a `where` auxiliary declaration of its declaration (`theorem t : P := aux where aux : Q := by
   * sorry`): that auxiliary's name, statement (its name to its `:=`) and body; else null.
   */
  whereClause: { name: string; statement: SourceRange; body: SourceRange | null } | null;
  /** The innermost targetable term holding it: the `by` block (from `by` to its last tactic), else the sorry itself. */
  target: { kind: 'by' | 'term'; range: SourceRange };
}

/** Tokens after which a `sorry` is a term (`:= sorry`, `exact sorry`, `(sorry, …)`, `fun _ ↦ sorry`). */
const termBefore = new Set([
  ':=',
  '(',
  '⟨',
  '[',
  '{',
  ',',
  'exact',
  'refine',
  'apply',
  'from',
  'show',
  'use',
  'exacts',
  'using',
  '←',
  '→',
  '=',
  '<|',
  '$',
  'fun',
  '↦',
  'then',
  'else',
]);
/** Tokens after which a `sorry` is a tactic (`by sorry`, `· sorry`, `tac; sorry`, `case h => sorry`). */
const tacticBefore = new Set(['by', '·', '.', ';', '<;>', '=>']);
const isIdentChar = (ch: string | undefined): boolean => ch !== undefined && /[\p{L}\p{N}_'!?₀-₉ₐ-ₜᵢ-ᵪ.]/u.test(ch);

/** The token just before `offset` in code text (comments and literals blanked): a word or a known symbol. */
function previousToken(code: string, offset: number): { token: string; onSameLine: boolean } {
  let k = offset - 1;
  let onSameLine = true;
  while (k >= 0 && /\s/u.test(code[k])) {
    if (code[k] === '\n') onSameLine = false;
    k--;
  }
  if (k < 0) return { token: '', onSameLine };
  const end = k + 1;
  if (isIdentChar(code[k]) && code[k] !== '.') {
    while (k >= 0 && isIdentChar(code[k])) k--;
    return { token: code.slice(k + 1, end), onSameLine };
  }
  for (const sym of ['<;>', ':=', '=>', '<|', '←', '→', '↦', '·', '.', ';', '(', '⟨', '[', '{', ',', '=', '$'])
    if (code.slice(0, end).endsWith(sym)) return { token: sym, onSameLine };
  return { token: code[k], onSameLine };
}

/**
 * Tactic or term position: outside every `by` block a term; inside one, by the token before it (a term after `:=`,
 * `exact`, an opening bracket…; a tactic after `by`, `·`, `;`, `=>`), else a tactic when it begins its line.
 */
function positionOf(code: string, offset: number, inBy: boolean): 'tactic' | 'term' {
  if (!inBy) return 'term';
  const { token, onSameLine } = previousToken(code, offset);
  if (tacticBefore.has(token)) return 'tactic';
  if (termBefore.has(token)) return 'term';
  return onSameLine ? 'term' : 'tactic';
}

/** Words that end a tactic block when they begin a line at its column or left of it. */
const blockEnders = new Set(['termination_by', 'decreasing_by', 'where', 'deriving']);

const startsLine = (tokens: readonly Token[], j: number): boolean => j === 0 || tokens[j - 1].endLine < tokens[j].line;

/**
 * The token index just past the tactic block opened by the `by` at `k`, within `limit`: Lean's `tacticSeq` keeps
 * lines at the column of its first tactic or right of it (`checkColGe`), and ends at a bracket it did not open.
 */
function byBlockEnd(tokens: readonly Token[], k: number, limit: number): number {
  if (k + 1 >= limit) return k + 1;
  const column = tokens[k + 1].column;
  let depth = 0;
  for (let j = k + 1; j < limit; j++) {
    const t = tokens[j];
    if (j > k + 1 && depth === 0 && startsLine(tokens, j)) {
      if (t.column < column) return j;
      if (t.kind === 'ident' && blockEnders.has(t.text)) return j;
    }
    if (t.kind === 'symbol' && OPENING_BRACKETS.has(t.text)) depth++;
    else if (t.kind === 'symbol' && CLOSING_BRACKETS.has(t.text)) {
      if (depth === 0) return j;
      depth--;
    }
  }
  return limit;
}

function enclosing(d: Declaration, pos: PositionIndex): EnclosingDeclaration {
  const proofAt = d.proof ? d.proof.start : d.end;
  const bodyStart = d.proof?.kind === ':=' ? pos.at(d.proof.start.offset + 2) : d.proof ? d.proof.start : null;
  return {
    kind: d.kind,
    command: d.command,
    name: d.name,
    fullName: d.namespace && d.name ? `${d.namespace}.${d.name}` : d.name,
    range: { start: d.start, end: d.end },
    statement: { start: d.start, end: proofAt },
    body: bodyStart ? { start: bodyStart, end: d.end } : null,
    declaration: d,
  };
}

/**
 * The `where` auxiliary declaration holding the token at `k`: auxiliaries begin at the column of the first name after
 * `where` (Lean's `whereDecls` is a `many1Indent` of `letRecDecl`s), each with its own `:=`.
 */
function whereClauseOf(
  tokens: readonly Token[],
  spans: readonly { start: number; end: number }[],
  decl: Declaration,
  k: number,
  limit: number,
  pos: PositionIndex,
): SorryTarget['whereClause'] {
  if (decl.trailer?.word !== 'where' || spans[k].start < decl.trailer.start.offset) return null;
  const where = firstTokenAt(spans, decl.trailer.start.offset);
  let first = where + 1;
  while (first < limit && tokens[first].kind === 'symbol' && tokens[first].text === '@[') {
    while (first < limit && tokens[first].text !== ']') first++;
    first++;
  }
  if (first >= limit) return null;
  const column = tokens[first].column;
  // the auxiliary starting last at or before k, and where the next one starts
  let start = first;
  for (let j = first; j <= k; j++) if (startsLine(tokens, j) && tokens[j].column === column) start = j;
  let end = k + 1;
  while (end < limit && !(startsLine(tokens, end) && tokens[end].column <= column)) end++;
  // `@[simp] aux …` or `private aux …`: the name is the last word before its binders
  let nameAt = start;
  while (
    nameAt < end &&
    (tokens[nameAt].text === '@[' ||
      tokens[nameAt].kind !== 'ident' ||
      /^(private|protected|noncomputable|partial|unsafe)$/u.test(tokens[nameAt].text))
  ) {
    if (tokens[nameAt].text === '@[') while (nameAt < end && tokens[nameAt].text !== ']') nameAt++;
    nameAt++;
  }
  if (nameAt >= end) return null;
  const proof = proofStart(tokens, nameAt + 1, end);
  const statementEnd = proof ? spans[proof.token].start : spans[end - 1].end;
  const bodyStart = proof?.kind === ':=' ? spans[proof.token].end : proof ? spans[proof.token].start : null;
  return {
    name: tokens[nameAt].text,
    statement: { start: pos.at(spans[start].start), end: pos.at(statementEnd) },
    body: bodyStart === null ? null : { start: pos.at(bodyStart), end: pos.at(spans[end - 1].end) },
  };
}

/** Every `sorry` of `source` with its enclosing declaration and innermost targetable term, in source order. */
export function sorriesOf(source: string): SorryTarget[] {
  const { tokens, spans } = sourceTokens(source);
  const decls = findDeclarations(source);
  const code = maskLean(source).text;
  const pos = new PositionIndex(source);
  const out: SorryTarget[] = [];
  let d = 0;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind !== 'ident' || t.text !== 'sorry') continue;
    const at = spans[k].start;
    while (d < decls.length && decls[d].end.offset <= at) d++;
    const decl = d < decls.length && decls[d].start.offset <= at ? decls[d] : null;
    const from = decl ? firstTokenAt(spans, decl.start.offset) : 0;
    const limit = decl ? firstTokenAt(spans, decl.end.offset) : tokens.length;
    // the innermost `by` block holding the sorry: the nearest `by` before it whose block reaches it
    let target: SorryTarget['target'] = { kind: 'term', range: { start: pos.at(at), end: pos.at(spans[k].end) } };
    for (let b = k - 1; b >= from; b--) {
      if (tokens[b].kind !== 'ident' || tokens[b].text !== 'by') continue;
      const end = byBlockEnd(tokens, b, limit);
      if (end > k) {
        target = { kind: 'by', range: { start: pos.at(spans[b].start), end: pos.at(spans[end - 1].end) } };
        break;
      }
    }
    const position = positionOf(code, at, target.kind === 'by');
    out.push({
      sorry: { start: pos.at(at), end: pos.at(spans[k].end) },
      position,
      declaration: decl ? enclosing(decl, pos) : null,
      part: !decl ? null : decl.proof && decl.proof.start.offset <= at ? 'body' : 'statement',
      whereClause: decl ? whereClauseOf(tokens, spans, decl, k, limit, pos) : null,
      target,
    });
  }
  return out;
}
