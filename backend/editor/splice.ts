// Builds the edits that put a verified proof into the user's file: the whole proof of a declaration,
// or one `sorry` replaced by the proof of its goal, indented so that Lean parses it in place.
import { type ProofEdit, type Verdict, replPosToLsp } from '../protocol';
import { type Token, type Trivia, lexLean, lexLeanFull, tokenSpans } from '../lean/lexer';
import { commandStem, isCommandWord } from '../lean/declarations';
import { components, plain } from '../lean/auditPlan';
import { type Declaration, type SorrySite, findDeclarations, positionAt, standaloneSnippet } from './leanSource';
import type { CheckAnswer } from './service';
import { documentEol, storedProofText, withEol } from './lineBreaks';
import { comparisonSnippet, statementNeedsLean, statementText, statementTextProblem } from './statementGuard';
import { NOTATION_COMMANDS } from '../lean/source/keywords';

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

// ---- The splice rule: what enters the user's file is the target declaration's body, and nothing else ----

/**
 * Tokens that start a command of their own in Lean 4 (core, Batteries, Mathlib), wherever they stand: a
 * tactic block ends before them (indented or not) and Lean reads them as the next command. The one list
 * lives with the declaration finder (backend/lean/declarations.ts, with its sources); `isCommandWord` also
 * takes `foo?`/`foo!` variants and the shapes libraries keep adding. `termination_by`, `decreasing_by`
 * and `where` belong to the declaration and are not commands.
 */
/** Hole names a verdict must not hide, compared after `holeStem`: spliced text never holds them. */
const HOLE_TOKENS: ReadonlySet<string> = new Set(['sorry', 'admit', 'sorryAx', 'stop']);

/**
 * The name an identifier ends in, as Lean resolves it for a hole: `«»` quoting dropped from every
 * component, `_root_.` and any namespace path dropped (`_root_.sorryAx`, `«sorryAx»`, `Foo.«sorryAx»` are
 * all `sorryAx`), trailing `?`/`!` dropped.
 */
function holeStem(text: string): string {
  const parts = components(text).map(plain);
  return commandStem(parts[parts.length - 1] ?? text);
}

/** Whether the token at `k` opens a command: a command word, a `#command`, or an attribute `@[`, but not an `open … in` / `set_option … in` prefix followed by more proof. */
function opensCommand(tokens: Token[], k: number, limit = tokens.length): boolean {
  const t = tokens[k];
  if (t.kind === 'command') return true;
  if (t.kind === 'symbol') return t.text === '@[';
  if (t.kind !== 'ident' || !isCommandWord(t.text)) return false;
  const prev = tokens[k - 1];
  if (t.text === 'scoped' && prev?.kind === 'ident' && prev.text === 'open') return false; // judged at its `open`
  if (t.text !== 'open' && t.text !== 'set_option' && t.text !== 'count_heartbeats') return true;
  for (let j = k + 1; j < limit; j++) {
    const u = tokens[j];
    if (u.line !== t.line) return true;
    if (u.kind === 'ident' && u.text === 'in') return !(j + 1 < limit && !opensCommand(tokens, j + 1, limit));
    if (u.kind === 'ident' && u.text === 'scoped' && j === k + 1 && t.text === 'open') continue; // `open scoped X in`
    if (u.kind === 'command' || (u.kind === 'ident' && isCommandWord(u.text))) return true;
  }
  return true;
}

/** Words that may stand at or left of the declaration's column and still belong to it. */
const DECLARATION_CONTINUATIONS: ReadonlySet<string> = new Set([
  'termination_by',
  'termination_by?',
  'decreasing_by',
  'partial_fixpoint',
  'inductive_fixpoint',
  'coinductive_fixpoint',
  'where',
  '|',
]);
const OPENING = new Set(['(', '[', '{', '⟨', '⦃', '⟦', '‹', '@[']);
const CLOSING = new Set([')', ']', '}', '⟩', '⦄', '⟧', '›']);

/**
 * The model's proof text (what follows the statement's `:= by`) cut to the target declaration's body. It
 * ends before the first token that opens another command (`variable`, `include`, `instance`, `open`,
 * `namespace`, `set_option`, `notation`, a declaration, `@[…]`, `#eval`, any listed command or variant of
 * one), and, failing closed for commands no list knows, before the first line after the `by` line that
 * starts at or left of the declaration's own column (`declColumn`: 0 in the checked snippet, where the
 * statement starts a line) outside brackets, unless it continues the declaration (`termination_by`,
 * `decreasing_by`, `where`, a `|` alternative): Lean's tactic block has ended there, so whatever follows
 * is the next command. The body stops at the end of the last code before the cut (no trailing comment or
 * doc comment goes along). `cut` is what was left out.
 */
export function cutToBody(proof: string, declColumn = 0): { body: string; cut: string | null } {
  const trivia: Trivia[] = [];
  const tokens = lexLean(proof, trivia);
  const offsets = tokenSpans(proof, tokens);
  let end = proof.length;
  let depth = 0;
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    const firstOnLine = t.line > 1 && (k === 0 || tokens[k - 1].endLine < t.line);
    const leftOfDeclaration =
      firstOnLine && depth === 0 && t.column <= declColumn && !DECLARATION_CONTINUATIONS.has(t.text);
    if (opensCommand(tokens, k) || leftOfDeclaration) {
      end = offsets[k].start;
      break;
    }
    if (t.kind === 'symbol' && OPENING.has(t.text)) depth++;
    else if (t.kind === 'symbol' && CLOSING.has(t.text)) depth = Math.max(0, depth - 1);
  }
  let codeEnd = 0;
  for (let k = 0; k < tokens.length && offsets[k].start < end; k++) codeEnd = Math.max(codeEnd, offsets[k].end);
  for (const t of trivia)
    if ((t.kind === 'string' || t.kind === 'char') && t.end <= end) codeEnd = Math.max(codeEnd, t.end);
  const cut = proof.slice(codeEnd);
  return { body: proof.slice(0, codeEnd), cut: cut.trim() === '' ? null : cut };
}

/**
 * Why the token at `k` may not stand in spliced text, or null: a hole (`sorry`, `admit`, `stop`, `sorryAx`
 * in any spelling), a search tactic ending in `?` (Lean's `apply?`/`exact?` close what they cannot prove
 * with a hidden sorry, which no listed sorry accounts for), or `set_option warn.sorry` (it only hides sorry
 * warnings; a proof never needs it).
 */
function forbiddenToken(tokens: Token[], k: number): string | null {
  const t = tokens[k];
  if (t.kind !== 'ident') return null;
  if (HOLE_TOKENS.has(holeStem(t.text))) return `the proof holds '${t.text}' (line ${t.line})`;
  const prev = tokens[k - 1];
  const next = tokens[k + 1];
  const fieldAccess = prev?.kind === 'symbol' && prev.text === '.';
  // a name in a lemma list (`simp [get?]`, `rw [← getElem?_eq]`) is a term, not a tactic
  const inList = prev?.kind === 'symbol' && ['[', ',', '←', '<-'].includes(prev.text);
  // `simp? says simp only […]`: Lean runs the tactic after `says` (Mathlib's Says.lean), the `?` only checks it
  const says = next?.kind === 'ident' && next.text === 'says';
  if (t.text.endsWith('?') && !t.text.includes('.') && !fieldAccess && !inList && !says)
    return `the proof holds '${t.text}' (line ${t.line}): a search tactic ending in '?' can close a goal it cannot prove with a hidden sorry (Lean's apply? admits what it leaves open), which no listed sorry accounts for`;
  if (t.text === 'set_option' && next?.kind === 'ident' && /^warn\./u.test(next.text))
    return `the proof sets '${next.text}' (line ${t.line}): it only hides warnings such as 'declaration uses sorry', which a proof never needs`;
  return null;
}

/**
 * The structural check, on the file as it will be: `newText` is `oldText` with [from, to) replaced by
 * `inserted` (starting at `from`). Lean's lexer must read every token outside the inserted text exactly as
 * before (nothing glued to a neighbour, no comment or string swallowing what follows), the inserted text
 * must lex cleanly on its own, and no token inside it may open a command or leave a hole. Null when so,
 * else why not.
 */
export function spliceProblem(oldText: string, from: number, to: number, newText: string): string | null {
  const insertedEnd = newText.length - (oldText.length - to);
  if (oldText.slice(0, from) !== newText.slice(0, from) || oldText.slice(to) !== newText.slice(insertedEnd))
    return 'the edit changes text outside the declaration';
  const inserted = newText.slice(from, insertedEnd);
  const alone = lexLeanFull(inserted);
  if (alone.problems.length > 0) return `the proof does not lex cleanly: ${alone.problems[0].message}`;
  const oldTokens = lexLean(oldText);
  const newTokens = lexLean(newText);
  const oldAt = tokenSpans(oldText, oldTokens);
  const newAt = tokenSpans(newText, newTokens);
  const outsideOld = oldTokens.filter((_, k) => oldAt[k].end <= from || oldAt[k].start >= to);
  const insideNew: number[] = [];
  const outsideNew: Token[] = [];
  newTokens.forEach((t, k) => {
    if (newAt[k].end <= from || newAt[k].start >= insertedEnd) outsideNew.push(t);
    else insideNew.push(k);
  });
  const same =
    outsideOld.length === outsideNew.length &&
    outsideOld.every((t, k) => t.kind === outsideNew[k].kind && t.text === outsideNew[k].text);
  if (!same) return 'the proof changes how Lean reads the text around it';
  for (const k of insideNew) {
    const t = newTokens[k];
    if (newAt[k].start < from || newAt[k].end > insertedEnd) return 'the proof is glued to the text around it';
    if (opensCommand(newTokens, k, insideNew[insideNew.length - 1] + 1))
      return `the proof holds a command of its own ('${t.text}' at line ${t.line})`;
    const forbidden = forbiddenToken(newTokens, k);
    if (forbidden) return forbidden;
  }
  return null;
}

/** What a splice puts in: the whole body after the statement's `:=`, or one `sorry` of the declaration. */
type SpliceTarget =
  { kind: 'body'; decl: Declaration } | { kind: 'sorry'; decl: Declaration; site: SorrySite; listedBefore: number };

export interface SpliceInput {
  /** The document as it is now. */
  text: string;
  target: SpliceTarget;
  /** The verified proof text: what followed the `:= by` of the checked statement (or the lemma's proof). */
  proof: string;
  /**
   * Lean (the verifier) on a snippet. `userLength`: how much of `code` is the user's own text (the prefix above the
   * declaration, unfiltered); the declaration itself, holding the model's proof, is checked as model text.
   */
  check: (code: string, signal?: AbortSignal, userLength?: number) => Promise<CheckAnswer>;
  signal?: AbortSignal;
  onStage?: (message: string) => void;
  /** Earlier declarations (by name) the re-check leaves out, as it leaves out those with a sorry (a repair: the file's other broken proofs). */
  exclude?: ReadonlySet<string>;
}

export type SpliceOutcome =
  | { ok: true; edit: ProofEdit; newText: string; recheck: Verdict; cut: string | null }
  | { ok: false; problem: string; recheck: Verdict | null; cut: string | null };

/** Files that define their own syntax can make any word expand to `sorry`: with sorries left, refused. */
const SYNTAX_COMMANDS = new Set([
  'macro',
  'macro_rules',
  'syntax',
  'elab',
  'elab_rules',
  ...NOTATION_COMMANDS,
  'binder_predicate',
  'declare_syntax_cat',
  'declare_simp_like_tactic',
  'run_cmd',
  'run_elab',
  'run_meta',
  'initialize',
]);

/**
 * THE one way a proof enters the user's file (Proof view Accept, Prove Goal at Cursor, Prove All Sorries,
 * repair): cuts the proof to the target's body (`cutToBody`), builds the edit, checks its structure on the
 * file as it will be (`spliceProblem`), then has Lean check the exact text to be written in place (the new
 * file's standalone snippet of the declaration: header, scope commands, earlier declarations, the
 * declaration). A body must come back `valid`; a sorry's splice must leave exactly the other listed
 * sorries (and be `valid` when none was left), with no error. Anything else is refused, with the reason.
 */
export async function spliceVerifiedProof(input: SpliceInput): Promise<SpliceOutcome> {
  const { text, target } = input;
  const stored = storedProofText(input.proof);
  if ('problem' in stored) return { ok: false, problem: `Refused: ${stored.problem}.`, recheck: null, cut: null };
  const { body, cut } = cutToBody(stored.text);
  const refuse = (problem: string, recheck: Verdict | null = null): SpliceOutcome => ({
    ok: false,
    problem,
    recheck,
    cut,
  });
  if (body.trim() === '') return refuse('The answer holds no proof before its first command.');
  let spliced: { edit: ProofEdit; newText: string };
  let from: number, to: number;
  try {
    if (target.kind === 'body') {
      spliced = theoremEdit(text, target.decl, body);
      from = target.decl.statementEnd as number;
      to = target.decl.end;
    } else {
      spliced = sorryEdit(text, target.site, body);
      from = target.site.offset;
      to = target.site.offset + 5;
    }
  } catch (err) {
    return refuse(`Cannot splice the proof: ${(err as Error).message}`);
  }
  // the edit with the document's own line breaks, and the text the document holds once it is applied
  const eol = documentEol(text);
  const inserted = withEol(spliced.edit.newText, eol);
  spliced = { edit: { ...spliced.edit, newText: inserted }, newText: text.slice(0, from) + inserted + text.slice(to) };
  const structural = spliceProblem(text, from, to, spliced.newText);
  if (structural) return refuse(`Refused: ${structural}.`);
  const newDecl = findDeclarations(spliced.newText).find((d) => d.start === target.decl.start);
  if (!newDecl) return refuse('Refused: the declaration is not found in the file with the proof spliced in.');
  const renamed = statementTextProblem(text, target.decl, spliced.newText, newDecl);
  if (renamed) return refuse(`Refused: ${renamed}.`);
  const others = target.kind === 'sorry' ? target.listedBefore - 1 : 0;
  if (others > 0) {
    const defined = lexLean(text).find((t) => t.kind === 'ident' && SYNTAX_COMMANDS.has(commandStem(t.text)));
    if (defined)
      return refuse(
        `Refused: the file defines its own syntax ('${defined.text}' at line ${defined.line}), so a word of the proof could stand for 'sorry' beside the other sorries of ${target.decl.name}; prove those first or prove the whole declaration.`,
      );
  }
  input.onStage?.('Re-checking the declaration in place, exactly as it will be written');
  const { code, declOffset } = standaloneSnippet(spliced.newText, newDecl, undefined, input.exclude);
  const recheck = (await input.check(code, input.signal, declOffset)).verdict;
  if (others === 0) {
    if (recheck.status !== 'valid')
      return refuse(`Lean does not accept the declaration as it would be written: ${recheck.reason}`, recheck);
  } else {
    if (recheck.status !== 'sorry' || recheck.messages.some((m) => m.severity === 'error'))
      return refuse(`Lean does not accept the declaration as it would be written: ${recheck.reason}`, recheck);
    // the sorries Lean lists must be exactly the declaration's other sorries, where they stand now
    const want = newDecl.sorries.map((s) => positionAt(code, declOffset + s.offset - newDecl.start));
    const listed = recheck.sorries;
    const matches =
      listed.length === others &&
      want.length === others &&
      listed.every((s) => {
        if (!s.pos) return false;
        const p = replPosToLsp(code, s.pos);
        return want.some((w) => w.line === p.line && w.character === p.character);
      });
    if (!matches)
      return refuse(
        `Lean's sorries after the splice (${listed.length}) are not exactly the other ${others} sorries of ${target.decl.name}: the proof may hide one.`,
        recheck,
      );
  }
  const probed = await oneBlockProbe(input, body, spliced.newText, from, inserted.length, eol, recheck);
  if (probed) return refuse(probed, recheck);
  const compared = await sameStatementInLean(
    { text, decl: target.decl, newText: spliced.newText, newDecl },
    input.check,
    input,
  );
  if (compared) return refuse(compared, recheck);
  return { ok: true, ...spliced, recheck, cut };
}

/** Verdicts that judged nothing: the comparison cannot pass on them. */
const UNJUDGED = new Set(['timeout_error', 'server_error', 'repl_error', 'rejected']);

/**
 * The independent guard that the statement is the user's (statementGuard.ts): where the statement holds a
 * word that can hide where it ends, Lean compares the declaration's type before (`decl` in `text`) and after
 * (`newDecl` in `newText`). Null when it is the same (or the text alone decides), else why it is refused.
 */
export async function sameStatementInLean(
  at: { text: string; decl: Declaration; newText: string; newDecl: Declaration },
  check: SpliceInput['check'],
  options: { signal?: AbortSignal; onStage?: (message: string) => void; exclude?: ReadonlySet<string> } = {},
): Promise<string | null> {
  const { text, decl, newText, newDecl } = at;
  const statement = statementText(text, decl);
  if (statement === null || !statementNeedsLean(statement)) return null;
  options.onStage?.('Having Lean compare the statement before and after the splice');
  const { code, declOffset } = standaloneSnippet(newText, newDecl, undefined, options.exclude);
  const snippet = comparisonSnippet(
    code.slice(0, declOffset),
    text.slice(decl.start, decl.end),
    decl,
    newText.slice(newDecl.start, newDecl.end),
    newDecl,
  );
  if (!snippet)
    return `Refused: the statement of ${decl.name} holds a word that can hide where it ends, and its name cannot be renamed for Lean to compare the statement before and after.`;
  // the prefix is the user's; both declarations and the comparison are checked as model text
  const verdict = (await check(snippet.code, options.signal, declOffset)).verdict;
  const error = verdict.messages.find((m) => m.severity === 'error' && m.pos.line >= snippet.afterLine);
  if (UNJUDGED.has(verdict.status) || error)
    return `Refused: Lean does not find the statement of ${decl.name} unchanged by the splice (${error ? error.data.split('\n')[0] : verdict.reason}).`;
  return null;
}

/** Words that end a proof's tactic block but belong to the declaration: the probe's parentheses close before them. */
const AFTER_BLOCK =
  /^(termination_by\??|decreasing_by|partial_fixpoint|inductive_fixpoint|coinductive_fixpoint|where)(?![\p{L}\p{N}_'!?])/u;

/**
 * Lean's own word that the spliced proof is one tactic block, for commands no list knows: the same snippet
 * with the proof's tactic block in tactic parentheses `(…)` (same tactics, same goals; every line after the
 * first moved one column right, as the `(` moves the first). A command anywhere in the block ends it there,
 * and inside parentheses Lean then wants `)`: a parse error. The parentheses close before the first line at
 * the block's column that starts with `termination_by`/`decreasing_by`/`where` (what follows belongs to the
 * declaration, not to the block), so such a line never turns the probe off. Not needed for a term-position
 * sorry (its `(by …)` is already parenthesised). `insertedLength` is the length of the text the splice
 * inserted at `from` in `newText`; `eol` the document's line break. Null when the probe passes or does not
 * apply, else why the splice is refused.
 */
async function oneBlockProbe(
  input: SpliceInput,
  body: string,
  newText: string,
  from: number,
  insertedLength: number,
  eol: '\n' | '\r\n',
  exact: Verdict,
): Promise<string | null> {
  const { target } = input;
  const all = dedent(body);
  if (target.kind === 'sorry' && target.site.position !== 'tactic') return null;
  const blockEnd = all.findIndex((l, i) => i > 0 && AFTER_BLOCK.test(l));
  const lines = blockEnd < 0 ? all : all.slice(0, blockEnd);
  const after = blockEnd < 0 ? [] : all.slice(blockEnd);
  const shifted = (pad: string) =>
    [lines[0], ...lines.slice(1).map((l) => (l === '' ? '' : pad + ' ' + l))].join('\n') +
    '\n' +
    pad +
    ')' +
    (after.length ? '\n' + indentLines(after, pad, true) : '');
  let wrapped: string;
  if (target.kind === 'body') {
    const pad = ' '.repeat(target.decl.indent + 2);
    wrapped = ' by\n' + pad + '(' + shifted(pad);
  } else {
    const lineStart = target.site.offset - target.site.character;
    const pad = ' '.repeat(Array.from(input.text.slice(lineStart, target.site.offset)).length);
    wrapped = '(' + shifted(pad);
  }
  const probeText = newText.slice(0, from) + withEol(wrapped, eol) + newText.slice(from + insertedLength);
  const probeDecl = findDeclarations(probeText).find((d) => d.start === target.decl.start);
  if (!probeDecl) return 'Refused: the declaration is not found with its proof in parentheses.';
  const { code, declOffset } = standaloneSnippet(probeText, probeDecl, undefined, input.exclude);
  const probe = (await input.check(code, input.signal, declOffset)).verdict;
  if (probe.status === exact.status && !probe.messages.some((m) => m.severity === 'error')) return null;
  return `Refused: with the proof in parentheses Lean answers ${probe.status} (${probe.reason}), so part of it may be read as a command of its own rather than as proof.`;
}
