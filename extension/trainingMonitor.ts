// The Training Monitor view host: a webview view in the Kimina side bar. Over the language-server face
// (kimina/training/*, relayed by the backend to the attached `kimina serve`) it follows the training events,
// loads runs, metrics, rollouts, logs and GPU status, relays the view's controls, and offers to switch the
// prover to a finished run's better model.
import * as vscode from 'vscode';
import {
  type StartTrainingRequest,
  type TrainingRun,
  type TrainingConnection,
  type TrainingPresetName,
  type TrainingStreamEvent,
  errorKindOf,
  lspMethods,
} from '../backend/protocol';
import type { FromMonitor, ToMonitor } from '../media/trainingMonitorMessages';
import { proveWithModel, trainingModelSetting } from './config';
import type { Ctx } from './ctx';
import { TrainingCharts } from './trainingCharts';
import { forEditor } from './words';
import { webviewHtml } from './webviewHtml';

const GPU_POLL_MS = 10_000;
const controls = {
  pause: lspMethods.trainingPause,
  resume: lspMethods.trainingResume,
  cancel: lspMethods.trainingCancel,
} as const;

class TrainingMonitorProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private following = false;
  private loaded = false;
  private loading: Promise<void> | null = null;
  private gpuTimer: NodeJS.Timeout | null = null;
  private selected: string | null = null;
  private readonly subscriptions: vscode.Disposable[];
  /** The charts open in the editor area (one panel per run or comparison). */
  readonly charts: TrainingCharts;

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly ctx: Ctx,
  ) {
    this.charts = new TrainingCharts(context, ctx);
    this.subscriptions = [
      this.charts,
      ctx.onTrainingEvent((e) => this.onEvent(e)),
      ctx.onTrainingConnection((c) => this.onConnection(c)),
      // a new backend process follows nothing yet: ask again
      ctx.onStarted(() => {
        if (this.following) void this.start();
      }),
    ];
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'dist', 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = webviewHtml(view.webview, media, {
      name: 'trainingMonitor',
      title: 'Kimina Training',
      placeholder: '<p>Loading…</p>',
      inlineStyles: true,
    });
    view.webview.onDidReceiveMessage((m: FromMonitor) => {
      void this.onMessage(m);
    });
    view.onDidDispose(() => {
      this.stopFollowing();
      this.view = undefined;
    });
    view.onDidChangeVisibility(() => {
      if (view.visible) void this.refreshGpus();
    });
  }

  private post(m: ToMonitor): void {
    // a run's error comes from the server's trainer, in the command line's words: the editor's instead
    const words = (r: TrainingRun): TrainingRun => (r.error ? { ...r, error: forEditor(r.error) } : r);
    const shown: ToMonitor =
      m.type === 'runs' ? { ...m, runs: m.runs.map(words) } : m.type === 'run' ? { ...m, run: words(m.run) } : m;
    void this.view?.webview.postMessage(shown);
  }

  private async onMessage(m: FromMonitor): Promise<void> {
    try {
      switch (m.type) {
        case 'ready':
          await this.start();
          break;
        case 'select':
          await this.select(m.runId);
          break;
        case 'start':
          await this.startRun(m.preset, m.model, m.schedule, m.winRateSamples);
          break;
        case 'control':
          this.post({ type: 'run', run: await this.ctx.request(controls[m.action], { id: m.runId }) });
          break;
        case 'useModel':
          await this.useModel(m.runId);
          break;
        case 'openCharts':
          await this.openCharts(m.runIds);
          break;
        case 'compareRuns':
          await this.compareRuns(m.runId);
          break;
      }
    } catch (err) {
      const message = forEditor(err instanceof Error ? err.message : String(err));
      this.post({ type: 'error', message });
      // the trainer's environment is the missing part: offer the button that makes it
      const trainerMissing = errorKindOf(err) === 'trainer-missing';
      void vscode.window
        .showErrorMessage(`Kimina training: ${message}`, ...(trainerMissing ? ['Set Up Trainer'] : []))
        .then((b) => {
          if (b) void vscode.commands.executeCommand('kimina.setupTrainer');
        });
    }
  }

  private async start(): Promise<void> {
    this.stopFollowing();
    this.following = true;
    this.loaded = false;
    try {
      const connection = await this.ctx.request(lspMethods.trainingFollow, { follow: true });
      this.onConnection(connection);
      if (connection.status !== 'no-backend') await this.loadOnce();
    } catch (err) {
      this.post({ type: 'connection', status: 'disconnected', message: (err as Error).message });
    }
    void this.refreshGpus();
    this.gpuTimer = setInterval(() => {
      if (this.view?.visible) void this.refreshGpus();
    }, GPU_POLL_MS);
  }

  /** Presets and runs, once at a time; tried again whenever the event stream connects until it worked. */
  private loadOnce(): Promise<void> {
    this.loading ??= this.load().finally(() => {
      this.loading = null;
    });
    return this.loading;
  }

  /** Presets, runs, and the selected run's details. */
  private async load(): Promise<void> {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? null;
    const configured = trainingModelSetting();
    const { presets } = await this.ctx.request(lspMethods.trainingPresets, {});
    this.post({
      type: 'presets',
      presets: Object.entries(presets).map(([name, p]) => ({ name: name as TrainingPresetName, summary: p.summary })),
      defaultModel: configured || 'AI-MO/Kimina-Prover-RL-1.7B',
      workspace: folder,
    });
    const { runs } = await this.ctx.request(lspMethods.trainingRuns, {});
    this.post({ type: 'runs', runs });
    this.loaded = true;
    if (runs[0]) await this.select(this.selected ?? runs[0].id);
  }

  private onConnection(c: TrainingConnection): void {
    if (!this.following) return;
    this.post({ type: 'connection', status: c.status, message: c.message });
    if (c.status === 'connected' && !this.loaded) {
      this.loadOnce().catch((err: Error) => this.post({ type: 'error', message: err.message }));
      void this.refreshGpus();
    }
  }

  private onEvent(e: TrainingStreamEvent): void {
    if (!this.following) return;
    switch (e.type) {
      case 'run':
        this.post({ type: 'run', run: e.run });
        break;
      case 'metrics':
        if (e.runId === this.selected)
          this.post({
            type: 'metrics',
            runId: e.runId,
            steps: [{ step: e.step, kind: e.kind, metrics: e.metrics }],
            replace: false,
          });
        break;
      case 'rollouts':
        if (e.runId === this.selected)
          this.post({ type: 'rollouts', runId: e.runId, rollouts: e.rollouts, replace: false });
        break;
      case 'log':
        if (e.runId === this.selected) this.post({ type: 'log', runId: e.runId, lines: [e.line], replace: false });
        break;
    }
  }

  private async select(runId: string): Promise<void> {
    this.selected = runId;
    const [metrics, rollouts, log] = await Promise.all([
      this.ctx.request(lspMethods.trainingMetrics, { id: runId }),
      this.ctx.request(lspMethods.trainingRollouts, { id: runId, limit: 20 }),
      this.ctx.request(lspMethods.trainingLog, { id: runId, limit: 200 }),
    ]);
    this.post({ type: 'metrics', runId, steps: metrics.steps, replace: true });
    this.post({ type: 'rollouts', runId, rollouts: rollouts.rollouts, replace: true });
    this.post({ type: 'log', runId, lines: log.lines, replace: true });
  }

  private async openCharts(runIds: string[]): Promise<void> {
    const { runs } = await this.ctx.request(lspMethods.trainingRuns, {});
    this.charts.open(runIds.map((id) => ({ id, name: runs.find((r) => r.id === id)?.name ?? id })));
  }

  /** Lets the user pick the runs to compare with `runId`, then opens one panel with all of them. */
  private async compareRuns(runId: string): Promise<void> {
    const { runs } = await this.ctx.request(lspMethods.trainingRuns, {});
    const picks = await vscode.window.showQuickPick(
      runs
        .filter((r) => r.id !== runId)
        .map((r) => ({ label: r.name, description: `${r.state} · step ${r.step}`, id: r.id })),
      { canPickMany: true, title: 'Kimina: compare training runs', placeHolder: 'Runs to chart beside this one' },
    );
    if (!picks?.length) return;
    await this.openCharts([runId, ...picks.map((p) => p.id)]);
  }

  private async startRun(
    preset: TrainingPresetName,
    model: string,
    schedule: StartTrainingRequest['schedule'],
    winRateSamples?: number,
  ): Promise<void> {
    if (!model) throw new Error('enter a model (a Hugging Face id or a folder with safetensors weights)');
    const workspace = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!workspace) throw new Error('open a Lean workspace first: its theorems are the training prompts');
    const body: StartTrainingRequest = {
      preset,
      model,
      workspace,
      schedule,
      ...(winRateSamples ? { winRate: { samples: winRateSamples } } : {}),
    };
    const run = await this.ctx.request(lspMethods.trainingStart, body);
    this.post({ type: 'run', run });
    await this.select(run.id);
    this.post({ type: 'runs', runs: (await this.ctx.request(lspMethods.trainingRuns, {})).runs });
    // the new run's charts, live, where there is room for them
    this.charts.open([{ id: run.id, name: run.name }]);
  }

  /** Exports the run's merged weights to ONNX when needed, then points the prover at them after confirmation. */
  private async useModel(runId: string): Promise<void> {
    let run = await this.ctx.request(lspMethods.trainingRun, { id: runId });
    let dir = run.onnxDir;
    if (!dir) {
      dir = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Kimina: exporting the fine-tuned model to ONNX' },
        async () => (await this.ctx.request(lspMethods.trainingExport, { id: runId, quantize: 'q4' })).onnxDir,
      );
      run = await this.ctx.request(lspMethods.trainingRun, { id: runId });
      this.post({ type: 'run', run });
    }
    const choice = await vscode.window.showInformationMessage(
      `Prove with the fine-tuned model from "${run.name}"? (${dir})`,
      'Switch',
      'Not now',
    );
    if (choice !== 'Switch') return;
    await proveWithModel(dir);
    void vscode.window.showInformationMessage('Kimina now proves with the fine-tuned model.');
  }

  private async refreshGpus(): Promise<void> {
    try {
      this.post({ type: 'gpus', report: await this.ctx.request(lspMethods.trainingGpus, {}) });
    } catch {
      /* the connection line says why */
    }
  }

  private stopFollowing(): void {
    if (this.following) void this.ctx.request(lspMethods.trainingFollow, { follow: false }).catch(() => {});
    this.following = false;
    if (this.gpuTimer) clearInterval(this.gpuTimer);
    this.gpuTimer = null;
  }

  dispose(): void {
    this.stopFollowing();
    for (const s of this.subscriptions) s.dispose();
  }
}

/** Registers the `kimina.trainingMonitor` webview view (contributed in package.json by the extension). */
export function registerTrainingMonitor(context: vscode.ExtensionContext, ctx: Ctx): vscode.Disposable {
  const provider = new TrainingMonitorProvider(context, ctx);
  const registration = vscode.window.registerWebviewViewProvider('kimina.trainingMonitor', provider, {
    webviewOptions: { retainContextWhenHidden: true },
  });
  return vscode.Disposable.from(registration, provider);
}
