// The agent tools' one adapter onto today's checking, proving and splicing APIs: the per-declaration verdict
// (lean/perDeclaration.ts), the declaration finders (lean/declarations.ts, ./leanSource.ts), the editor's prove
// (./editorProve.ts) and the splice rule (./splice.ts). Everything the agent tools need from those goes through
// here, so that a change of those APIs (one source reader, user-file checking) is re-pointed in this one file.
//
// Trust follows authorship (docs/security.md): a `path` whose text is exactly the file's last commit is the user's
// file, checked as Lean elaborates it in its own project (no filter on the user's own commands, every declaration
// still audited); text differing from the last commit (an agent may have written it), a file git does not know,
// and `code` are untrusted text, held to the strict rules. Both finders (lean/declarations.ts and ./leanSource.ts,
// a layer over it with the reader's sorries) are the one source reader's.
import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import type {
  AgentAttemptSummary,
  AgentMessage,
  Attempt,
  CheckToolAnswer,
  DeclarationCheck,
  EditorProveResult,
  LspProveEvent,
  ProofEdit,
  ProveOrigin,
  ReplMessage,
  SorryTarget,
} from '../protocol';
import { replPosToLsp } from '../protocol';
import { findDeclarations as findLeanDeclarations, type Declaration as LeanDeclaration } from '../lean/declarations';
import { verdictsPerDeclaration } from '../lean/perDeclaration';
import type { AxiomPolicy } from '../lean/verdict';
import { proveInEditor } from './editorProve';
import { findDeclarations, offsetAt, positionAt, standaloneSnippet, type Declaration } from './leanSource';
import { gainedVariables } from './sectionVariables';
import type { CheckAnswer, ProveService } from './service';
import { proofBodyOf, spliceVerifiedProof } from './splice';

/** What checking needs: Lean (the prove service's verifier) and the axioms an agent's proof may use. */
export interface AgentChecker {
  /** Untrusted text (the strict rules: filtered, audited). */
  check(code: string, signal?: AbortSignal): Promise<CheckAnswer>;
  /** The user's own file at `path` (no filter on its own commands; audited), in its own project. */
  checkUserFile?(text: string, path: string, signal?: AbortSignal): Promise<CheckAnswer>;
  /** Agents are held to the strict policy: the configured allow-list, never native_decide's axioms. */
  policy: AxiomPolicy;
}

const oneLine = (s: string): string => s.replace(/\s+/g, ' ').trim();

function message(m: ReplMessage): AgentMessage {
  return {
    severity: m.severity,
    line: m.pos.line,
    column: m.pos.column,
    ...(m.endPos ? { endLine: m.endPos.line, endColumn: m.endPos.column } : {}),
    text: m.data,
  };
}

function fullName(d: LeanDeclaration): string {
  return d.namespace && d.name ? `${d.namespace}.${d.name}` : d.name;
}

/** The statement: from the declaration's keyword to its `:=` (without a trailing `by`). */
function statementOf(d: LeanDeclaration): string {
  return d.statement.trim().replace(/\s*:=\s*(by)?$/, '');
}

function byName(text: string): Map<string, LeanDeclaration> {
  return new Map(
    findLeanDeclarations(text)
      .filter((d) => d.name)
      .map((d) => [fullName(d), d]),
  );
}

export interface CheckInput {
  text: string;
  path?: string;
  /** `path`: the file as last committed (null when git knows no committed version), and that commit. */
  committed?: { commit: string | null; text: string | null };
  /** Lean text naming the statements to hold the declarations to. */
  reference?: string;
  /** The absolute path of a `path` check, for checking it as the user's file when it is unchanged since its commit. */
  absPath?: string;
  signal?: AbortSignal;
}

/** The text is the user's file: exactly its last committed version (nothing an agent wrote since). */
function isUsersCommittedFile(input: CheckInput): boolean {
  return input.absPath !== undefined && input.committed?.text != null && input.committed.text === input.text;
}

/** The strict verdict per declaration, with hidden hypotheses and changed statements called out. */
export async function checkText(checker: AgentChecker, input: CheckInput): Promise<CheckToolAnswer> {
  const { text } = input;
  const asUser = isUsersCommittedFile(input) && checker.checkUserFile !== undefined;
  const outcome = asUser
    ? await checker.checkUserFile!(text, input.absPath!, input.signal)
    : await checker.check(text, input.signal);
  const verdict = outcome.verdict;
  const { declarations: verdicts, fileProblems } = verdictsPerDeclaration(text, outcome, checker.policy, 'strict');
  const decls = findLeanDeclarations(text);
  const gained = gainedVariables(text);
  const committed = input.committed?.text != null ? byName(input.committed.text) : null;
  const committedDecls = input.committed?.text != null ? findLeanDeclarations(input.committed.text) : [];
  const reference = input.reference !== undefined ? byName(input.reference) : null;
  const heads = verdicts.map((v) => v.line);
  const problems: string[] = [];

  const declarations = verdicts.map((v, i): DeclarationCheck => {
    const decl = decls.find((d) => d.start.line <= v.line && v.line <= d.end.line);
    const last = i + 1 < heads.length ? heads[i + 1] - 1 : Number.MAX_SAFE_INTEGER;
    const out: DeclarationCheck = {
      kind: v.kind,
      name: v.name,
      line: v.line,
      status: v.status,
      reason: v.reason,
      ...(v.axioms ? { axioms: v.axioms } : {}),
      messages: verdict.messages.filter((m) => m.pos.line >= v.line && m.pos.line <= last).map(message),
      statement: decl ? statementOf(decl) : '',
    };
    const label = `${v.kind} ${v.name}`;
    const g = decl ? gained.get(decl.start.offset) : undefined;
    if (g) {
      out.elaborated = { statement: g.elaborated, gained: g.binders.map((b) => b.text) };
      if (g.hidden.length) {
        out.status = 'rejected';
        out.reason = `Lean elaborates the statement with hypotheses from \`include\` that it does not show: ${g.hidden.map((b) => b.text).join(' ')}; it proves \`${oneLine(out.elaborated.statement)}\`, not the statement as written`;
      }
    }
    if (out.status !== 'valid') problems.push(`${label} (line ${v.line}): ${out.status}: ${out.reason}`);
    if (decl && input.committed) {
      const own = oneLine(text.slice(decl.start.offset, decl.end.offset));
      const before = decl.name ? committed?.get(fullName(decl)) : undefined;
      out.unchangedSinceCommit = committedDecls.some(
        (c) => oneLine(input.committed!.text!.slice(c.start.offset, c.end.offset)) === own,
      );
      if (committed && decl.name) {
        if (!before) out.statementVsCommit = 'new';
        else if (oneLine(statementOf(before)) === oneLine(out.statement)) out.statementVsCommit = 'same';
        else {
          out.statementVsCommit = 'changed';
          out.committedStatement = statementOf(before);
          problems.push(`${label}: its statement differs from the last commit's (${oneLine(out.committedStatement)})`);
        }
      }
    }
    if (reference && decl?.name) {
      const ref = reference.get(fullName(decl));
      if (!ref) out.statementVsReference = 'absent';
      else if (oneLine(statementOf(ref)) === oneLine(out.statement)) out.statementVsReference = 'same';
      else {
        out.statementVsReference = 'changed';
        out.referenceStatement = statementOf(ref);
        problems.push(`${label}: its statement differs from the reference (${oneLine(out.referenceStatement)})`);
      }
    }
    return out;
  });
  const names = new Set(decls.map(fullName));
  const missing = reference ? [...reference.keys()].filter((n) => !names.has(n)) : [];
  for (const n of missing) problems.push(`the reference's ${n} is not in the checked text`);
  for (const m of fileProblems) problems.push(`line ${m.pos.line}: ${m.data.split('\n')[0]}`);
  if (verdict.status !== 'valid' && !problems.length) problems.push(`${verdict.status}: ${verdict.reason}`);
  if (verdicts.length === 0 && verdict.status === 'valid') problems.push('the text declares nothing to check');
  return {
    ok: problems.length === 0 && verdict.status === 'valid',
    status: verdict.status,
    reason: verdict.reason,
    declarations,
    fileMessages: fileProblems.map(message),
    problems,
    ...(input.path !== undefined ? { path: input.path } : {}),
    ...(input.committed ? { commit: input.committed.commit } : {}),
    ...(input.path !== undefined ? { checkedAs: asUser ? ('user_file' as const) : ('untrusted' as const) } : {}),
    ...(reference ? { missingFromReference: missing } : {}),
  };
}

/** `git` with the base environment handed down; null when git fails (no repository, no such file in HEAD). */
function git(args: string[], cwd: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  return new Promise((resolve) => {
    execFile('git', args, { cwd, env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout) => resolve(err ? null : stdout));
  });
}

/** The file as of the last commit of its repository: null text when it has none (new file, no repository). */
export async function committedVersion(
  absPath: string,
  env: NodeJS.ProcessEnv,
): Promise<{ commit: string | null; text: string | null }> {
  const dir = dirname(absPath);
  const commit = (await git(['rev-parse', '--verify', '-q', 'HEAD'], dir, env))?.trim() || null;
  if (!commit) return { commit: null, text: null };
  const rel = (await git(['ls-files', '--full-name', '--', absPath], dir, env))?.trim();
  if (!rel) return { commit, text: null };
  const text = await git(['show', `HEAD:${rel.split('\n')[0]}`], dir, env);
  return { commit, text };
}

/** The sorries of one file, with the goal Lean states at each where it gives one. */
export async function sorriesOf(
  checker: AgentChecker,
  path: string,
  text: string,
  signal?: AbortSignal,
): Promise<SorryTarget[]> {
  const decls = findDeclarations(text).filter((d) => d.sorries.length > 0);
  if (decls.length === 0) return [];
  const listed = (await checker.check(text, signal)).response?.sorries ?? [];
  return decls.flatMap((d) =>
    d.sorries.map((s): SorryTarget => {
      const theirs = listed.find((r) => {
        if (!r.pos) return false;
        const p = replPosToLsp(text, r.pos);
        return p.line === s.line && p.character === s.character;
      });
      return {
        path,
        declaration: d.name,
        kind: d.kind,
        line: s.line + 1,
        column: s.character,
        ...(theirs?.goal ? { goal: theirs.goal } : {}),
      };
    }),
  );
}

/** What a prove or repair job works on in the file's text: the declaration and the editor's mode. */
export interface JobTarget {
  decl: Declaration;
  mode: 'theorem' | 'goal' | 'repair';
  /** 0-based position the editor's prove is pointed at. */
  position: { line: number; character: number };
}

/** The declaration named `theorem` (full or last component), or the one at 1-based `line` (a sorry there: its goal). */
export function pickTarget(
  text: string,
  want: { theorem?: string; line?: number; repair?: boolean },
): JobTarget | string {
  const decls = findDeclarations(text).filter((d) => ['theorem', 'lemma', 'example'].includes(d.kind));
  let decl: Declaration | undefined;
  if (want.theorem !== undefined) {
    const name = want.theorem;
    decl = decls.find((d) => d.name === name) ?? decls.find((d) => d.name.split('.').pop() === name);
    if (!decl) return `no theorem, lemma or example named '${name}' in the file`;
  } else if (want.line !== undefined) {
    const line = want.line - 1;
    decl = decls.find((d) => d.startLine <= line && line <= d.endLine);
    if (!decl) return `no theorem, lemma or example at line ${want.line}`;
    const site = decl.sorries.find((s) => s.line === line);
    if (site && !want.repair)
      return {
        decl,
        mode: 'goal',
        position: { line: site.line, character: site.character },
      };
  } else {
    return 'name the theorem or give a line';
  }
  return { decl, mode: want.repair ? 'repair' : 'theorem', position: positionAt(text, decl.start) };
}

/** The first declaration Lean rejects in the file (for `repair` without a theorem), or why there is none. */
export async function firstBroken(checker: AgentChecker, text: string, signal?: AbortSignal): Promise<string | null> {
  const answer = await checkText(checker, { text, signal });
  const broken = answer.declarations.find(
    (d) => d.status === 'lean_error' && ['theorem', 'lemma'].includes(d.kind) && d.name,
  );
  return broken ? broken.name : null;
}

export function attemptSummary(a: Attempt): AgentAttemptSummary {
  return {
    sample: a.sample,
    turn: a.turn,
    status: a.verdict?.status ?? 'no_proof',
    reason: a.verdict?.reason ?? (a.format.ok ? 'no proof could be extracted' : a.format.error || 'format error'),
  };
}

/** Runs the editor's own prove (or repair) on the file's text: the result holds the verified edit when proved. */
export function proveTarget(
  service: ProveService,
  id: string,
  text: string,
  target: JobTarget,
  onAttempt: (a: Attempt) => void,
  signal: AbortSignal,
  origin: ProveOrigin,
): Promise<EditorProveResult> {
  const emit = (e: LspProveEvent) => {
    if (e.type === 'attempt') onAttempt(e.attempt);
  };
  const params = { id, code: text, position: target.position, mode: target.mode };
  return proveInEditor(params, text, service, emit, signal, origin);
}

/** The text an edit replaces in `text`. */
export function replacedBy(text: string, edit: ProofEdit): string {
  const from = offsetAt(text, edit.range.start.line, edit.range.start.character);
  const to = offsetAt(text, edit.range.end.line, edit.range.end.character);
  return text.slice(from, to);
}

/**
 * A proof into the file as it is now, as the editor's Accept puts it: the text the edit replaces must still be
 * there, and the splice rule re-checks the declaration with Lean exactly as it will be written.
 */
export async function spliceNow(
  service: ProveService,
  text: string,
  proof: { declaration: string; body: string; edit: ProofEdit; replaced: string; mode: 'theorem' | 'goal' | 'repair' },
  signal?: AbortSignal,
  /** The file the text is (its absolute path): every check runs in its Lean project. */
  origin?: ProveOrigin,
): Promise<{ ok: true; newText: string } | { ok: false; problem: string }> {
  if (replacedBy(text, proof.edit) !== proof.replaced)
    return { ok: false, problem: 'the file changed where the proof goes since the job ran: prove it again' };
  const decls = findDeclarations(text);
  const at = offsetAt(text, proof.edit.range.start.line, proof.edit.range.start.character);
  const decl = decls.find((d) => d.name === proof.declaration && d.start <= at && at <= d.end);
  if (!decl) return { ok: false, problem: `${proof.declaration} is no longer where the proof goes` };
  const check = (code: string, s?: AbortSignal) => service.check(code, s, origin);
  let spliced;
  if (proof.mode === 'goal') {
    const site = decl.sorries.find((s) => s.offset === at);
    if (!site) return { ok: false, problem: `the sorry the proof closes is no longer in ${decl.name}` };
    const { code } = standaloneSnippet(text, decl, decls);
    const before = await service.check(code, signal, origin);
    const listedBefore = (before.response?.sorries ?? before.verdict.sorries).length;
    spliced = await spliceVerifiedProof({
      text,
      target: { kind: 'sorry', decl, site, listedBefore },
      proof: proof.body,
      check,
      signal,
    });
  } else {
    spliced = await spliceVerifiedProof({ text, target: { kind: 'body', decl }, proof: proof.body, check, signal });
  }
  return spliced.ok ? { ok: true, newText: spliced.newText } : { ok: false, problem: spliced.problem };
}

/** The verified proof text a prove result carries (what followed the statement's `:= by`), for a later splice. */
export function verifiedBody(result: EditorProveResult, declaration: string): string | null {
  if (result.tactics) return result.tactics;
  if (!result.proof) return null;
  const decls = findDeclarations(result.proof);
  const decl = decls.find((d) => d.name === declaration) ?? decls[decls.length - 1];
  return decl ? proofBodyOf(result.proof, decl) : null;
}
