// One proof requested from the editor: find the declaration (or the `sorry`) at the cursor, prove it with the
// service, and turn a verified proof into an edit of the user's document. Goal mode proves the sorry's goal as
// a lemma, splices the proof back and has Lean re-check the whole declaration before offering the edit.
import { fileURLToPath } from 'node:url';
import {
  type EditorProveResult,
  type LspProveEvent,
  type ProveOrigin,
  type ProveParams,
  type ReplSorry,
  replPosToLsp,
} from '../protocol';
import {
  type Declaration,
  type SorrySite,
  declarationAt,
  findDeclarations,
  positionAt,
  sorryAt,
  sorryHolderAt,
  standaloneSnippet,
} from './leanSource';
import { goalToLemma } from './goalLemma';
import { proofBodyOf, spliceVerifiedProof } from './splice';
import { type ProveService, checkInFile } from './service';
import { repairDeclaration, requestOptions } from './editorRepair';

type Emit = (event: LspProveEvent) => void;

function declRange(text: string, decl: Declaration) {
  return { name: decl.name, range: { start: positionAt(text, decl.start), end: positionAt(text, decl.end) } };
}

function nothing(
  params: ProveParams,
  mode: EditorProveResult['mode'],
  problem: string,
  decl: EditorProveResult['declaration'] = null,
): EditorProveResult {
  return {
    id: params.id,
    status: 'not_proved',
    proof: null,
    attempts: [],
    mode,
    declaration: decl,
    edit: null,
    problem,
  };
}

function pickDeclaration(text: string, params: ProveParams, decls: Declaration[]): Declaration | null {
  // Any sorry is a target: in goal mode the declaration holding the cursor's sorry may be a def, an abbrev or
  // an instance (its sorry in a `where` clause, a `match` arm or a `have` as well).
  if (params.position && params.mode === 'goal') {
    const holding = sorryHolderAt(decls, params.position.line);
    if (holding) return holding;
  }
  if (params.position) return declarationAt(decls, params.position.line);
  if (params.theorem) return decls.find((d) => d.name === params.theorem) ?? null;
  return declarationAt(decls, positionAt(text, text.length).line);
}

/** The user's file a document URI names (`file:` scheme only); untitled and virtual documents have none. */
export function originOfUri(uri: string | undefined): ProveOrigin | undefined {
  if (!uri?.startsWith('file:')) return undefined;
  try {
    return { file: fileURLToPath(uri) };
  } catch {
    return undefined;
  }
}

/** `service` with every prove and check of one request made for the file it comes from. */
function forOrigin(service: ProveService, origin: ProveOrigin | undefined): ProveService {
  if (!origin) return service;
  return {
    kind: service.kind,
    ...(service.server ? { server: service.server } : {}),
    describe: () => service.describe(),
    prove: (req, onEvent, signal) => service.prove(req, onEvent, signal, origin),
    check: (code, signal) => service.check(code, signal, origin),
    ...(service.checkInFile
      ? { checkInFile: (code, userLength, signal) => service.checkInFile!(code, userLength, signal, origin) }
      : {}),
    close: () => service.close(),
  };
}

/**
 * Proves what the request points at in `text` (the document's contents). `origin`: the file it comes from, by
 * default the request's `file:` URI (checked in that file's own Lean project).
 */
export async function proveInEditor(
  params: ProveParams,
  text: string,
  anyService: ProveService,
  emit: Emit,
  signal: AbortSignal,
  origin: ProveOrigin | undefined = originOfUri(params.uri),
): Promise<EditorProveResult> {
  const service = forOrigin(anyService, origin);
  const mode = params.mode ?? 'theorem';
  const decls = findDeclarations(text);
  const decl = pickDeclaration(text, params, decls);
  if (!decl) return nothing(params, mode, 'No theorem, lemma or example at the cursor.');
  const relay: Emit = (event) => emit({ ...event, id: params.id } as LspProveEvent);
  if (mode === 'repair') return repairDeclaration(params, text, decls, decl, service, relay, signal);
  return mode === 'goal'
    ? proveGoal(params, text, decls, decl, service, relay, signal)
    : proveTheorem(params, text, decls, decl, service, relay, signal);
}

async function proveTheorem(
  params: ProveParams,
  text: string,
  decls: Declaration[],
  decl: Declaration,
  service: ProveService,
  emit: Emit,
  signal: AbortSignal,
): Promise<EditorProveResult> {
  const where = declRange(text, decl);
  if (decl.statementEnd === null)
    return nothing(params, 'theorem', `'${decl.name}' has no ':=' to prove after.`, where);
  const { code } = standaloneSnippet(text, decl, decls);
  emit({ type: 'stage', id: params.id, message: `Proving ${decl.kind} ${decl.name}` });
  emit({ type: 'target', id: params.id, name: decl.name, kind: decl.kind, line: decl.startLine });
  const result = await service.prove(
    { ...requestOptions(params), id: params.id, code, theorem: decl.kind === 'example' ? undefined : decl.name },
    emit,
    signal,
  );
  const base = { ...result, id: params.id, mode: 'theorem' as const, declaration: where, edit: null };
  if (result.status !== 'proved') return base;
  const tactics = result.tactics ?? bodyFromProof(result.proof, decl.name);
  if (!tactics)
    return { ...base, status: 'not_proved', problem: 'The prover reported a proof but sent no proof text.' };
  const spliced = await spliceVerifiedProof({
    text,
    target: { kind: 'body', decl },
    proof: tactics,
    check: checkInFile(service),
    signal,
    onStage: (message) => emit({ type: 'stage', id: params.id, message }),
  });
  if (!spliced.ok) return { ...base, status: 'not_proved', problem: spliced.problem };
  return { ...base, edit: spliced.edit };
}

function bodyFromProof(proof: string | null, name: string): string | null {
  if (!proof) return null;
  const decls = findDeclarations(proof);
  const decl = decls.find((d) => d.name === name) ?? decls[decls.length - 1];
  return decl ? proofBodyOf(proof, decl) : null;
}

/** The REPL's sorry that sits where ours does in the snippet (by position, else by order). */
function matchSorry(
  snippet: string,
  ourOffset: number,
  ours: SorrySite[],
  index: number,
  theirs: ReplSorry[],
): ReplSorry | null {
  const want = positionAt(snippet, ourOffset);
  const byPosition = theirs.find(
    (s) =>
      s.pos &&
      (() => {
        const p = replPosToLsp(snippet, s.pos);
        return p.line === want.line && p.character === want.character;
      })(),
  );
  if (byPosition) return byPosition;
  return theirs.length === ours.length ? theirs[index] : null;
}

function lemmaName(declName: string): string {
  const base = declName
    .split('.')
    .pop()!
    .replace(/[^\p{L}\p{N}_]/gu, '_');
  return `${base || 'kimina'}_goal`;
}

async function proveGoal(
  params: ProveParams,
  text: string,
  decls: Declaration[],
  decl: Declaration,
  service: ProveService,
  emit: Emit,
  signal: AbortSignal,
): Promise<EditorProveResult> {
  const where = declRange(text, decl);
  const position = params.position ?? positionAt(text, decl.sorries[0]?.offset ?? decl.start);
  const site = sorryAt(decl, position.line, position.character);
  if (!site) return nothing(params, 'goal', `No sorry at the cursor in ${decl.name}.`, where);
  emit({ type: 'stage', id: params.id, message: `Asking Lean for the goal at the sorry (line ${site.line + 1})` });
  const { code: snippet, declOffset } = standaloneSnippet(text, decl, decls);
  // the snippet is all the user's text: their own commands (notations, macros, options) elaborated unfiltered
  const before = await checkInFile(service)(snippet, signal, snippet.length);
  const theirs = before.response?.sorries ?? before.verdict.sorries;
  const replSorry = matchSorry(
    snippet,
    declOffset + site.offset - decl.start,
    decl.sorries,
    decl.sorries.indexOf(site),
    theirs,
  );
  if (!replSorry?.goal) {
    return nothing(params, 'goal', `Lean reported no goal for this sorry (${before.verdict.reason}).`, where);
  }
  emit({ type: 'goal', id: params.id, goals: [replSorry.goal], line: site.line });
  const header = snippet.slice(0, declOffset);
  let statement: string;
  try {
    statement = goalToLemma(replSorry.goal, lemmaName(decl.name));
  } catch (err) {
    return nothing(params, 'goal', `Cannot state the goal as a lemma: ${(err as Error).message}`, where);
  }
  emit({ type: 'stage', id: params.id, message: `Proving the goal as a lemma:\n${statement}` });
  const result = await service.prove(
    {
      ...requestOptions(params),
      id: params.id,
      code: `${header}${statement}\n  sorry\n`,
      theorem: lemmaName(decl.name),
    },
    emit,
    signal,
  );
  const base = {
    ...result,
    id: params.id,
    mode: 'goal' as const,
    declaration: where,
    edit: null,
    goal: { statement, recheck: null },
  };
  if (result.status !== 'proved') return base;
  const tactics = result.tactics ?? bodyFromProof(result.proof, lemmaName(decl.name));
  if (!tactics)
    return { ...base, status: 'not_proved', problem: 'The prover reported a proof but sent no proof text.' };
  emit({ type: 'stage', id: params.id, message: 'Re-checking the whole declaration with the proof spliced in' });
  const spliced = await spliceVerifiedProof({
    text,
    target: { kind: 'sorry', decl, site, listedBefore: theirs.length },
    proof: tactics,
    check: checkInFile(service),
    signal,
    onStage: (message) => emit({ type: 'stage', id: params.id, message }),
  });
  if (!spliced.ok) {
    return {
      ...base,
      status: 'not_proved',
      goal: { statement, recheck: spliced.recheck },
      problem: `The lemma was proved, but its proof cannot go into ${decl.name}: ${spliced.problem}`,
    };
  }
  return { ...base, goal: { statement, recheck: spliced.recheck }, edit: spliced.edit };
}
