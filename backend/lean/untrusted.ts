// The untrusted-code filter: a candidate proof is text written by a model, so before it reaches Lean
// we refuse what can run code inside the checker or change the rules of checking. It fails closed:
// - it reads the text with the lexer that follows Lean's tokenizer (lexer.ts), and refuses any text
//   Lean would reject or could read otherwise (unterminated literals, stray characters, …);
// - attributes, `#` commands and options are allowed by list (what proofs need), everything else refused;
// - meta-programming and IO are refused by namespace (`Lean`, `IO`, `System`, `Mathlib.Tactic`, …),
//   including `open`/`namespace`/`export` of them, so no list of function names has to be complete.
// Comments and string literals never trigger a rule; code inside `{…}` of any string does.
import { lexLean, lexLeanFull, type Token } from './lexer';
import { readHeader } from './source/moduleHeader';
import { NOTATION_COMMANDS } from './source/keywords';

export interface UntrustedPolicy {
  /** Allow `native_decide`, `bv_decide`, `decide +native` (they trust the compiler). */
  allowNativeDecide?: boolean;
}

export interface Rejection {
  rule: string;
  /** One sentence for a person: what was found and why it is refused. */
  message: string;
  line: number;
  column: number;
  endLine: number;
  endColumn: number;
}

/** The rules, for docs and error messages. */
export const untrustedRules: Record<string, string> = {
  lexical:
    'Lean would reject this text or could read it differently from the filter, which then cannot tell what is code',
  'hash-command':
    'only read-only `#` commands are allowed (#check, #print, #reduce, #synth, …); #eval, #exit, #guard and others run code or stop checking, #guard_msgs hides errors',
  'meta-command':
    'commands that define or run elaborators, macros, notations, syntax or initialisers (run_cmd, run_tac, elab, macro, notation, syntax, initialize, simproc, …) run code inside Lean or change what the statement means',
  unsafe: '`unsafe` code escapes the kernel and can do IO',
  'axiom-declaration': '`axiom` and `opaque` add unproved facts or hide implementations',
  attribute:
    'only attributes proofs need are allowed (simp, ext, norm_cast, reducible, instance, …); others register code that tactics run (norm_num, positivity, simproc, tactic, …) or swap implementations (extern, implemented_by, csimp)',
  'kernel-option':
    'only options that do not weaken checking are allowed (maxHeartbeats, maxRecDepth, pp.*, linter.*, trace.*, …); debug.*, compiler.*, interpreter.* and the rest are refused',
  'native-decide':
    '`native_decide`, `bv_decide`, `decide +native`, `plausible` and `Lean.ofReduceBool` trust compiled code (allowed only when configured)',
  'meta-api':
    'meta-programming and IO (the Lean, IO, System and tactic-framework namespaces, unsafe casts, include_str) have no place in a proof',
  header:
    'the header may hold only `module`, imports (`public`, `meta`, `all`) and comments, one module per `import`: it is sent to Lean rebuilt from the module names (Mathlib… collapsed)',
  'import-in-body':
    '`import` is only allowed in the header at the top of the snippet, and `prelude` (no standard library, so no `Init` tokens) not at all',
};

/**
 * `#` commands that only read. `#guard_msgs` is not among them: it hides the messages of the command it
 * wraps, errors included, and an error such as "'t' has already been declared" stops a declaration
 * from being added while the audit then answers for the other constant of that name.
 */
const allowedHashCommands: ReadonlySet<string> = new Set([
  '#check',
  '#check_failure',
  '#print',
  '#reduce',
  '#synth',
  '#help',
  '#norm_num',
  '#simp',
  '#conv',
  '#find',
  '#where',
  '#lint',
  '#min_imports',
  '#align',
  '#align_import',
  '#noalign',
]);

/**
 * Attributes a proof may use: simp sets, reducibility, instances, lemma registrations for tactics
 * (ext, norm_cast, gcongr, aesop, …) and bookkeeping. `aesop` is allowed: its rules are lemmas or
 * tactic syntax, and a rule that runs code needs a `TacticM` definition, which the namespace rule refuses.
 */
const allowedAttributes: ReadonlySet<string> = new Set([
  'simp',
  'norm_cast',
  'push_cast',
  'ext',
  'reducible',
  'irreducible',
  'semireducible',
  'implicit_reducible',
  'inline',
  'noinline',
  'specialize',
  'instance',
  'refl',
  'symm',
  'trans',
  'congr',
  'gcongr',
  'mono',
  'bound',
  'aesop',
  'fun_prop',
  'continuity',
  'measurability',
  'field_simps',
  'zify_simps',
  'qify_simps',
  'nontriviality',
  'simps',
  'to_additive',
  'mk_iff',
  'nolint',
  'deprecated',
  'inherit_doc',
  'match_pattern',
  'elab_as_elim',
  'induction_eliminator',
  'cases_eliminator',
  'coe',
  'pp_nodot',
  'grind',
  // the module system: a definition's body is visible to importers (changes no check, runs nothing)
  'expose',
]);

/**
 * Options allowed by exact name, and by prefix (`trace.profiler.output` is refused despite `trace.`).
 * `warn.sorry` only silences the warning; the axiom audit still sees `sorryAx` (the cheat corpus checks).
 */
const allowedOptions: ReadonlySet<string> = new Set([
  'warn.sorry',
  'maxHeartbeats',
  'maxRecDepth',
  'maxSynthPendingDepth',
  'autoImplicit',
  'relaxedAutoImplicit',
  'profiler',
  'diagnostics',
  'warningAsError',
  'simprocs',
  'tactic.hygienic',
  'exponentiation.threshold',
  'push_neg.use_distrib',
  'synthInstance.maxHeartbeats',
  'synthInstance.maxSize',
]);
/**
 * `doc.*` is not among them: `doc.verso true` makes Lean elaborate the Lean code blocks and roles inside
 * doc comments, which this filter reads as comments (so it would not see code there).
 */
const allowedOptionPrefixes: readonly string[] = ['pp.', 'linter.', 'trace.', 'profiler.', 'diagnostics.', 'backward.'];
function optionAllowed(name: string): boolean {
  if (name.startsWith('trace.profiler.output')) return false;
  return allowedOptions.has(name) || allowedOptionPrefixes.some((p) => name.startsWith(p));
}

/**
 * Namespaces of meta-programming, IO and tactic implementations: any name inside them is refused, and
 * so is opening or entering them. Names in `Lean` are all refused: the kernel's, the elaborator's,
 * the compiler's and the environment's APIs live there.
 */
const metaNamespaces: readonly string[] = [
  'Lean',
  'IO',
  'EIO',
  'BaseIO',
  'System',
  'Std.Internal',
  'Std.Tactic',
  'Lake',
  'Mathlib.Tactic',
  'Mathlib.Meta',
  'Mathlib.Util',
  'Mathlib.Lean',
  'Mathlib.Linter',
  'Mathlib.Command',
  'Batteries.Tactic',
  'Batteries.Lean',
  'Batteries.Util',
  'Batteries.CodeAction',
  'Aesop',
  'Qq',
  'Plausible',
  'ProofWidgets',
  'Linarith',
  'Polyrith',
];
/** Roots that hold meta namespaces: opening them would bring `Tactic.…` and the like into scope. */
const metaParents = new Set(['Mathlib', 'Std', 'Batteries']);

const metaCommands = new Set([
  'run_cmd',
  'run_tac',
  'run_elab',
  'run_meta',
  'by_elab',
  'elab',
  'elab_rules',
  'macro',
  'macro_rules',
  'syntax',
  'initialize',
  'simproc',
  'dsimproc',
  'simproc_decl',
  'dsimproc_decl',
  'test_extern',
  ...NOTATION_COMMANDS,
  'binder_predicate',
  'unif_hint',
]);
const metaCommandPrefixes = ['register_', 'declare_', 'builtin_'];
const nativeWords = new Set([
  'native_decide',
  'bv_decide',
  'bv_check',
  'ofReduceBool',
  'reduceBool',
  'trustCompiler',
  'plausible',
  'slim_check',
]);
/** Allowed with `allowNativeDecide` although they are in `Lean`. */
const nativeLeanNames = new Set(['Lean.ofReduceBool', 'Lean.reduceBool', 'Lean.trustCompiler']);

/** Components of a name as Lean reads it: `«»` dropped, a leading `_root_` dropped. */
function nameParts(text: string): string[] {
  const parts = text.replace(/[«»]/g, '').split('.');
  return parts[0] === '_root_' ? parts.slice(1) : parts;
}
function inMetaNamespace(parts: string[]): string | undefined {
  const full = parts.join('.');
  if (parts.length === 1 && metaParents.has(full)) return full;
  return metaNamespaces.find((ns) => full === ns || full.startsWith(ns + '.'));
}
/** `unsafeIO`, `unsafeCast`, `ptrAddrUnsafe`, …: root-level escapes from the type system. */
const unsafeFunction = (part: string): boolean => /^unsafe[A-Z]/.test(part) || part.includes('Unsafe');

/** Finds what the filter refuses in `code`; `headerLines` leading lines may hold imports. */
export function findUntrustedCode(
  code: string,
  policy: UntrustedPolicy = {},
  headerLines = 0,
  _tokens?: Token[],
): Rejection[] {
  // `_tokens` is accepted for older callers and ignored: the filter always lexes `code` itself, so the
  // lexical problems it must refuse are never lost.
  const { tokens, problems } = lexLeanFull(code);
  const found: Rejection[] = problems.map((p) => ({
    rule: 'lexical',
    message: `${p.message}: ${untrustedRules.lexical}`,
    ...pos(p),
  }));
  const header = headerProblems(code, headerLines);
  found.push(...header.found);
  const reject = (t: Token, rule: string, what: string): void => {
    found.push({ rule, message: `${what}: ${untrustedRules[rule]}`, ...pos(t) });
  };
  const attributes = new AttributeReader(reject);
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    const prev = tokens[k - 1];
    const next = tokens[k + 1];
    // the header holds only `module`, `prelude` and imports (headerProblems): nothing else to read there
    if (t.line < header.bodyAt.line || (t.line === header.bodyAt.line && t.column < header.bodyAt.column)) continue;
    if (attributes.read(t, prev)) continue;
    if (t.kind === 'command') {
      const name = t.text.replace(/[!?]+$/, '');
      if (!allowedHashCommands.has(name)) reject(t, 'hash-command', `'${t.text}' is not allowed`);
      continue;
    }
    if (t.kind !== 'ident' && t.kind !== 'name') continue;
    const parts = nameParts(t.text);
    const text = parts.join('.');
    const keyword = t.kind === 'ident' && parts.length === 1 ? text : undefined;
    if (keyword === 'prelude') {
      reject(t, 'import-in-body', "'prelude' is not allowed");
      continue;
    }
    if (keyword === 'import') {
      reject(t, 'import-in-body', "'import' after the header");
      continue;
    }
    if (
      keyword !== undefined &&
      (metaCommands.has(keyword) || metaCommandPrefixes.some((p) => keyword.startsWith(p)))
    ) {
      reject(t, 'meta-command', `'${keyword}' is not allowed`);
      continue;
    }
    if (keyword === 'unsafe') {
      reject(t, 'unsafe', "'unsafe' is not allowed");
      continue;
    }
    if (keyword === 'implemented_by' || keyword === 'extern') {
      reject(t, 'attribute', `'${keyword}' is not allowed`);
      continue;
    }
    if (keyword === 'axiom' || keyword === 'opaque') {
      reject(t, 'axiom-declaration', `'${keyword}' declarations are not allowed`);
      continue;
    }
    if (keyword === 'set_option') {
      const option =
        next && (next.kind === 'ident' || next.kind === 'name') ? nameParts(next.text).join('.') : undefined;
      if (option === undefined || !optionAllowed(option)) {
        reject(
          next ?? t,
          'kernel-option',
          option === undefined ? "'set_option' without an option name" : `option '${option}' is not allowed`,
        );
      }
      if (option !== undefined) k++;
      continue;
    }
    const native =
      nativeWords.has(parts[parts.length - 1]) ||
      nativeLeanNames.has(text) ||
      (keyword === 'native' && (prev?.text === '+' || next?.text === ':='));
    if (native) {
      if (!policy.allowNativeDecide) reject(t, 'native-decide', `'${text}' is not allowed`);
      if (nativeLeanNames.has(text) || nativeWords.has(text)) continue;
    }
    if (keyword === 'include_str') {
      reject(t, 'meta-api', "'include_str' is not allowed");
      continue;
    }
    const namespace = inMetaNamespace(parts);
    if (namespace !== undefined) {
      reject(t, 'meta-api', `'${text}' is in the meta namespace '${namespace}'`);
      continue;
    }
    if (parts.some(unsafeFunction)) {
      reject(t, 'meta-api', `'${text}' is not allowed`);
    }
  }
  return found.sort((a, b) => a.line - b.line || a.column - b.column);
}

/**
 * What the header (`headerLines` leading lines, as splitHeader counts them) may not hold: `prelude`, and what
 * Lean's header grammar refuses there (`import A B`, an import without a module; readHeader's problems). The
 * header is sent to Lean rebuilt from the module names readHeader found with the same lexer, so comments there
 * hide nothing that Lean runs. Also where the body starts: tokens before it are the header's.
 */
function headerProblems(
  code: string,
  headerLines: number,
): { found: Rejection[]; bodyAt: { line: number; column: number } } {
  if (headerLines <= 0) return { found: [], bodyAt: { line: 1, column: 0 } };
  const read = readHeader(code);
  const bodyAt =
    read.bodyStart.line - 1 === headerLines
      ? { line: read.bodyStart.line, column: read.bodyStart.column }
      : { line: headerLines + 1, column: 0 };
  const before = (p: { line: number; column: number }): boolean =>
    p.line < bodyAt.line || (p.line === bodyAt.line && p.column < bodyAt.column);
  const found: Rejection[] = read.problems
    .filter((p) => before(p.start))
    .map((p) => ({
      rule: 'header',
      message: `${p.message}: ${untrustedRules.header}`,
      line: p.start.line,
      column: p.start.column,
      endLine: p.end.line,
      endColumn: p.end.column,
    }));
  // a comment or literal glued to a module name (`import Mathlib.Tactic/-`, `import A"`): Lean reads it as we do,
  // but nothing a header needs looks like that, and what it hides is dropped from what Lean is sent
  for (const i of read.imports) {
    const after = code[i.moduleEnd.offset];
    if (after !== undefined && !/\s/u.test(after))
      found.push({
        rule: 'header',
        message: `'${after}' right after the module name '${i.module}': ${untrustedRules.header}`,
        line: i.moduleEnd.line,
        column: i.moduleEnd.column,
        endLine: i.moduleEnd.line,
        endColumn: i.moduleEnd.column + 1,
      });
  }
  if (read.prelude && read.bodyStart.line - 1 === headerLines) {
    const t = lexLean(code).find((x) => x.text === 'prelude');
    if (t)
      found.push({
        rule: 'import-in-body',
        message: `'prelude' is not allowed: ${untrustedRules['import-in-body']}`,
        ...pos(t),
      });
  }
  return { found, bodyAt };
}

const pos = (p: { line: number; column: number; endLine: number; endColumn: number }) => ({
  line: p.line,
  column: p.column,
  endLine: p.endLine,
  endColumn: p.endColumn,
});

/**
 * Follows `@[…]` and `attribute […]` lists and checks each attribute's name (after `local`, `scoped`
 * or `-`) against the allow-list; arguments are not names of attributes and pass. Returns true for
 * tokens it has dealt with.
 */
class AttributeReader {
  /** Bracket depth inside the list; 0 outside. */
  private depth = 0;
  private expectName = false;
  constructor(private readonly reject: (t: Token, rule: string, what: string) => void) {}

  read(t: Token, prev: Token | undefined): boolean {
    if (this.depth === 0) {
      const opens =
        (t.kind === 'symbol' && t.text === '@[') ||
        (t.text === '[' && prev?.kind === 'ident' && prev.text === 'attribute');
      if (opens) {
        this.depth = 1;
        this.expectName = true;
      }
      return opens;
    }
    const symbol = t.kind === 'symbol' ? t.text : undefined;
    if (this.depth === 1 && this.expectName && (symbol === ',' || symbol === ']')) {
      // `@["simp"]`, `@[simp,]`: Lean rejects these; a string never counts as a name here
      this.reject(t, 'attribute', 'an attribute list entry without an attribute name');
    }
    if (symbol === '[' || symbol === '(' || symbol === '{') {
      this.depth++;
      return false;
    }
    if (symbol === ']' || symbol === ')' || symbol === '}') {
      this.depth--;
      if (this.depth === 0) this.expectName = false;
      return this.depth === 0;
    }
    if (this.depth === 1 && symbol === ',') {
      this.expectName = true;
      return true;
    }
    if (!this.expectName || this.depth !== 1) return false;
    if (symbol === '-') return true; // `attribute [-simp] foo` erases
    if (t.kind === 'ident' && (t.text === 'local' || t.text === 'scoped')) return true;
    this.expectName = false;
    const name = t.kind === 'ident' ? nameParts(t.text).join('.') : undefined;
    if (name === undefined || !allowedAttributes.has(name)) {
      this.reject(
        t,
        'attribute',
        name === undefined ? `'${t.text}' where an attribute name belongs` : `attribute '${name}' is not allowed`,
      );
      return true;
    }
    return false; // an allowed attribute: its arguments still go through every other rule
  }
}
