// The backend's language-server face: code lenses above declarations containing `sorry`, code actions on each
// `sorry`, and the custom requests/notifications of protocol/lsp.ts (prove, cancel, status, setup, training;
// proveEvent, statusChanged, training events). It runs the proofs through a ProveService: in this process, or
// forwarded to `kimina serve`; training requests go to that server (lspTraining.ts).
import {
  CodeActionKind,
  type CodeAction,
  type CodeLens,
  type Connection,
  TextDocumentSyncKind,
  TextDocuments,
  type InitializeResult,
} from 'vscode-languageserver/node';
import { TextDocument } from 'vscode-languageserver-textdocument';
import { type BackendStatus, type EditorProveResult, editorCommands } from '../protocol';
import { declarationAt, findDeclarations } from '../editor/leanSource';
import { proveInEditor } from '../editor/editorProve';
import type { ProveService } from '../editor/service';
import { LazyStart, type RunningProofs } from '../prover/running';
import { LeanNotAvailable } from '../lean/lake';
import { ModelNotAvailable } from '../model/modelStore';
import { notifier, serveLspRequests } from './lspContract';
import { registerSetupRequests, type SetupSettings } from './lspSetup';
import { registerTrainingRequests } from './lspTraining';
import { registerRepairRequests } from './lspRepair';
import { registerSorryRequests } from './lspSorries';
import type { RepairStore } from '../store/repairs';
import { fileURLToPath } from 'node:url';
import type { AgentJobs } from '../editor/agentJobs';
import type { AgentToolHandlers } from '../editor/agentToolbox';
import { registerAgentRequests } from './lspAgents';

export interface LspFaceOptions {
  connection: Connection;
  /** The settings the setup requests read, handed down by `kimina lsp`. */
  settings: SetupSettings;
  /** Builds the services (may fail, e.g. no model yet: the face then reports an error status with the reason). */
  createService: () => Promise<ProveService>;
  log?: (line: string) => void;
  /** Seconds one proof may take in all before it is stopped (kimina.timeouts.prove); 0 for no limit. */
  proveTimeoutS?: number;
  /** The registry of running proofs: the app's one (App.runningProofs), shared with the HTTP prove routes. */
  proofs: RunningProofs;
  /** How often to ask the services for news (an attached server starting or ending training); 0 for never. */
  refreshMs?: number;
  /** The Repair All queue's store (opened on first use; `kimina lsp` opens KIMINA_DB). */
  repairStore?: () => RepairStore;
  /**
   * The agent tools over this face's prove service, with paths inside `roots` (the editor's workspace folders):
   * served as single calls, as an MCP server on loopback, and as the job list the Proof view shows.
   */
  agents?: (
    service: () => Promise<ProveService>,
    roots: () => string[],
  ) => { tools: AgentToolHandlers; jobs: AgentJobs };
}

export interface LspFace {
  status(): BackendStatus;
  close(): Promise<void>;
}

const provableKinds = new Set(['theorem', 'lemma', 'example']);

export function startLspFace({
  connection,
  settings,
  createService,
  log = () => {},
  proveTimeoutS = 0,
  proofs,
  refreshMs = 15_000,
  repairStore,
  agents,
}: LspFaceOptions): LspFace {
  const documents = new TextDocuments(TextDocument);
  const running = proofs;
  let status: BackendStatus = { state: 'starting', detail: 'starting the backend services' };

  const notify = notifier(connection);
  const setStatus = (next: BackendStatus) => {
    status = next;
    notify('statusChanged', status);
  };
  /** Set when a proof found that Lean cannot be started (until the services are rebuilt after a setup). */
  let leanCannotStart = false;
  const idleStatus = (base: BackendStatus): BackendStatus => ({
    ...base,
    state: running.size ? 'proving' : base.state === 'proving' ? 'ready' : base.state,
    running: running.size,
    ...(leanCannotStart && !base.setup?.lean
      ? {
          setup: {
            model: base.setup?.model ?? false,
            lean: true,
            hints: [
              ...(base.setup?.hints ?? []),
              'Lean could not be started: set it up with "Kimina: Set Up Lean Verifier".',
            ],
          },
        }
      : {}),
  });

  // started on first use; a failed start is forgotten, so the next request tries again
  const services = new LazyStart<ProveService>(() =>
    createService().then(
      async (s) => {
        const described = await s.describe();
        setStatus({ state: 'ready', backend: s.kind, ...described, running: running.size });
        resolved = s;
        return s;
      },
      (err: Error) => {
        log(`backend services failed to start: ${err.message}`);
        setStatus({ state: 'error', detail: err.message, setup: setupHints(err) });
        throw err;
      },
    ),
  );
  const getService = (): Promise<ProveService> => services.get();

  let resolved: ProveService | null = null;
  const refresh = async () => {
    if (!resolved || running.size > 0 || status.state === 'error') return;
    const described = await resolved.describe().catch(() => null);
    if (!described || running.size > 0) return;
    const next: BackendStatus = { state: 'ready', backend: resolved.kind, ...described, running: 0 };
    if (JSON.stringify(next) !== JSON.stringify(status)) setStatus(next);
  };
  const refresher = refreshMs > 0 ? setInterval(() => void refresh(), refreshMs) : undefined;
  refresher?.unref();

  let workspaceRoots: string[] = [];
  connection.onInitialize((init) => {
    const folders = init.workspaceFolders?.map((f) => f.uri) ?? (init.rootUri ? [init.rootUri] : []);
    workspaceRoots = folders.filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u));
    return initializeResult;
  });
  const initializeResult: InitializeResult = {
    capabilities: {
      textDocumentSync: TextDocumentSyncKind.Incremental,
      codeLensProvider: { resolveProvider: false },
      codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
    },
    serverInfo: { name: 'kimina-lsp' },
  };
  connection.onInitialized(() => {
    getService().catch(() => {});
  });

  connection.onCodeLens(({ textDocument }): CodeLens[] => {
    const doc = documents.get(textDocument.uri);
    if (!doc) return [];
    return findDeclarations(doc.getText())
      .filter((d) => provableKinds.has(d.kind) && d.sorries.length > 0)
      .map((d) => ({
        range: { start: { line: d.startLine, character: d.indent }, end: { line: d.startLine, character: d.indent } },
        command: {
          title: '$(sparkle) Prove with Kimina',
          command: editorCommands.proveTheorem,
          arguments: [textDocument.uri, { line: d.startLine, character: d.indent }],
        },
      }));
  });

  connection.onCodeAction(({ textDocument, range }): CodeAction[] => {
    const doc = documents.get(textDocument.uri);
    if (!doc) return [];
    const decls = findDeclarations(doc.getText());
    const actions: CodeAction[] = [];
    // any sorry is a target: its goal in every declaration (a def's, an instance's too), the whole proof in theorems
    for (const decl of decls) {
      for (const s of decl.sorries) {
        if (s.line < range.start.line || s.line > range.end.line) continue;
        const at = { line: s.line, character: s.character };
        actions.push({
          title: 'Prove this goal with Kimina',
          kind: CodeActionKind.QuickFix,
          command: {
            title: 'Prove this goal with Kimina',
            command: editorCommands.proveGoal,
            arguments: [textDocument.uri, at],
          },
        });
        if (provableKinds.has(decl.kind) && !actions.some((a) => a.title.startsWith(`Prove ${decl.name}`))) {
          actions.push({
            title: `Prove ${decl.name} with Kimina`,
            kind: CodeActionKind.QuickFix,
            command: {
              title: `Prove ${decl.name} with Kimina`,
              command: editorCommands.proveTheorem,
              arguments: [textDocument.uri, at],
            },
          });
        }
      }
    }
    return actions;
  });

  serveLspRequests(connection, {
    prove: async (params, token): Promise<EditorProveResult> => {
      if (running.has(params.id)) throw new Error(`a proof with id ${params.id} is already running`);
      const text = params.code || (params.uri ? documents.get(params.uri)?.getText() : undefined);
      if (!text) throw new Error('kimina/prove needs the document text (code) or an open document (uri)');
      const controller = running.begin(params.id);
      if (!controller) throw new Error(`a proof with id ${params.id} is already running`);
      token?.onCancellationRequested(() => controller.abort());
      let timedOut = false;
      const timer =
        proveTimeoutS > 0
          ? setTimeout(() => {
              timedOut = true;
              controller.abort();
            }, proveTimeoutS * 1000)
          : undefined;
      try {
        const svc = await getService();
        setStatus(idleStatus(status));
        const decl = params.position ? declarationAt(findDeclarations(text), params.position.line) : null;
        log(`prove ${params.id}: ${params.mode ?? 'theorem'} ${decl?.name ?? ''}`);
        const result = await proveInEditor(
          params,
          text,
          svc,
          (event) => notify('proveEvent', event),
          controller.signal,
        );
        if (result.verifierFailure?.leanMissing) leanCannotStart = true;
        if (timedOut && result.status === 'cancelled')
          result.problem = `Stopped after ${proveTimeoutS} s (kimina.timeouts.prove).`;
        log(`prove ${params.id}: ${result.status}${result.problem ? ` (${result.problem})` : ''}`);
        return result;
      } catch (err) {
        if (controller.signal.aborted) {
          return {
            id: params.id,
            status: 'cancelled',
            proof: null,
            attempts: [],
            mode: params.mode ?? 'theorem',
            declaration: null,
            edit: null,
            ...(timedOut ? { problem: `Stopped after ${proveTimeoutS} s (kimina.timeouts.prove).` } : {}),
          };
        }
        throw err;
      } finally {
        clearTimeout(timer);
        running.end(params.id, controller);
        if (status.state !== 'error') setStatus(idleStatus(status));
      }
    },
    cancel: (params) => {
      return { cancelled: params.id ? running.cancel(params.id) : false };
    },
    status: async (): Promise<BackendStatus> => {
      if (status.state === 'error') await getService().catch(() => {});
      return status;
    },
  });

  /** After a setup request: the services start again with the model or REPL that is now there. */
  const rebuild = async (): Promise<void> => {
    const old = services.reset();
    resolved = null;
    leanCannotStart = false;
    if (old) await (await old.catch(() => null))?.close();
    setStatus({ state: 'starting', detail: 'starting the backend services' });
    getService().catch(() => {});
  };
  registerSetupRequests({ connection, settings, onSetUp: () => void rebuild(), log });
  // the attached server of the services as they stand (no new start-up attempt when they failed)
  const training = registerTrainingRequests({
    connection,
    log,
    server: async () => {
      const current = services.current;
      return current ? ((await current.catch(() => null))?.server ?? null) : null;
    },
  });

  registerRepairRequests({ connection, service: getService, store: repairStore, log });
  const agentRequests = registerAgentRequests({ connection, parts: agents?.(getService, () => workspaceRoots), log });
  const sorries = registerSorryRequests({
    connection,
    service: getService,
    store: repairStore,
    notify: (progress) => notify('sorriesProgress', progress),
    log,
  });

  documents.listen(connection);
  return {
    status: () => status,
    async close() {
      clearInterval(refresher);
      training.close();
      await agentRequests.close();
      running.cancelAll();
      await sorries.close();
      const current = services.current;
      if (current) await (await current.catch(() => null))?.close();
    },
  };
}

/** First-run guidance from a start-up failure, by its kind (no message text is read): what is missing and how to get it. */
export function setupHints(err: unknown): BackendStatus['setup'] {
  const model = err instanceof ModelNotAvailable;
  const lean = err instanceof LeanNotAvailable;
  const hints: string[] = [];
  // The editor's words (this face serves VS Code): the command to run, the setting to change.
  if (model) hints.push('Pull a model with "Kimina: Pull Model", or set kimina.model to a model folder.');
  if (lean) hints.push('Set up the Lean verifier with "Kimina: Set Up Lean Verifier".');
  return { model, lean, hints };
}
