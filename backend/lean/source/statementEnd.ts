// Where a declaration's statement ends and its proof (or value, or fields) starts, as Lean's declaration
// parsers read it (src/Lean/Parser/Command.lean: `declSig`, `declBody`, `declValSimple` (`:=`),
// `declValEqns` (`| pat => …` alternatives), `whereStructInst` (`where`)), over the lexer's tokens.
// The statement is a term, and a term may itself hold `:=`: `let x := v; b`, `letI`, `have h : T := v; b`,
// `haveI`, `let rec`, structure instances `{ x := v }`, named and default arguments `(x : T := v)`, and `match … with`
// alternatives `| p => e`. So the proof starts at the first `:=` outside brackets that no `let`/`have` of the
// statement is waiting for, or at the first `|` that begins a line outside a `match`/`fun` of the statement,
// or at a `where` outside brackets; whichever comes first.
import type { Token } from '../lexer';
import { CLOSING_BRACKETS, OPENING_BRACKETS } from './keywords';

export type ProofStartKind = ':=' | '|' | 'where';
export interface ProofStart {
  kind: ProofStartKind;
  /** Index of the token that starts the proof (`:=`, `|` or `where`). */
  token: number;
}

/** Term binders whose own `:=` comes before the statement's (`let x := v; b`, `have h : T := v; b`). */
const localBinders = new Set(['let', 'letI', 'have', 'haveI', 'let_fun', 'let_delayed', 'let_tmp']);

/**
 * The token that starts the proof of the declaration whose signature runs over `tokens[from..to)` (from just after
 * its keyword to its end), or null when it has none (`axiom`, `opaque`, a `structure` without fields).
 */
export function proofStart(tokens: readonly Token[], from: number, to: number): ProofStart | null {
  let depth = 0;
  let pendingBinders = 0;
  let inMatch = false;
  for (let k = from; k < to; k++) {
    const t = tokens[k];
    if (t.kind === 'symbol' && OPENING_BRACKETS.has(t.text)) {
      depth++;
      continue;
    }
    if (t.kind === 'symbol' && CLOSING_BRACKETS.has(t.text)) {
      depth = Math.max(0, depth - 1);
      continue;
    }
    if (depth > 0) continue;
    if (t.kind === 'symbol' && t.text === ':=') {
      if (pendingBinders > 0) pendingBinders--;
      else return { kind: ':=', token: k };
      continue;
    }
    if (t.kind === 'ident' && localBinders.has(t.text)) {
      pendingBinders++;
      continue;
    }
    if (t.kind === 'ident' && t.text === 'match') {
      inMatch = true;
      continue;
    }
    if (t.kind === 'ident' && t.text === 'fun' && tokens[k + 1]?.text === '|') {
      inMatch = true;
      continue;
    }
    if (t.kind === 'ident' && t.text === 'where' && !inMatch) return { kind: 'where', token: k };
    if (t.kind === 'symbol' && t.text === '|' && !inMatch && (k === 0 || tokens[k - 1].endLine < t.line))
      return { kind: '|', token: k };
  }
  return null;
}

/** Words after a proof that belong to the declaration, not to the proof (`Termination.suffix`, `whereDecls`). */
const trailingWords = new Set([
  'where',
  'termination_by',
  'termination_by?',
  'decreasing_by',
  'partial_fixpoint',
  'inductive_fixpoint',
  'coinductive_fixpoint',
  'deriving',
]);

/**
 * The token that starts the clause after a proof (`where` auxiliary declarations, `termination_by`, `decreasing_by`,
 * `partial_fixpoint`, `deriving`) among `tokens[from..to)` (the proof, from just after its `:=` or first `|`), outside
 * brackets; null when the proof runs to the declaration's end. No term or tactic holds these words, so the first one
 * outside brackets ends the proof wherever it stands: a `where` at any column is the declaration's.
 */
export function trailingClause(tokens: readonly Token[], from: number, to: number): number | null {
  let depth = 0;
  for (let k = from; k < to; k++) {
    const t = tokens[k];
    if (t.kind === 'symbol' && OPENING_BRACKETS.has(t.text)) depth++;
    else if (t.kind === 'symbol' && CLOSING_BRACKETS.has(t.text)) depth = Math.max(0, depth - 1);
    else if (depth === 0 && t.kind === 'ident' && trailingWords.has(t.text)) return k;
  }
  return null;
}
