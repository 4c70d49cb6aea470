// The untrusted-code filter: a candidate proof is text written by a model, so before it reaches Lean
// we refuse what can run code inside the checker or change the rules of checking. Works on tokens
// (comments and string literals never trigger a rule). Every rule is listed in `untrustedRules`.
import { lexLean, type Token } from './lexer';

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
  'hash-command': 'only read-only `#` commands are allowed (#check, #print, #reduce, #synth, …); #eval, #exit, #guard, #test and others run code or stop checking',
  'meta-command': 'commands that define or run elaborators, macros, syntax or initialisers (run_cmd, run_tac, elab, macro, syntax, initialize, simproc, …) run arbitrary code inside Lean',
  'unsafe': '`unsafe` code escapes the kernel and can do IO',
  'axiom-declaration': '`axiom` and `opaque` add unproved facts or hide implementations',
  'attribute': 'attributes that swap implementations or register code (extern, implemented_by, export, init, csimp, tactic, command_elab, macro, delab, builtin_*, …)',
  'kernel-option': 'options that weaken checking or write files (debug.*, compiler.*, interpreter.*, trace.profiler.output)',
  'native-decide': '`native_decide`, `bv_decide`, `decide +native` and `Lean.ofReduceBool` trust compiled code (allowed only when configured)',
  'meta-api': 'meta-programming and IO entry points (addDecl, modifyEnv, evalConst, unsafeIO, IO, include_str, …) have no place in a proof',
  'import-in-body': '`import` is only allowed in the header at the top of the snippet',
};

const allowedHashCommands = new Set([
  '#check', '#check_failure', '#print', '#reduce', '#synth', '#help', '#guard_msgs', '#norm_num', '#simp',
  '#conv', '#find', '#where', '#lint', '#min_imports', '#align', '#align_import', '#noalign',
]);
const metaCommands = new Set([
  'run_cmd', 'run_tac', 'run_elab', 'run_meta', 'by_elab', 'elab', 'elab_rules', 'macro', 'macro_rules', 'syntax',
  'declare_syntax_cat', 'initialize', 'builtin_initialize', 'simproc', 'dsimproc', 'simproc_decl', 'dsimproc_decl',
  'builtin_simproc', 'builtin_dsimproc', 'builtin_simproc_decl', 'test_extern', 'declare_config_elab',
  'declare_command_config_elab', 'add_decl_doc_elab',
]);
const bannedAttributes = new Set([
  'extern', 'implemented_by', 'export', 'init', 'csimp', 'macro', 'tactic', 'command_elab', 'term_elab',
  'delab', 'app_delab', 'app_unexpander', 'simproc', 'env_linter', 'command_parser', 'term_parser', 'tactic_parser',
  'code_action_provider', 'tactic_code_action', 'command_code_action', 'hole_code_action', 'widget', 'widget_module',
]);
const nativeIdents = new Set(['native_decide', 'bv_decide', 'bv_check', 'ofReduceBool', 'reduceBool', 'trustCompiler']);
const metaApi = new Set([
  'addDecl', 'addAndCompile', 'compileDecl', 'compileDecls', 'modifyEnv', 'setEnv', 'evalConst', 'evalConstCheck',
  'evalDecl', 'evalExpr', 'unsafeIO', 'unsafeBaseIO', 'unsafeEIO', 'unsafeCast', 'ptrAddrUnsafe', 'IO', 'FS',
  'Process', 'include_str', 'liftCommandElabM', 'runCommandElabM', 'liftCoreM', 'ofExcept',
]);

function optionBanned(name: string): boolean {
  return /^(debug|compiler|interpreter)\./.test(name) || name === 'trace.profiler.output' || name.startsWith('trace.profiler.output');
}

/** Finds what the filter refuses in `code`; `headerLines` leading lines may hold imports. */
export function findUntrustedCode(code: string, policy: UntrustedPolicy = {}, headerLines = 0, tokens: Token[] = lexLean(code)): Rejection[] {
  const found: Rejection[] = [];
  const reject = (t: Token, rule: string, what: string): void => {
    found.push({ rule, message: `${what}: ${untrustedRules[rule]}`, line: t.line, column: t.column, endLine: t.endLine, endColumn: t.endColumn });
  };
  let attributeDepth = 0; // inside @[…] or attribute […]
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    const prev = tokens[k - 1];
    const next = tokens[k + 1];
    if (t.kind === 'command') {
      const name = t.text.replace(/!+$/, '');
      if (!allowedHashCommands.has(name)) reject(t, 'hash-command', `'${t.text}' is not allowed`);
      continue;
    }
    if (t.kind === 'symbol') {
      if (t.text === '@[') attributeDepth = 1;
      else if (attributeDepth > 0 && t.text === '[') attributeDepth++;
      else if (attributeDepth > 0 && t.text === ']') attributeDepth--;
      continue;
    }
    if (t.kind !== 'ident' && t.kind !== 'name') continue;
    // «x» is the same name as x: compare without the guillemets
    const text = t.text.replace(/[«»]/g, '');
    const parts = text.split('.');
    const last = parts[parts.length - 1];
    if (t.kind === 'ident' && text === 'attribute' && next?.text === '[') { attributeDepth = 1; k++; continue; }
    if (attributeDepth > 0 && (bannedAttributes.has(text) || text.startsWith('builtin_'))) {
      reject(t, 'attribute', `attribute '${text}' is not allowed`);
      continue;
    }
    if (t.kind === 'ident' && text === 'import' && t.line > headerLines) { reject(t, 'import-in-body', "'import' after the header"); continue; }
    if (t.kind === 'ident' && (metaCommands.has(text) || text.startsWith('register_'))) { reject(t, 'meta-command', `'${text}' is not allowed`); continue; }
    if (t.kind === 'ident' && (text === 'unsafe' || text === 'implemented_by' || text === 'extern')) {
      reject(t, text === 'unsafe' ? 'unsafe' : 'attribute', `'${text}' is not allowed`);
      continue;
    }
    if (t.kind === 'ident' && (text === 'axiom' || text === 'opaque')) { reject(t, 'axiom-declaration', `'${text}' declarations are not allowed`); continue; }
    if (t.kind === 'ident' && text === 'set_option' && next && (next.kind === 'ident') && optionBanned(next.text.replace(/[«»]/g, ''))) {
      reject(next, 'kernel-option', `option '${next.text}' is not allowed`);
      k++;
      continue;
    }
    if (!policy.allowNativeDecide) {
      const nativeFlag = last === 'native' && (prev?.text === '+' || tokens[k + 1]?.text === ':=');
      if (nativeFlag || parts.some((p) => nativeIdents.has(p))) { reject(t, 'native-decide', `'${text}' is not allowed`); continue; }
    }
    if (parts.some((p) => metaApi.has(p))) { reject(t, 'meta-api', `'${text}' is not allowed`); continue; }
  }
  return found;
}
