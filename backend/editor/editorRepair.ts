// Repairing broken proofs from the editor: which declarations of a document Lean rejects (from the client's
// diagnostics, vscode-lean4's when installed, or our own check of the document), and the repair of one of them:
// the prover's repair mode on the declaration's standalone snippet (the file's other broken proofs left out of
// its context), then the splice rule (the body only, re-checked in place) before anything is proposed.
import {
  type BrokenDeclaration,
  type BrokenDeclarationsParams,
  type BrokenDeclarationsResult,
  type ClientDiagnostic,
  type EditorProveResult,
  type LspProveEvent,
  type ProveParams,
  type ProveRequest,
  type ReplMessage,
  replPosToLsp,
} from '../protocol';
import { renameOf } from '../prover/repair';
import { type Declaration, findDeclarations, positionAt, standaloneSnippet } from './leanSource';
import { spliceVerifiedProof } from './splice';
import { type CheckAnswer, type ProveService, checkInFile } from './service';

type Emit = (event: LspProveEvent) => void;
type Check = (code: string, signal?: AbortSignal) => Promise<CheckAnswer>;

const PROVABLE = new Set(['theorem', 'lemma', 'example']);
const UNJUDGED = new Set(['timeout_error', 'server_error', 'repl_error', 'rejected']);

function toDiagnostic(code: string, m: ReplMessage): ClientDiagnostic {
  const start = replPosToLsp(code, m.pos);
  const end = m.endPos ? replPosToLsp(code, m.endPos) : start;
  return { range: { start, end }, severity: m.severity, message: m.data, source: 'kimina' };
}

function renameIn(d: ClientDiagnostic): { from: string; to: string } | null {
  return renameOf({ severity: d.severity, data: d.message, pos: { line: 1, column: 0 }, endPos: null });
}

/** The provable declarations with an error inside, from diagnostics of the document `code`. */
export function brokenFrom(code: string, diagnostics: ClientDiagnostic[]): BrokenDeclaration[] {
  const out: BrokenDeclaration[] = [];
  for (const d of findDeclarations(code)) {
    if (!PROVABLE.has(d.kind)) continue;
    const inside = diagnostics.filter((m) => m.range.start.line >= d.startLine && m.range.start.line <= d.endLine);
    const errors = inside.filter((m) => m.severity === 'error');
    if (errors.length === 0) continue;
    const renames = inside.map(renameIn).filter((r): r is { from: string; to: string } => r !== null);
    out.push({
      name: d.name,
      range: { start: positionAt(code, d.start), end: positionAt(code, d.end) },
      errors: [...errors, ...inside.filter((m) => renameIn(m) !== null)],
      renames,
    });
  }
  return out;
}

/** Which declarations of the document fail: from the client's Lean diagnostics when it has error ones, else from a check. */
export async function findBroken(
  params: BrokenDeclarationsParams,
  check: Check,
  signal?: AbortSignal,
): Promise<BrokenDeclarationsResult> {
  const { uri, code } = params;
  const given = params.diagnostics ?? [];
  if (given.some((d) => d.severity === 'error'))
    return { uri, source: 'diagnostics', declarations: brokenFrom(code, given), diagnostics: [] };
  const { verdict } = await check(code, signal);
  const diagnostics = verdict.messages.map((m) => toDiagnostic(code, m));
  if (UNJUDGED.has(verdict.status))
    return {
      uri,
      source: 'check',
      declarations: [],
      diagnostics,
      problem: `Lean could not check the file: ${verdict.reason}`,
    };
  const decls = findDeclarations(code);
  const firstLine = decls[0]?.startLine ?? Number.MAX_SAFE_INTEGER;
  const headerError = diagnostics.find((d) => d.severity === 'error' && d.range.start.line < firstLine);
  if (headerError)
    return {
      uri,
      source: 'check',
      declarations: [],
      diagnostics,
      problem: `Lean fails on the file's header (line ${headerError.range.start.line + 1}): ${headerError.message.split('\n')[0]}`,
    };
  return { uri, source: 'check', declarations: brokenFrom(code, diagnostics), diagnostics };
}

/** The prove settings of an editor request (a null, which the schema lets through as absent, left out). */
export function requestOptions(params: ProveParams): Omit<ProveRequest, 'code' | 'theorem'> {
  const { samples, fixTurns, temperature, topP, maxTokens, informal } = params;
  return {
    samples: samples ?? undefined,
    fixTurns: fixTurns ?? undefined,
    temperature: temperature ?? undefined,
    topP: topP ?? undefined,
    maxTokens: maxTokens ?? undefined,
    informal: informal ?? undefined,
  };
}

/** Repairs the declaration at the request's position in `text`; proposes an edit only for a repair verified in place. */
export async function repairDeclaration(
  params: ProveParams,
  text: string,
  decls: Declaration[],
  decl: Declaration,
  service: ProveService,
  emit: Emit,
  signal: AbortSignal,
): Promise<EditorProveResult> {
  const where = { name: decl.name, range: { start: positionAt(text, decl.start), end: positionAt(text, decl.end) } };
  const base = {
    id: params.id,
    status: 'not_proved' as const,
    proof: null,
    attempts: [],
    mode: 'repair' as const,
    declaration: where,
    edit: null,
  };
  if (decl.statementEnd === null) return { ...base, problem: `'${decl.name}' has no ':=' to repair after.` };
  emit({ type: 'stage', id: params.id, message: `Checking the file for the proofs Lean rejects` });
  const broken = await findBroken({ uri: params.uri ?? '', code: text }, (c, s) => service.check(c, s), signal);
  if (broken.problem) return { ...base, problem: broken.problem };
  const exclude = new Set(broken.declarations.map((d) => d.name).filter((n) => n !== decl.name));
  const { code } = standaloneSnippet(text, decl, decls, exclude);
  emit({ type: 'stage', id: params.id, message: `Repairing ${decl.kind} ${decl.name} from Lean's errors` });
  const result = await service.prove(
    {
      ...requestOptions(params),
      id: params.id,
      code,
      theorem: decl.kind === 'example' ? undefined : decl.name,
      repair: true,
    },
    emit,
    signal,
  );
  const out: EditorProveResult = { ...base, ...result, id: params.id, mode: 'repair', declaration: where, edit: null };
  if (result.status !== 'proved') {
    if (result.repair?.skipped) out.problem = result.repair.skipped;
    return out;
  }
  const tactics = result.tactics;
  if (!tactics)
    return { ...out, status: 'not_proved', problem: 'The prover reported a repair but sent no proof text.' };
  const spliced = await spliceVerifiedProof({
    text,
    target: { kind: 'body', decl },
    proof: tactics,
    check: checkInFile(service),
    signal,
    onStage: (message) => emit({ type: 'stage', id: params.id, message }),
    exclude,
  });
  if (!spliced.ok) return { ...out, status: 'not_proved', problem: spliced.problem };
  return { ...out, edit: spliced.edit };
}
