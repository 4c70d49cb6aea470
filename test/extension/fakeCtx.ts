// FAKE of the extension's backend connection (extension/ctx.ts's `CtxApi`, what the proof runner, commands,
// setup and repairs use), for the extension's unit tests. Where the real Ctx sends requests through the language
// client to `kimina lsp --stdio`, this one answers in the process, as the backend's LSP face does: method names
// and parameter schemas from the request table (backend/protocol/lsp.ts; parameters that do not match are refused,
// as backend/api/lspContract.ts refuses them), events through the `kimina/proveEvent` notification routed as
// ctx.ts routes it, and the "Prove with Kimina" code lenses as backend/api/lsp.ts's onCodeLens makes them (the real
// declaration finder). What a proof answers is scripted per test; a verified answer's edit is made by the real
// splice (backend/editor/splice.ts theoremEdit), as backend/editor/editorProve.ts makes it once Lean accepted it.
import './useVscodeDouble';
import * as vscode from 'vscode';
import {
  type BackendStatus,
  type EditorProveResult,
  type LspNotificationTypes,
  type LspProveEvent,
  type LspRequestTypes,
  type ProveParams,
  type SorriesProgress,
  checkValue,
  editorCommands,
  lspMethods,
  lspRequests,
} from '../../backend/protocol';
import { declarationAt, findDeclarations, positionAt } from '../../backend/editor/leanSource';
import { theoremEdit } from '../../backend/editor/splice';
import { recheckProposal } from '../../backend/editor/recheck';
import type { CtxApi } from '../../extension/ctx';
import { leanDocuments } from '../../extension/proposal';

type Method = keyof LspRequestTypes;
type Handler<M extends Method> = (
  params: LspRequestTypes[M]['params'],
  token?: vscode.CancellationToken,
) => LspRequestTypes[M]['result'] | Promise<LspRequestTypes[M]['result']>;

/** An in-memory Memento (the extension's global state), shared by the fake and the face-backed Ctx. */
export class Memory implements vscode.Memento {
  private readonly values = new Map<string, unknown>();
  keys(): readonly string[] {
    return [...this.values.keys()];
  }
  get<T>(key: string): T | undefined;
  get<T>(key: string, defaultValue: T): T;
  get<T>(key: string, defaultValue?: T): T | undefined {
    return this.values.has(key) ? (this.values.get(key) as T) : defaultValue;
  }
  async update(key: string, value: unknown): Promise<void> {
    this.values.set(key, value);
  }
}

const methodNames = new Map<string, keyof typeof lspRequests>(
  Object.entries(lspRequests).map(([name, spec]) => [spec.method, name as keyof typeof lspRequests]),
);

export class FakeCtx implements CtxApi {
  /** Every request the extension sent, in order, with its parameters as sent. */
  readonly sent: { method: string; params: unknown }[] = [];
  private readonly handlers: { [M in Method]?: Handler<M> } = {};
  private readonly statusEmitter = new vscode.EventEmitter<BackendStatus>();
  private readonly eventEmitter = new vscode.EventEmitter<LspProveEvent>();
  private readonly startedEmitter = new vscode.EventEmitter<void>();
  readonly onStatus = this.statusEmitter.event;
  readonly onProveEvent = this.eventEmitter.event;
  readonly onStarted = this.startedEmitter.event;
  private readonly sorriesEmitter = new vscode.EventEmitter<SorriesProgress>();
  readonly onSorriesProgress = this.sorriesEmitter.event;
  /** The backend's `kimina/sorries/progress` notification, as ctx.ts routes it. */
  sorriesProgress(progress: SorriesProgress): void {
    this.sorriesEmitter.fire(progress);
  }
  readonly memory = new Memory();
  readonly log = vscode.window.createOutputChannel('Kimina', { log: true });
  currentStatus: BackendStatus = { state: 'ready', backend: 'in-process', engine: 'fake', model: 'scripted' };
  restarts = 0;
  private readonly lenses: vscode.Disposable;

  constructor() {
    // Accept after the file changed: the backend's real rule (editor/recheck.ts) over a check double that
    // answers `valid` to a snippet without `sorry`, else `sorry` with its sorries listed (no Lean here)
    this.serve(lspMethods.recheckProposal, (params) =>
      recheckProposal(params, async (code) => {
        const sorries = [...code.matchAll(/\bsorry\b/g)].map(() => ({ goal: '' }));
        return {
          verdict: {
            status: sorries.length ? 'sorry' : 'valid',
            reason: sorries.length ? 'declaration uses sorry' : 'valid',
            messages: [],
            sorries,
            time: 0,
          },
        };
      }),
    );
    // The language client registers the server's code lens provider; the lenses are backend/api/lsp.ts's onCodeLens.
    this.lenses = vscode.languages.registerCodeLensProvider(leanDocuments, {
      provideCodeLenses: (doc) =>
        findDeclarations(doc.getText())
          .filter((d) => ['theorem', 'lemma', 'example'].includes(d.kind) && d.sorries.length > 0)
          .map(
            (d) =>
              new vscode.CodeLens(new vscode.Range(d.startLine, d.indent, d.startLine, d.indent), {
                title: '$(sparkle) Prove with Kimina',
                command: editorCommands.proveTheorem,
                arguments: [doc.uri.toString(), { line: d.startLine, character: d.indent }],
              }),
          ),
    });
  }

  /** How the fake backend answers a method from now on. */
  serve<M extends Method>(method: M, handler: Handler<M>): void {
    (this.handlers as Record<string, unknown>)[method] = handler;
  }

  /** The requests sent with one method. */
  sentTo<M extends Method>(method: M): LspRequestTypes[M]['params'][] {
    return this.sent.filter((r) => r.method === method).map((r) => r.params as LspRequestTypes[M]['params']);
  }

  /** A notification from the backend, routed as ctx.ts routes the client's notifications. */
  notify<N extends keyof LspNotificationTypes>(method: N, params: LspNotificationTypes[N]): void {
    if (method === lspMethods.proveEvent) this.eventEmitter.fire(params as LspProveEvent);
    else if (method === lspMethods.statusChanged) {
      this.currentStatus = params as BackendStatus;
      this.statusEmitter.fire(this.currentStatus);
    } else throw new Error(`the fake Ctx does not route ${method}`);
  }

  // a method, as the real Ctx's is: a caller that passes `ctx.request` unbound fails here as it would there
  async request<M extends Method>(
    method: M,
    params: LspRequestTypes[M]['params'],
    token?: vscode.CancellationToken,
  ): Promise<LspRequestTypes[M]['result']> {
    this.sent.push({ method, params });
    const name = methodNames.get(method);
    if (!name) throw new Error(`${method} is not in the request table`);
    const problems = checkValue(lspRequests[name].params, params ?? {});
    if (problems.length) throw new Error(problems.map((p) => p.text).join('; '));
    const handler = this.handlers[method] as Handler<typeof method> | undefined;
    if (!handler) throw new Error(`the fake backend does not serve ${method} in this test`);
    return handler(params, token);
  }

  readonly requestWithProgress: CtxApi['requestWithProgress'] = (method, params) =>
    this.request(method, { ...params, workDoneToken: 'fake-progress' } as LspRequestTypes[typeof method]['params']);

  async restart(): Promise<void> {
    this.restarts++;
  }

  dispose(): void {
    this.lenses.dispose();
  }
}

/**
 * The answer the backend's face gives to a `kimina/prove` in theorem mode once the prover's proof was verified:
 * the declaration at the cursor (the real finder), its events (stage, target as editorProve.ts sends them, the
 * prover's progress) sent as notifications first, and the edit the real splice makes from the proof's tactics.
 */
export function provedAnswer(ctx: FakeCtx, params: ProveParams, tactics: string): EditorProveResult {
  const text = params.code ?? '';
  const decl = declarationAt(findDeclarations(text), params.position?.line ?? 0);
  if (!decl) throw new Error('no declaration at the cursor');
  const id = params.id;
  ctx.notify(lspMethods.proveEvent, { type: 'stage', id, message: `Proving ${decl.kind} ${decl.name}` });
  ctx.notify(lspMethods.proveEvent, { type: 'target', id, name: decl.name, kind: decl.kind, line: decl.startLine });
  ctx.notify(lspMethods.proveEvent, { type: 'progress', id, tokens: 120, tokensPerSecond: 24 });
  const { edit, newText } = theoremEdit(text, decl, tactics);
  return {
    id,
    status: 'proved',
    proof: newText.slice(decl.start, decl.end + newText.length - text.length),
    tactics,
    attempts: [],
    mode: 'theorem',
    declaration: { name: decl.name, range: { start: positionAt(text, decl.start), end: positionAt(text, decl.end) } },
    edit,
  };
}

/** The face's answer to a proof cancelled by `kimina/cancel` (the prover stops; nothing is proposed). */
export function cancelledAnswer(params: ProveParams): EditorProveResult {
  return {
    id: params.id,
    status: 'cancelled',
    proof: null,
    attempts: [],
    mode: 'theorem',
    declaration: null,
    edit: null,
  };
}
