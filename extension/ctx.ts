// Owns the backend connection: starts the language client, restarts it on crash (at most 5 times in 3 minutes),
// tracks the backend's status and routes the kimina/* notifications to whoever listens. Everything the extension
// asks of the backend (proving, setup, training) goes through here, over the language-server face.
import * as vscode from 'vscode';
import { State, WorkDoneProgress, type LanguageClient } from 'vscode-languageclient/node';
import {
  type AgentJob,
  type BackendStatus,
  type ErrorKind,
  errorKindOf,
  type LspProveEvent,
  type LspRequestTypes,
  type SorriesProgress,
  type TrainingConnection,
  type TrainingStreamEvent,
  lspMethods,
} from '../backend/protocol';
import { createClient } from './client';
import { readSettings, useOpenAIEngine } from './config';
import { hasOnnxEngine, missingEngineNotice } from './runtime';
import { forEditor } from './words';

type Method = keyof LspRequestTypes;

/**
 * What the proof runner, the commands, setup and repairs ask of the backend connection: `Ctx` is the one the
 * extension runs with; test/extension/fakeCtx.ts is a fake that answers as the backend's LSP face does.
 */
export type CtxApi = Pick<
  Ctx,
  | 'onStatus'
  | 'onProveEvent'
  | 'onStarted'
  | 'onSorriesProgress'
  | 'currentStatus'
  | 'memory'
  | 'log'
  | 'request'
  | 'requestWithProgress'
  | 'restart'
>;

/** What Kimina will not do in an untrusted folder, and why (status bar, log, and every request's error). */
/** A request the backend answered with an error: its words for the editor, and its kind (what is missing) when it has one. */
class RequestFailed extends Error {
  override readonly name = 'RequestFailed';
  constructor(
    message: string,
    readonly kind?: ErrorKind,
  ) {
    super(message);
  }
}

const restrictedModeMessage =
  "Kimina does not run in Restricted Mode: proving starts Lean and lake in this folder's project (its lakefile " +
  'is code that runs), a model and the Kimina backend, so nothing is started until you trust the folder ' +
  '("Workspaces: Manage Workspace Trust"). Settings that start programs or name servers are read from user settings only.';

export class Ctx implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private crashes: number[] = [];
  private status: BackendStatus = { state: 'starting' };
  private readonly statusEmitter = new vscode.EventEmitter<BackendStatus>();
  private readonly eventEmitter = new vscode.EventEmitter<LspProveEvent>();
  readonly onStatus = this.statusEmitter.event;
  readonly onProveEvent = this.eventEmitter.event;
  private readonly trainingEventEmitter = new vscode.EventEmitter<TrainingStreamEvent>();
  private readonly trainingConnectionEmitter = new vscode.EventEmitter<TrainingConnection>();
  private readonly startedEmitter = new vscode.EventEmitter<void>();
  private readonly agentJobEmitter = new vscode.EventEmitter<AgentJob>();
  /** An agent's proof job changed (started through MCP or a language-model tool). */
  readonly onAgentJob = this.agentJobEmitter.event;
  private readonly sorriesEmitter = new vscode.EventEmitter<SorriesProgress>();
  /** A Prove All Sorries job the backend runs moved on (an item ended, or the job). */
  readonly onSorriesProgress = this.sorriesEmitter.event;
  /** Training events the backend forwards while someone follows them (kimina/training/follow). */
  readonly onTrainingEvent = this.trainingEventEmitter.event;
  readonly onTrainingConnection = this.trainingConnectionEmitter.event;
  /** The backend (re)started: whatever was asked of the old process (e.g. following training) must be asked again. */
  readonly onStarted = this.startedEmitter.event;
  readonly log: vscode.LogOutputChannel;

  constructor(private readonly context: vscode.ExtensionContext) {
    this.log = vscode.window.createOutputChannel('Kimina', { log: true });
  }

  /** What the extension remembers across sessions (e.g. the engine's measured speed). */
  get memory(): vscode.Memento {
    return this.context.globalState;
  }

  get currentStatus(): BackendStatus {
    return this.status;
  }

  private setStatus(status: BackendStatus): void {
    this.status = status;
    this.statusEmitter.fire(status);
  }

  private starting: Promise<void> = Promise.resolve();
  private trustWatch: vscode.Disposable | undefined;

  /** Starts the backend; requests made meanwhile wait for it. */
  start(): Promise<void> {
    // one start at a time (trust granted and a settings change can ask at once): each replaces the last client
    this.starting = this.starting.catch(() => {}).then(() => this.startClient());
    return this.starting;
  }

  private async startClient(): Promise<void> {
    const previous = this.client;
    this.client = undefined;
    if (previous) await previous.stop().catch(() => {});
    if (!vscode.workspace.isTrusted) {
      // Restricted Mode: no backend, so no Lean, lake or model process; trusting the folder starts it
      this.setStatus({ state: 'restricted', detail: restrictedModeMessage });
      this.log.info(`[extension] ${restrictedModeMessage}`);
      this.trustWatch ??= vscode.workspace.onDidGrantWorkspaceTrust(() => void this.start());
      void vscode.window
        .showWarningMessage(
          'Kimina is off in Restricted Mode: it starts no Lean, lake, model or backend process in an untrusted folder.',
          'Manage Workspace Trust',
        )
        .then((b) => {
          if (b) void vscode.commands.executeCommand('workbench.trust.manage');
        });
      return;
    }
    this.setStatus({ state: 'starting', detail: 'starting the backend' });
    const settings = readSettings();
    this.engineNotice(settings.engine);
    const client = createClient(this.context, settings, this.log, { onCrash: () => this.onCrash() });
    this.client = client;
    let started = false;
    client.onDidChangeState(({ newState }) => {
      if (newState === State.Stopped && this.client === client && this.status.state !== 'error') {
        this.setStatus({ state: 'error', detail: 'the backend stopped; see the Kimina log' });
      }
      if (newState === State.Running && this.client === client && started) this.startedEmitter.fire();
    });
    try {
      await client.start();
    } catch (err) {
      this.setStatus({ state: 'error', detail: `the backend did not start: ${(err as Error).message}` });
      this.log.appendLine(`[extension] start failed: ${(err as Error).stack ?? err}`);
      return;
    }
    client.onNotification(lspMethods.statusChanged, (s: BackendStatus) => this.setStatus(s));
    client.onNotification(lspMethods.proveEvent, (e: LspProveEvent) => this.eventEmitter.fire(e));
    client.onNotification(lspMethods.sorriesProgress, (p: SorriesProgress) => this.sorriesEmitter.fire(p));
    client.onNotification(lspMethods.trainingEvent, (e: TrainingStreamEvent) => this.trainingEventEmitter.fire(e));
    client.onNotification(lspMethods.trainingConnection, (c: TrainingConnection) =>
      this.trainingConnectionEmitter.fire(c),
    );
    client.onNotification(lspMethods.agentJob, (j: AgentJob) => this.agentJobEmitter.fire(j));
    this.setStatus(
      await client.sendRequest(lspMethods.status, {}).then(
        (s) => s as BackendStatus,
        () => this.status,
      ),
    );
    started = true;
    this.startedEmitter.fire();
  }

  private engineNoticeShown = false;

  /** Once per window: a package without the in-process engine (darwin-x64) says so and offers the OpenAI engine. */
  private engineNotice(engine: string): void {
    const notice = missingEngineNotice(engine, hasOnnxEngine(this.context.extensionPath));
    if (!notice || this.engineNoticeShown) return;
    this.engineNoticeShown = true;
    this.log.warn(`[extension] ${notice}`);
    const choice = 'Use an OpenAI-compatible server';
    void vscode.window.showWarningMessage(notice, choice).then((b) => {
      if (b === choice) void useOpenAIEngine();
    });
  }

  private onCrash(): boolean {
    const now = Date.now();
    this.crashes = this.crashes.filter((t) => now - t < 180_000);
    this.crashes.push(now);
    const restart = this.crashes.length <= 5;
    this.log.appendLine(
      `[extension] the backend exited${restart ? '; restarting' : ' 5 times in 3 minutes; not restarting (run "Kimina: Restart Backend")'}`,
    );
    this.setStatus(
      restart
        ? { state: 'starting', detail: 'restarting the backend after a crash' }
        : { state: 'error', detail: 'the backend keeps crashing; see the Kimina log' },
    );
    return restart;
  }

  async restart(): Promise<void> {
    this.crashes = [];
    await this.start();
  }

  async request<M extends Method>(
    method: M,
    params: LspRequestTypes[M]['params'],
    token?: vscode.CancellationToken,
  ): Promise<LspRequestTypes[M]['result']> {
    await this.starting;
    if (!vscode.workspace.isTrusted) throw new Error(restrictedModeMessage);
    if (!this.client?.isRunning())
      throw new Error('the Kimina backend is not running (see the Kimina log, or run "Kimina: Restart Backend")');
    // A trailing `undefined` would travel as a second positional parameter: pass the token only when there is one.
    const pending = token ? this.client.sendRequest(method, params, token) : this.client.sendRequest(method, params);
    // The JSON-RPC layer wraps a handler's error ("Request kimina/prove failed with message: …"): say only the message.
    return (pending as Promise<LspRequestTypes[M]['result']>).catch((err: Error) => {
      throw new RequestFailed(forEditor(err?.message ?? String(err)), errorKindOf(err));
    });
  }

  private progressTokens = 0;

  /**
   * A request whose work the backend reports as `$/progress` on a token we choose: shown as a notification
   * with the backend's messages and percentage; its Cancel button cancels the request.
   */
  async requestWithProgress<M extends 'kimina/setup/pullModel' | 'kimina/setup/lean'>(
    method: M,
    params: Omit<LspRequestTypes[M]['params'], 'workDoneToken'>,
    title: string,
  ): Promise<LspRequestTypes[M]['result']> {
    await this.starting;
    if (!vscode.workspace.isTrusted) throw new Error(restrictedModeMessage);
    const client = this.client;
    if (!client?.isRunning())
      throw new Error('the Kimina backend is not running (see the Kimina log, or run "Kimina: Restart Backend")');
    const workDoneToken = `kimina-progress-${++this.progressTokens}`;
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title, cancellable: true },
      async (progress, cancel) => {
        let shown = 0;
        const listening = client.onProgress(WorkDoneProgress.type, workDoneToken, (value) => {
          if (value.kind === 'end') return;
          const increment =
            value.percentage !== undefined && value.percentage > shown ? value.percentage - shown : undefined;
          if (increment !== undefined) shown += increment;
          if (value.message) this.log.info(`[setup] ${value.message}`);
          progress.report({ message: value.message, increment });
        });
        try {
          return (await client.sendRequest(method, { ...params, workDoneToken }, cancel).catch((err: Error) => {
            throw new RequestFailed(forEditor(err?.message ?? String(err)), errorKindOf(err));
          })) as LspRequestTypes[M]['result'];
        } finally {
          listening.dispose();
        }
      },
    );
  }

  async dispose(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client) await client.stop().catch(() => {});
    this.trustWatch?.dispose();
    this.statusEmitter.dispose();
    this.eventEmitter.dispose();
    this.trainingEventEmitter.dispose();
    this.trainingConnectionEmitter.dispose();
    this.startedEmitter.dispose();
    this.sorriesEmitter.dispose();
    this.log.dispose();
  }
}
