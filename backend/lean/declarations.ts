// Finding declarations, their statements and their `sorry`s in Lean 4 source, without Lean.
// Comments (nested `/- -/`, `--`), strings and char literals are masked first, so keywords and
// brackets inside them are never mistaken for code. Commands are recognised where Lean code
// conventionally starts them: at the start of a line (column 0, or indented for declaration keywords,
// attributes and modifiers, which never start a tactic); attributes, modifiers and `open … in` /
// `set_option … in` prefixes are folded into the declaration that follows them.

import { components, plain } from './auditPlan';
import { lexLean, tokenSpans, type Token, type Trivia } from './lexer';
import { type ProofStartKind, proofStart, trailingClause } from './source/statementEnd';
import { DECL_KINDS } from './source/keywords';
import { PositionIndex, type SourcePos } from './source/positions';

export type DeclarationKind =
  | 'theorem'
  | 'lemma'
  | 'example'
  | 'def'
  | 'abbrev'
  | 'instance'
  | 'structure'
  | 'inductive'
  | 'class'
  | 'axiom'
  | 'opaque'
  /** Made by a command of the project's own (`problem foo : P := by …`): `command` names it. */
  | 'custom';

/** Kinds whose body is a proof a prover can write. */
export const PROVABLE_KINDS: readonly DeclarationKind[] = ['theorem', 'lemma', 'example'];

export interface Declaration {
  kind: DeclarationKind;
  /** The declared name as written (`''` for `example` and anonymous instances). */
  name: string;
  /** Enclosing namespaces joined with `.`, `''` at top level. */
  namespace: string;
  /** First character of the declaration, prefixes (attributes, modifiers, `open … in`) included, doc comment excluded. */
  start: SourcePos;
  /** Its first attribute, modifier or keyword: `start` without the `open … in` / `set_option … in` prefixes. */
  head: SourcePos;
  /** One past the last non-blank character of the declaration. */
  end: SourcePos;
  /** From `start` to the end of the signature's `:=`, plus ` by` (`:= by` when the source says `by`). */
  statement: string;
  /** Where the body starts (just after `:= by` or `:=`) and ends (= `end`); null when there is no `:=`. */
  body: { start: SourcePos; end: SourcePos } | null;
  /** Just after the signature's `:=`; null when there is none. */
  signatureEnd: SourcePos | null;
  /** The body is a tactic block (`:= by`). */
  tactic: boolean;
  /** The word that made the declaration: its keyword (`theorem`, …) or a project's own command (`problem`). */
  command: string;
  /**
   * Where the statement ends and the proof or value starts, as Lean reads it (source/statementEnd.ts): the `:=`,
   * the first `| pat => …` alternative, or `where`; null when there is none (`axiom`, `opaque`).
   */
  proof: { kind: ProofStartKind; start: SourcePos } | null;
  /**
   * Where the clause after the proof starts (`where` auxiliary declarations, `termination_by`, `decreasing_by`,
   * `partial_fixpoint`, `deriving`), outside brackets; null when the proof (or value) runs to the end. Not looked for
   * when the declaration's body is itself a `where` structure.
   */
  trailer: { word: string; start: SourcePos } | null;
  /** Text of the `/-- … -/` doc comment right before the declaration, trimmed, or null. */
  docComment: string | null;
  sorries: SourcePos[];
}

/** Declaration modifiers; each may also start an indented declaration (inside an indented namespace or section). */
const MODIFIERS = new Set([
  'private',
  'public',
  'protected',
  'meta',
  'noncomputable',
  'partial',
  'unsafe',
  'nonrec',
  'scoped',
  'local',
]);
/**
 * Every token that starts a command in Lean 4 with Mathlib: the one list the declaration finder and the
 * editor's splice rule (backend/editor/splice.ts) share. Sources:
 * - Lean core: `@[builtin_command_parser]` / `: command` syntax in src/Lean/Parser/Command.lean and
 *   Syntax.lean (leanprover/lean4 00298d03), plus the commands core defines elsewhere (options, simprocs,
 *   grind, config elaborators, widgets, `run_cmd`, …);
 * - Batteries: every `syntax|elab|macro … : command` and `@[command_parser]` of
 *   leanprover-community/batteries 45f65c8b (scanned: `alias`, `lemma`, `library_note`, `open private`,
 *   `proof_wanted`, `theorem_wanted`, `def_wanted`, `instance_wanted`, `#…`);
 * - Mathlib, Aesop, Plausible, ProofWidgets: their command syntax, cross-checked against a token list derived
 *   from Lean v4.33.0 and Mathlib db584cd6 with its dependencies.
 * Left out on purpose: Lake's DSL (`package`, `require`, `target`, `script`, `lean_lib`, …), whose words are
 * keywords only in a lakefile and are ordinary names in a proof. `#…` commands are recognised by their `#`.
 * The list cannot be complete for every library, so its users also fail closed on shape: `isCommandWord`
 * takes any `foo?`/`foo!` variant of a listed word, and `declare_…`/`register_…`/`builtin_…`/
 * `initialize_…` words; the splice rule adds a column rule (splice.ts `cutToBody`).
 */
const COMMAND_KEYWORDS: ReadonlySet<string> = new Set([
  // Lean core: scopes, options, variables, declarations and their modifiers
  'import',
  'open',
  'set_option',
  'namespace',
  'section',
  'end',
  'end_local_scope',
  'with_weak_namespace',
  'variable',
  'universe',
  'include',
  'omit',
  'attribute',
  'export',
  'mutual',
  'deriving',
  'theorem',
  'lemma',
  'def',
  'example',
  'abbrev',
  'instance',
  'structure',
  'inductive',
  'coinductive',
  'class',
  'axiom',
  'opaque',
  'private',
  'public',
  'protected',
  'meta',
  'noncomputable',
  'partial',
  'unsafe',
  'nonrec',
  'scoped',
  'local',
  'seal',
  'unseal',
  'init_quot',
  'docs_to_verso',
  'gen_injective_theorems',
  'gen_injective_theorems%',
  'add_decl_doc',
  'register_tactic_tag',
  'tactic_extension',
  'recommended_spelling',
  'register_error_explanation',
  'assert_not_exists',
  'assert_not_imported',
  // Lean core: syntax, macros, elaborators, code run at elaboration time
  'macro',
  'macro_rules',
  'syntax',
  'elab',
  'elab_rules',
  'elab_stx_quot',
  'declare_syntax_cat',
  'binder_predicate',
  'notation',
  'infix',
  'infixl',
  'infixr',
  'prefix',
  'postfix',
  'initialize',
  'builtin_initialize',
  'run_cmd',
  'run_elab',
  'run_meta',
  'unif_hint',
  'register_option',
  'register_builtin_option',
  'register_simp_attr',
  'register_label_attr',
  'register_linter_set',
  'register_grind_attr',
  'register_sym_simp',
  'register_sym_dsimp',
  'register_sym_simp_attr',
  'register_try?_tactic',
  'declare_simp_like_tactic',
  'declare_config_elab',
  'declare_config_elab_legacy',
  'declare_command_config_elab',
  'declare_command_config_elab_legacy',
  'declare_core_config_elab',
  'declare_term_config_elab',
  'make_elab_simp_config',
  'make_elab_grind_config',
  'simproc',
  'simproc_decl',
  'simproc_pattern',
  'dsimproc',
  'dsimproc_decl',
  'builtin_simproc',
  'builtin_simproc_decl',
  'builtin_simproc_pattern',
  'builtin_dsimproc',
  'builtin_dsimproc_decl',
  'cbv_simproc',
  'cbv_simproc_decl',
  'cbv_simproc_pattern',
  'builtin_cbv_simproc',
  'builtin_cbv_simproc_decl',
  'builtin_cbv_simproc_pattern',
  'grind_pattern',
  'grind_annotated',
  'grind_propagator',
  'builtin_grind_propagator',
  'init_grind_norm',
  'reset_grind_attrs',
  'norm_cast_add_elim',
  'show_panel_widgets',
  'set_library_suggestions',
  'test_extern',
  'declare_uint_theorems',
  'declare_int_theorems',
  'declare_bitwise_uint_theorems',
  'declare_bitwise_int_theorems',
  'declare_uint_simprocs',
  'declare_sint_simprocs',
  'wait_for_cancel_once_command',
  // Batteries
  'alias',
  'library_note',
  'proof_wanted',
  'theorem_wanted',
  'def_wanted',
  'instance_wanted',
  // Mathlib (and Aesop, Plausible)
  'notation3',
  'variable?',
  'variables',
  'irreducible_def',
  'aux_def',
  'suppress_compilation',
  'unsuppress_compilation',
  'initialize_simps_projections',
  'compile_inductive',
  'compile_def',
  'mk_iff_of_inductive_prop',
  'extend_docs',
  'recall',
  'whatsnew',
  'count_heartbeats',
  'guard_min_heartbeats',
  'unset_option',
  'sudo',
  'deprecate',
  'deprecated_module',
  'deprecated_syntax',
  'assert_exists',
  'assert_no_sorry',
  'name_poly_vars',
  'name_power_vars',
  'register_hint',
  'insert_to_additive_translation',
  'to_additive_name_hint',
  'to_dual_name_hint',
  'to_dual_insert_cast',
  'to_dual_insert_cast_fun',
  'lrat_proof',
  'reprove',
  'guard_decl',
  'flex?',
  'stop_at_first_error',
  'unlock_limits',
  'postprocess_traces',
  'add_aesop_rules',
  'erase_aesop_rules',
  'declare_aesop_rule_sets',
  'declare_aesop_exception',
  'register_aesop_check_option',
  'derive_eval_expr_instance_using_meta_eval',
  'ensure_eval_expr_instance',
  'ensure_eval_term_instance',
  'ensure_eval_term_expr_instances',
  'def_eval_config_item',
  'declare_eval_bin',
  'declare_eval_bin_bitwise',
  'declare_eval_bin_bool_pred',
]);

/** `foo?!` → `foo`: the variants Lean libraries define beside a command (`variable?`, `recall?`, `#eval!`). */
export function commandStem(word: string): string {
  return word.replace(/[?!]+$/u, '');
}

/**
 * Whether a word starts a command: a listed word or a `?`/`!` variant of one, or a word shaped like the
 * commands libraries keep adding (`declare_…`, `register_…`, `builtin_…`, `initialize_…`).
 * `#…` words are not judged here (their callers treat every `#` word as a command).
 */
export function isCommandWord(word: string): boolean {
  if (COMMAND_KEYWORDS.has(word) || COMMAND_KEYWORDS.has(commandStem(word))) return true;
  return /^(declare|register|builtin|initialize)_\p{L}/u.test(word);
}

/**
 * Command words that, followed by `… in` on their line, prefix the next tactic or term instead (Lean's
 * `open … in`, `set_option … in`, Mathlib's `sudo set_option … in`, `count_heartbeats in`).
 */
const SCOPED_PREFIXES: ReadonlySet<string> = new Set(['open', 'set_option', 'sudo', 'count_heartbeats']);

/** Words in the list that begin a declaration of their own (with its modifiers): not "other commands". */
const DECL_OR_MODIFIER: ReadonlySet<string> = new Set([...DECL_KINDS, ...MODIFIERS]);

/** Whether a line-starting word opens a command which is not a declaration (`deriving` only as `deriving instance`). */
function isOtherCommand(word: string, rest: string): boolean {
  if (word === 'deriving') return /^\s+instance(?![\p{L}\p{N}_'!?])/u.test(rest);
  return !DECL_OR_MODIFIER.has(word) && isCommandWord(word);
}
// Not commands: `termination_by`, `decreasing_by`, `partial_fixpoint`, `deriving <class>` and `where` at
// column 0 continue the declaration above them.

function isIdentChar(ch: string | undefined): boolean {
  return ch !== undefined && /[\p{L}\p{N}_'!?.₀-₉ₐ-ₜᵢ-ᵪ]/u.test(ch);
}

/** The whole codepoint ending just before / starting at a UTF-16 offset (astral letters like 𝔸 included). */
function charBefore(s: string, i: number): string | undefined {
  if (i <= 0) return undefined;
  const low = s.charCodeAt(i - 1);
  return low >= 0xdc00 && low <= 0xdfff && i >= 2 ? s.slice(i - 2, i) : s[i - 1];
}
function charAt(s: string, i: number): string | undefined {
  const cp = s.codePointAt(i);
  return cp === undefined ? undefined : String.fromCodePoint(cp);
}

interface Masked {
  text: string;
  /** The source with only the comments blanked: where a command really ends (a string or char literal may end it). */
  withLiterals: string;
  docs: { start: number; end: number; body: string }[];
}

/**
 * Replaces comments, strings and char literals by spaces (newlines kept), recording doc comments.
 * They are found by the one lexer (lexer.ts), so this and the untrusted-code filter never disagree on what is code.
 */
export function maskLean(src: string): Masked {
  if (lastMasked?.src === src) return lastMasked.masked; // one file's statements read it again and again
  const masked = maskLeanUncached(src);
  lastMasked = { src, masked };
  return masked;
}
let lastMasked: { src: string; masked: Masked } | undefined;

function maskLeanUncached(src: string): Masked {
  const trivia: Trivia[] = [];
  lexLean(src, trivia);
  const out = src.split('');
  const withLiterals = src.split('');
  const docs: Masked['docs'] = [];
  for (const t of trivia) {
    const comment = t.kind === 'comment' || t.kind === 'doc';
    for (let k = t.start; k < t.end; k++) {
      if (out[k] === '\n') continue;
      out[k] = ' ';
      if (comment) withLiterals[k] = ' ';
    }
    if (t.kind === 'doc')
      docs.push({ start: t.start, end: t.end, body: src.slice(t.start + 3, Math.max(t.start + 3, t.end - 2)).trim() });
  }
  return { text: out.join(''), withLiterals: withLiterals.join(''), docs };
}

interface Command {
  start: number;
  end: number;
  word: string;
  /** A declaration made by a command the finder does not know (customCommandLine). */
  custom?: true;
}

/**
 * Words that begin terms and tactics, never a project's own declaration command: a column-0 line starting with
 * one of them is never taken for a custom declaration (a proof may be written at column 0).
 */
const NOT_CUSTOM_COMMANDS = new Set(
  (
    'by fun have haveI let letI show suffices set replace obtain rcases rintro intro intros calc match if then else do ' +
    'return at with from using generalize exact exacts refine apply simp simpa rw rwa cases induction conv case next ' +
    'all_goals any_goals focus nth_rewrite field_simp norm_num linarith nlinarith omega decide constructor use exists ' +
    'change unfold dsimp simp_all aesop tauto ring ring_nf positivity gcongr congr ext funext subst symm rfl exfalso ' +
    'contradiction by_contra by_cases push_neg interval_cases fin_cases choose lift specialize clear revert rename_i ' +
    'sorry admit done stop on_goal pick_goal swap first try repeat iterate classical infer_instance apply_fun convert ' +
    'filter_upwards bound trans trivial assumption left right split injection norm_cast push_cast exact_mod_cast ' +
    'termination_by decreasing_by deriving where forall exists Type Sort Prop'
  ).split(' '),
);

/** Whether the masked line before the one starting at `lineStart` is blank (or there is none). */
function afterBlankLine(masked: string, lineStart: number): boolean {
  if (lineStart === 0) return true;
  const before = masked.lastIndexOf('\n', lineStart - 2);
  return masked.slice(before + 1, lineStart - 1).trim() === '';
}

/**
 * A column-0 line that starts a command of the project's own, which Lean needs the project's syntax to read: the
 * word is no known command and begins no term or tactic, the line before is blank (or the file starts here), and the
 * command above left no column-0 line right under its code (a proof written at column 0 goes on at column 0, so
 * it is never cut). A tactic block indented past column 0 cannot go on at column 0 (Lean's `checkColGe`), so such a
 * line begins the next command. `'declaration'` when it has the shape `<word> <name> … : … := …` up to the next
 * blank line (`problem foo (x : ℕ) : P x := by …`, `determine answer : ℕ := 5` in a competition archive), else
 * `'command'` (`snip end`, `problem_file { … }`); null when it starts nothing.
 */
function customCommandLine(
  masked: string,
  lineStart: number,
  word: string,
  continued: boolean,
): 'declaration' | 'command' | null {
  if (continued || word === '' || word.startsWith('#') || isCommandWord(word) || NOT_CUSTOM_COMMANDS.has(word))
    return null;
  if (!/^[\p{L}_]/u.test(word) || !afterBlankLine(masked, lineStart)) return null;
  if (!/^[\p{L}_][\p{L}\p{N}_']*\s+[\p{L}_«][^\s(:{[⦃⟨]*/u.test(masked.slice(lineStart, lineStart + 300)))
    return 'command';
  const blank = /\n[ \t\r]*\n/u.exec(masked.slice(lineStart));
  const paragraph = masked.slice(lineStart, blank ? lineStart + blank.index : masked.length);
  return /:(?!=)/u.test(paragraph) && paragraph.includes(':=') ? 'declaration' : 'command';
}

/**
 * An indented `open … in` / `set_option … in` line is a declaration prefix only when a declaration starts
 * on the next non-blank line (as tactics, the same words prefix a tactic instead).
 */
function isIndentedPrefix(masked: string, from: number, word: string): boolean {
  if (word !== 'open' && word !== 'set_option') return false;
  const lineEnd = masked.indexOf('\n', from);
  if (lineEnd < 0 || !/\sin\s*$/u.test(masked.slice(from, lineEnd))) return false;
  const next = /^\s*(@\[|[\p{L}_][\p{L}\p{N}_!?']*)/u.exec(masked.slice(lineEnd + 1, lineEnd + 200));
  return next !== null && (next[1] === '@[' || DECL_KINDS.has(next[1]) || MODIFIERS.has(next[1]));
}

/** The line from `from` holds an `in` word (an `open … in` / `set_option … in` prefix). */
function hasIn(masked: string, from: number): boolean {
  const lineEnd = masked.indexOf('\n', from);
  return /(^|\s)in(\s|$)/u.test(masked.slice(from, lineEnd < 0 ? masked.length : lineEnd));
}

/**
 * Whether the attribute list `@[…]` at `at` stands before a declaration keyword or modifier (an indented
 * `@[simp] theorem`), rather than before a `where` auxiliary (`  @[simp] aux : P := …`), which belongs to the
 * declaration above.
 */
function attributesPrefixDeclaration(masked: string, at: number): boolean {
  let i = at;
  for (let depth = 0; i < masked.length; i++) {
    if (masked[i] === '[') depth++;
    else if (masked[i] === ']' && --depth === 0) break;
  }
  const next = /^\s*(@\[|[\p{L}_][\p{L}\p{N}_!?']*)/u.exec(masked.slice(i + 1, i + 200))?.[1] ?? '';
  return next === '@['
    ? attributesPrefixDeclaration(masked, i + 1 + masked.slice(i + 1).indexOf('@['))
    : DECL_KINDS.has(next) || MODIFIERS.has(next) || isCommandWord(next);
}

/** Command starts in masked text, each running to the next start (trailing blanks excluded). */
function commands(masked: string, withLiterals: string): Command[] {
  const starts: { start: number; word: string; custom?: true }[] = [];
  const re = /^([ \t]*)(@\[|[^\s]+)/gmu;
  let continued = false;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    const word = m[2] === '@[' ? '@[' : (/^[#\p{L}_][\p{L}\p{N}_!?']*/u.exec(m[2])?.[0] ?? '');
    const indented = m[1].length > 0;
    // Indented lines start a command only with words that cannot begin a tactic or a term (Lean reads an
    // indented `variable`, `include`, `instance`… after a proof as the next command, so they end it here too);
    // `open`/`set_option`/`sudo set_option` do only without `… in` (with it they prefix a tactic or term).
    const after = m.index + m[0].length;
    const rest = masked.slice(after, after + 40);
    const scopedPrefix = SCOPED_PREFIXES.has(word);
    const starts_ = indented
      ? (word === '@[' && attributesPrefixDeclaration(masked, m.index + m[1].length)) ||
        DECL_KINDS.has(word) ||
        MODIFIERS.has(word) ||
        (!scopedPrefix && isOtherCommand(word, rest)) ||
        (scopedPrefix && !hasIn(masked, after)) ||
        isIndentedPrefix(masked, after, word)
      : word === '@[' ||
        DECL_KINDS.has(word) ||
        MODIFIERS.has(word) ||
        isOtherCommand(word, rest) ||
        word.startsWith('#');
    if (starts_) {
      starts.push({ start: m.index + m[1].length, word });
      continued = false;
    } else if (!indented) {
      const custom = customCommandLine(masked, m.index, word, continued);
      if (custom !== null) starts.push({ start: m.index, word, ...(custom === 'declaration' ? { custom: true } : {}) });
      // a column-0 line right under code that starts nothing: the command above goes on at column 0
      else if (!afterBlankLine(masked, m.index)) continued = true;
    }
  }
  return starts.map((s, k) => {
    let end = k + 1 < starts.length ? starts[k + 1].start : masked.length;
    while (end > s.start && /\s/.test(withLiterals[end - 1])) end--;
    return { start: s.start, end, word: s.word, ...(s.custom ? { custom: true as const } : {}) };
  });
}

/** `ownStart`: where the first attribute, modifier or keyword stands (-1 when the command holds only `… in` prefixes). */
interface Head {
  kind: string;
  keywordEnd: number;
  prefixOnly: boolean;
  ownStart: number;
}

/** Skips attributes, modifiers and `open … in` from `start`; returns the keyword that follows, if any. */
function readHead(masked: string, start: number, end: number): Head {
  let i = start,
    ownStart = -1;
  for (;;) {
    while (i < end && /\s/.test(masked[i])) i++;
    if (i >= end) return { kind: '', keywordEnd: i, prefixOnly: true, ownStart };
    const word = /^[\p{L}_][\p{L}\p{N}_!?']*/u.exec(masked.slice(i, i + 40))?.[0] ?? '';
    if (ownStart < 0 && word !== 'open' && word !== 'set_option') ownStart = i;
    if (masked.startsWith('@[', i)) {
      let depth = 0;
      for (; i < end; i++) {
        if (masked[i] === '[') depth++;
        else if (masked[i] === ']' && --depth === 0) {
          i++;
          break;
        }
      }
      continue;
    }
    if (MODIFIERS.has(word)) {
      i += word.length;
      continue;
    }
    if (word === 'open' || word === 'set_option') {
      // `open Foo in` / `set_option name value in`: a prefix of the command that follows.
      const rest = masked.slice(i, end);
      const inMatch = /\sin(?=\s|$)/u.exec(rest);
      if (inMatch) {
        i += inMatch.index + inMatch[0].length;
        continue;
      }
      return { kind: word, keywordEnd: i + word.length, prefixOnly: false, ownStart: i };
    }
    return { kind: word, keywordEnd: i + word.length, prefixOnly: false, ownStart };
  }
}

/** The lexer's tokens of a source with their UTF-16 spans (the last source's are kept: its statements are read again and again). */
export function sourceTokens(source: string): { tokens: Token[]; spans: { start: number; end: number }[] } {
  if (lastTokens?.source !== source) {
    const tokens = lexLean(source);
    lastTokens = { source, tokens, spans: tokenSpans(source, tokens) };
  }
  return lastTokens;
}
let lastTokens: { source: string; tokens: Token[]; spans: { start: number; end: number }[] } | undefined;

/** Index of the first span starting at or after `offset`. */
export function firstTokenAt(spans: readonly { start: number }[], offset: number): number {
  let lo = 0,
    hi = spans.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (spans[mid].start < offset) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Where the proof of the declaration over [from, to) starts (proofStart, source/statementEnd.ts), as an offset, and
 * where the clause after it starts (trailingClause), if any.
 */
function signatureEnd(
  source: string,
  from: number,
  to: number,
): { kind: ProofStartKind; offset: number; trailer: { word: string; offset: number } | null } | null {
  const { tokens, spans } = sourceTokens(source);
  const end = firstTokenAt(spans, to);
  const found = proofStart(tokens, firstTokenAt(spans, from), end);
  if (!found) return null;
  const after = found.kind === 'where' ? null : trailingClause(tokens, found.token + 1, end);
  const trailer = after === null ? null : { word: tokens[after].text, offset: spans[after].start };
  return { kind: found.kind, offset: spans[found.token].start, trailer };
}

/** Offsets of every whole-word `sorry` in the masked text, in order (one pass). */
function sorryOffsets(masked: string): number[] {
  const found: number[] = [];
  const re = /sorry/g;
  for (let m = re.exec(masked); m; m = re.exec(masked)) {
    if (!isIdentChar(charBefore(masked, m.index)) && !isIdentChar(charAt(masked, m.index + 5))) found.push(m.index);
  }
  return found;
}

/** The sorries in [from, to): `all` sorted, found by binary search (so every declaration costs its own sorries only). */
function sorriesIn(all: number[], from: number, to: number, pos: PositionIndex): SourcePos[] {
  let lo = 0,
    hi = all.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (all[mid] < from) lo = mid + 1;
    else hi = mid;
  }
  const found: SourcePos[] = [];
  for (let k = lo; k < all.length && all[k] < to; k++) found.push(pos.at(all[k]));
  return found;
}

/** Every declaration in `source`, in order. */
export function findDeclarations(source: string): Declaration[] {
  if (lastFound?.source !== source) lastFound = { source, found: findDeclarationsUncached(source) };
  return lastFound.found.slice(); // one file's statements read it again and again
}
let lastFound: { source: string; found: Declaration[] } | undefined;

function findDeclarationsUncached(source: string): Declaration[] {
  const { text: masked, withLiterals, docs } = maskLean(source);
  const pos = new PositionIndex(source);
  const cmds = commands(masked, withLiterals);
  const sorryAt = sorryOffsets(masked);
  const result: Declaration[] = [];
  const namespaces: { kind: 'namespace' | 'section' | 'mutual'; name: string }[] = [];
  let prefixStart = -1,
    headStart = -1,
    docAt = 0;
  for (const cmd of cmds) {
    const head = readHead(masked, cmd.start, cmd.end);
    if (headStart < 0) headStart = head.ownStart;
    if (head.prefixOnly) {
      if (prefixStart < 0) prefixStart = cmd.start;
      continue;
    }
    const start = prefixStart >= 0 ? prefixStart : cmd.start;
    const headAt = headStart;
    prefixStart = -1;
    headStart = -1;
    // scopes per name component, as Lean follows them: `namespace A.B` opens two, `end B` closes one, and
    // `mutual` opens one that its `end` closes
    if (head.kind === 'namespace' || head.kind === 'section' || head.kind === 'mutual') {
      const name = head.kind === 'mutual' ? '' : masked.slice(head.keywordEnd, cmd.end).trim();
      const parts = name === '' ? [''] : components(name);
      for (const part of parts) namespaces.push({ kind: head.kind, name: part });
      continue;
    }
    if (head.kind === 'end') {
      const name = masked.slice(head.keywordEnd, cmd.end).trim();
      const parts = name === '' ? [''] : components(name);
      for (let k = 0; k < parts.length; k++) namespaces.pop();
      continue;
    }
    if (!DECL_KINDS.has(head.kind) && !cmd.custom) continue;
    const nameMatch = /^\s+((?:«[^»]*»|[^\s(:{[⦃⟨«])+)/u.exec(masked.slice(head.keywordEnd, cmd.end));
    const name = head.kind === 'example' || !nameMatch || nameMatch[1] === 'where' ? '' : nameMatch[1];
    const proof = signatureEnd(source, head.keywordEnd, cmd.end);
    const assign = proof?.kind === ':=' ? proof.offset : -1;
    let statement: string,
      body: Declaration['body'] = null,
      tactic = false;
    if (assign >= 0) {
      const after = /^:=\s*by(?![\p{L}\p{N}_'])/u.exec(masked.slice(assign, assign + 400));
      tactic = after !== null;
      const bodyStart = assign + (after ? after[0].length : 2);
      statement = source.slice(start, assign) + ':= by';
      body = { start: pos.at(bodyStart), end: pos.at(cmd.end) };
    } else {
      statement = source.slice(start, cmd.end);
    }
    while (docAt < docs.length && docs[docAt].end <= start) docAt++;
    const before = docs[docAt - 1];
    const doc = before && source.slice(before.end, start).trim() === '' ? before : undefined;
    if (cmd.custom && assign < 0) continue;
    result.push({
      kind: cmd.custom ? 'custom' : (head.kind as DeclarationKind),
      command: head.kind,
      proof: proof ? { kind: proof.kind, start: pos.at(proof.offset) } : null,
      trailer: proof?.trailer ? { word: proof.trailer.word, start: pos.at(proof.trailer.offset) } : null,
      name,
      namespace: namespaces
        .filter((n) => n.kind === 'namespace')
        .map((n) => n.name)
        .join('.'),
      start: pos.at(start),
      head: pos.at(headAt),
      end: pos.at(cmd.end),
      statement,
      body,
      signatureEnd: assign >= 0 ? pos.at(assign + 2) : null,
      tactic,
      docComment: doc ? doc.body : null,
      sorries: sorriesIn(sorryAt, start, cmd.end, pos),
    });
  }
  return result;
}

/** Kinds the verifier audits and reports per declaration (types and classes have no proof to audit). */
export type AuditedKind = 'theorem' | 'lemma' | 'example' | 'def' | 'abbrev' | 'instance' | 'axiom' | 'opaque';
const AUDITED_KINDS = new Set<string>(['theorem', 'lemma', 'example', 'def', 'abbrev', 'instance', 'axiom', 'opaque']);

/** A declaration keyword of an audited kind, with the declared name made full (namespaces included; `''` for `example`). */
export interface DeclarationHead {
  kind: AuditedKind;
  name: string;
  line: number;
  column: number;
}

/**
 * Every audited declaration keyword among the lexer's tokens, wherever it stands (mid-line too): the
 * verifier's view, which no layout trick can hide a declaration from. `findDeclarations` reads the
 * same source by command lines, for statements and bodies.
 */
export function findDeclarationHeads(source: string, tokens: Token[] = lexLean(source)): DeclarationHead[] {
  // scopes per name component, as Lean and the audit plan (auditPlan.ts) follow them: `namespace A.B`
  // opens two, `end B` closes one, so the names here are the names the audit reports
  const scopes: { kind: 'namespace' | 'section' | 'mutual'; name: string }[] = [];
  const out: DeclarationHead[] = [];
  const prefix = (): string =>
    scopes
      .filter((s) => s.kind === 'namespace')
      .map((s) => s.name + '.')
      .join('');
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind !== 'ident') continue;
    const next = tokens[k + 1];
    if (t.text === 'namespace' && next?.kind === 'ident') {
      for (const part of components(next.text)) scopes.push({ kind: 'namespace', name: part });
      k++;
      continue;
    }
    if (t.text === 'mutual') {
      scopes.push({ kind: 'mutual', name: '' });
      continue;
    }
    if (t.text === 'section' || t.text === 'end') {
      const named = next?.kind === 'ident' && next.line === t.line;
      const parts = named ? components(next.text) : [''];
      for (const part of parts) {
        if (t.text === 'section') scopes.push({ kind: 'section', name: part });
        else scopes.pop();
      }
      if (named) k++;
      continue;
    }
    if (!AUDITED_KINDS.has(t.text)) continue;
    const kind = t.text as AuditedKind;
    let name = '';
    if (kind !== 'example' && next?.kind === 'ident' && !AUDITED_KINDS.has(next.text)) {
      const parts = components(next.text);
      name = plain(parts[0]) === '_root_' ? parts.slice(1).join('.') : prefix() + next.text;
      k++;
    }
    out.push({ kind, name, line: t.line, column: t.column });
  }
  return out;
}

/** The text before the first declaration (imports, options, opens, …), trailing blank lines removed. */
export function headerOf(source: string): string {
  const first = findDeclarations(source)[0];
  const upto = first ? first.start.offset : source.length;
  const doc = first
    ? maskLean(source).docs.find((d) => d.end <= upto && source.slice(d.end, upto).trim() === '')
    : undefined;
  return source.slice(0, doc ? doc.start : upto).trimEnd();
}

export interface FormalStatement {
  /**
   * Header, then (in file order) the scope commands in force and the earlier declarations the theorem may
   * use, then the theorem ending in `:= by` (no `sorry`).
   */
  text: string;
  declaration: Declaration;
  /** The doc comment, to use as the informal problem. */
  informal: string | null;
  /** Names of earlier declarations left out because they use `sorry` (or use one that does). */
  leftOut: string[];
}

const SCOPE_COMMANDS = new Set([
  'open',
  'set_option',
  'namespace',
  'section',
  'end',
  'variable',
  'universe',
  'include',
  'omit',
]);

/**
 * What every formal statement of one source needs, computed once in one pass (linear in the source): the
 * header, the scope commands after it (`open`, `namespace`, `section`, `end`, `variable`, `set_option`,
 * `universe`, `include`, `omit`), and per declaration whether an earlier-declarations context keeps it.
 */
interface StatementIndex {
  source: string;
  header: string;
  decls: Declaration[];
  scope: { offset: number; text: string }[];
  tokens: Token[];
  /** UTF-16 offset of each token's start. */
  tokenStarts: number[];
}

let lastIndex: StatementIndex | undefined;

function statementIndex(source: string): StatementIndex {
  if (lastIndex?.source === source) return lastIndex;
  const header = headerOf(source);
  const decls = findDeclarations(source);
  const { text: masked, withLiterals } = maskLean(source);
  const scope: { offset: number; text: string }[] = [];
  let prefixStart = -1;
  for (const cmd of commands(masked, withLiterals)) {
    if (cmd.start < header.length) continue;
    const head = readHead(masked, cmd.start, cmd.end);
    if (head.prefixOnly) {
      if (prefixStart < 0) prefixStart = cmd.start;
      continue;
    }
    const start = prefixStart >= 0 ? prefixStart : cmd.start;
    prefixStart = -1;
    if (SCOPE_COMMANDS.has(commandStem(head.kind)))
      scope.push({ offset: start, text: source.slice(start, cmd.end).trim() });
  }
  const tokens = lexLean(source);
  lastIndex = { source, header, decls, scope, tokens, tokenStarts: tokenSpans(source, tokens).map((t) => t.start) };
  return lastIndex;
}

/**
 * Which declarations a later one may use: every earlier one except `example`s (nothing can use them), those
 * holding a `sorry` (a sorry in the trusted context would make every verdict `sorry`), those named in
 * `exclude` (as if they held one), and those that mention a name left out for these reasons (they would not
 * compile without it). "Mentions": an identifier of the declaration has the left-out name's last component
 * as one of its components. One pass over the tokens of the first `upto` declarations.
 */
function keptDeclarations(index: StatementIndex, upto: number, exclude: ReadonlySet<string>): Kept {
  const { decls, tokens, tokenStarts } = index;
  const leftOutShort = new Set<string>();
  const leftOutNames: string[] = [];
  const leftOutBefore: number[] = [];
  const kept: boolean[] = [];
  let t = 0;
  for (let i = 0; i < upto; i++) {
    const d = decls[i];
    leftOutBefore.push(leftOutNames.length);
    while (t < tokens.length && tokenStarts[t] < d.start.offset) t++;
    if (d.kind === 'example') {
      kept.push(false);
      continue;
    }
    let uses = d.sorries.length > 0 || (d.name !== '' && exclude.has(d.name));
    for (let k = t; !uses && leftOutShort.size > 0 && k < tokens.length && tokenStarts[k] < d.end.offset; k++) {
      const tok = tokens[k];
      if (tok.kind === 'ident' && components(tok.text).some((c) => leftOutShort.has(plain(c)))) uses = true;
    }
    kept.push(!uses);
    if (uses && d.name) {
      leftOutNames.push(d.name);
      const short = plain(components(d.name).pop() ?? d.name);
      if (short) leftOutShort.add(short);
    }
  }
  leftOutBefore.push(leftOutNames.length);
  return { kept, leftOutNames, leftOutBefore };
}

interface Kept {
  /** Per declaration (same order as the index's): kept as context for later ones. */
  kept: boolean[];
  /** Names left out, in order, and per declaration how many were left out before it. */
  leftOutNames: string[];
  leftOutBefore: number[];
}
let lastKept: { index: StatementIndex; kept: Kept } | undefined;

/**
 * Builds the standalone formal statement for `decl` of `source`: the header, then the scope commands in
 * force and the earlier sorry-free declarations in file order, then the theorem up to `:= by`. A file with
 * one theorem (miniF2F) gets the header, scope commands and theorem only, exactly as before. Linear in the
 * source for the first statement of a source, and in the statement's own length for every further one.
 */
export function formalStatementOf(
  source: string,
  decl: Declaration,
  options: { exclude?: ReadonlySet<string> } = {},
): FormalStatement {
  const index = statementIndex(source);
  const { header } = index;
  let at = index.decls.findIndex((d) => d.start.offset === decl.start.offset);
  if (at < 0) at = index.decls.filter((d) => d.start.offset < decl.start.offset).length;
  let known: Kept;
  if (options.exclude && options.exclude.size > 0) known = keptDeclarations(index, at, options.exclude);
  else {
    if (lastKept?.index !== index) lastKept = { index, kept: keptDeclarations(index, index.decls.length, new Set()) };
    known = lastKept.kept;
  }
  const context: string[] = [];
  let s = 0;
  for (let k = 0; k < at; k++) {
    const d = index.decls[k];
    while (s < index.scope.length && index.scope[s].offset < d.start.offset) context.push(index.scope[s++].text);
    if (known.kept[k]) context.push(source.slice(d.start.offset, d.end.offset).trim());
  }
  while (s < index.scope.length && index.scope[s].offset < decl.start.offset) context.push(index.scope[s++].text);
  const leftOut = known.leftOutNames.slice(0, known.leftOutBefore[at]);
  const parts = [header, ...context, decl.statement.trim()].filter((p) => p !== '');
  return { text: parts.join('\n\n'), declaration: decl, informal: decl.docComment, leftOut };
}

/**
 * Picks the declaration to prove: by name (with or without namespace), by 1-based line (inside its range),
 * or, with neither, the only provable one / the first provable one holding a `sorry`.
 */
export function selectDeclaration(source: string, target: { name?: string; line?: number } = {}): Declaration {
  const all = findDeclarations(source);
  const provable = all.filter((d) => PROVABLE_KINDS.includes(d.kind));
  if (target.name !== undefined) {
    const wanted = target.name;
    const hit = provable.find((d) => d.name === wanted || (d.namespace && `${d.namespace}.${d.name}` === wanted));
    if (!hit) {
      const names = provable.map((d) => d.name || '(example)').join(', ');
      throw new Error(`no theorem named '${wanted}' in the code${names ? ` (found: ${names})` : ''}`);
    }
    return hit;
  }
  if (target.line !== undefined) {
    const line = target.line;
    const hit = all.find((d) => d.start.line <= line && line <= d.end.line);
    if (!hit) throw new Error(`no declaration at line ${line}`);
    if (!PROVABLE_KINDS.includes(hit.kind))
      throw new Error(`the declaration at line ${line} is a ${hit.kind}, not a theorem, lemma or example`);
    return hit;
  }
  if (provable.length === 0) throw new Error('the code holds no theorem, lemma or example');
  if (provable.length === 1) return provable[0];
  const withSorry = provable.find((d) => d.sorries.length > 0);
  if (withSorry) return withSorry;
  throw new Error(`the code holds ${provable.length} theorems; name the one to prove`);
}

/** One top-level command of a source, as the finder splits it. */
export interface LeanCommand {
  /**
   * Its word: the keyword after attributes, modifiers and `open … in` prefixes (`theorem`, `open`, `namespace`,
   * `notation`, `#eval`, a project's own `problem`); `section` for `noncomputable section` / `public section`.
   */
  word: string;
  /** `declaration` (one of findDeclarations', custom ones included), `scope` (`open`, `namespace`, `section`, `end`,
   * `variable`, `universe`, `include`, `omit`, `set_option`), else `other`. */
  kind: 'declaration' | 'scope' | 'other';
  /** From its first character (prefixes included) to one past its last non-blank one. */
  start: SourcePos;
  end: SourcePos;
}

/** Every top-level command of `source` after its header, in order: declarations, scope commands and the rest. */
export function commandsOf(source: string): LeanCommand[] {
  const { text: masked, withLiterals } = maskLean(source);
  const pos = new PositionIndex(source);
  const out: LeanCommand[] = [];
  let prefixStart = -1;
  for (const cmd of commands(masked, withLiterals)) {
    const head = readHead(masked, cmd.start, cmd.end);
    if (head.prefixOnly) {
      if (prefixStart < 0) prefixStart = cmd.start;
      continue;
    }
    const start = prefixStart >= 0 ? prefixStart : cmd.start;
    prefixStart = -1;
    if (head.kind === 'import' || head.kind === 'module' || head.kind === 'prelude') continue;
    const word = head.kind !== '' ? head.kind : cmd.word;
    const kind =
      DECL_KINDS.has(word) || cmd.custom ? 'declaration' : SCOPE_COMMANDS.has(commandStem(word)) ? 'scope' : 'other';
    out.push({ word, kind, start: pos.at(start), end: pos.at(cmd.end) });
  }
  return out;
}
