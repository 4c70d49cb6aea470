// The Training Monitor view host: a webview view in the Kimina side bar. It follows the backend's training
// events (SSE), loads runs, metrics, rollouts, logs and GPU status over HTTP, relays the view's controls,
// and offers to switch the prover to a finished run's better model.
import * as vscode from 'vscode';
import type { ApiClient, StartTrainingRequest, TrainingPresetName, TrainingStreamEvent } from '../backend/protocol';
import type { FromMonitor, ToMonitor } from '../media/trainingMonitorMessages';
import { proveWithModel, trainingModelSetting } from './config';
import { backendClient, followTrainingEvents, type BackendAddress } from './trainingMonitorClient';
import { webviewHtml } from './webviewHtml';

const GPU_POLL_MS = 10_000;
const controls = { pause: 'trainingPause', resume: 'trainingResume', cancel: 'trainingCancel' } as const;

class TrainingMonitorProvider implements vscode.WebviewViewProvider, vscode.Disposable {
  private view: vscode.WebviewView | undefined;
  private stream: { stop(): void } | null = null;
  private gpuTimer: NodeJS.Timeout | null = null;
  private selected: string | null = null;
  private readonly api: ApiClient;

  constructor(private readonly context: vscode.ExtensionContext, private readonly backend: BackendAddress) {
    this.api = backendClient(backend);
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'dist', 'media');
    view.webview.options = { enableScripts: true, localResourceRoots: [media] };
    view.webview.html = webviewHtml(view.webview, media,
      { name: 'trainingMonitor', title: 'Kimina Training', placeholder: '<p>Loading…</p>', inlineStyles: true });
    view.webview.onDidReceiveMessage((m: FromMonitor) => { void this.onMessage(m); });
    view.onDidDispose(() => { this.stopFollowing(); this.view = undefined; });
    view.onDidChangeVisibility(() => { if (view.visible) void this.refreshGpus(); });
  }

  private post(m: ToMonitor): void { void this.view?.webview.postMessage(m); }

  private async onMessage(m: FromMonitor): Promise<void> {
    try {
      switch (m.type) {
        case 'ready': await this.start(); break;
        case 'select': await this.select(m.runId); break;
        case 'start': await this.startRun(m.preset, m.model, m.schedule, m.winRateSamples); break;
        case 'control': this.post({ type: 'run', run: await this.api.call(controls[m.action], { params: { id: m.runId } }) }); break;
        case 'useModel': await this.useModel(m.runId); break;
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      this.post({ type: 'error', message });
      void vscode.window.showErrorMessage(`Kimina training: ${message}`);
    }
  }

  private async start(): Promise<void> {
    this.stopFollowing();
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? null;
    const configured = trainingModelSetting();
    try {
      const { presets } = await this.api.call('trainingPresets');
      this.post({ type: 'presets', presets: Object.entries(presets).map(([name, p]) => ({ name: name as TrainingPresetName, summary: p.summary })),
        defaultModel: configured || 'AI-MO/Kimina-Prover-RL-1.7B', workspace: folder });
      const { runs } = await this.api.call('trainingRuns');
      this.post({ type: 'runs', runs });
      if (runs[0]) await this.select(this.selected ?? runs[0].id);
    } catch (err) {
      this.post({ type: 'connection', status: this.backend.httpUrl() ? 'disconnected' : 'no-backend', message: (err as Error).message });
    }
    this.stream = followTrainingEvents(this.backend, (e) => this.onEvent(e), (status, message) => this.post({ type: 'connection', status, message }));
    void this.refreshGpus();
    this.gpuTimer = setInterval(() => { if (this.view?.visible) void this.refreshGpus(); }, GPU_POLL_MS);
  }

  private onEvent(e: TrainingStreamEvent): void {
    switch (e.type) {
      case 'run': this.post({ type: 'run', run: e.run }); break;
      case 'metrics': if (e.runId === this.selected) this.post({ type: 'metrics', runId: e.runId, steps: [{ step: e.step, kind: e.kind, metrics: e.metrics }], replace: false }); break;
      case 'rollouts': if (e.runId === this.selected) this.post({ type: 'rollouts', runId: e.runId, rollouts: e.rollouts, replace: false }); break;
      case 'log': if (e.runId === this.selected) this.post({ type: 'log', runId: e.runId, lines: [e.line], replace: false }); break;
    }
  }

  private async select(runId: string): Promise<void> {
    this.selected = runId;
    const params = { id: runId };
    const [metrics, rollouts, log] = await Promise.all([
      this.api.call('trainingMetrics', { params }),
      this.api.call('trainingRollouts', { params, query: { limit: 20 } }),
      this.api.call('trainingLog', { params, query: { limit: 200 } }),
    ]);
    this.post({ type: 'metrics', runId, steps: metrics.steps, replace: true });
    this.post({ type: 'rollouts', runId, rollouts: rollouts.rollouts, replace: true });
    this.post({ type: 'log', runId, lines: log.lines, replace: true });
  }

  private async startRun(preset: TrainingPresetName, model: string, schedule: StartTrainingRequest['schedule'], winRateSamples?: number): Promise<void> {
    if (!model) throw new Error('enter a model (a Hugging Face id or a folder with safetensors weights)');
    const workspace = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    if (!workspace) throw new Error('open a Lean workspace first: its theorems are the training prompts');
    const body: StartTrainingRequest = { preset, model, workspace, schedule, ...(winRateSamples ? { winRate: { samples: winRateSamples } } : {}) };
    const run = await this.api.call('trainingStart', { body });
    this.post({ type: 'run', run });
    await this.select(run.id);
    this.post({ type: 'runs', runs: (await this.api.call('trainingRuns')).runs });
  }

  /** Exports the run's merged weights to ONNX when needed, then points the prover at them after confirmation. */
  private async useModel(runId: string): Promise<void> {
    let run = await this.api.call('trainingRun', { params: { id: runId } });
    let dir = run.onnxDir;
    if (!dir) {
      dir = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title: 'Kimina: exporting the fine-tuned model to ONNX' },
        async () => (await this.api.call('trainingExport', { params: { id: runId }, body: { quantize: 'q4' } })).onnxDir);
      run = await this.api.call('trainingRun', { params: { id: runId } });
      this.post({ type: 'run', run });
    }
    const choice = await vscode.window.showInformationMessage(`Prove with the fine-tuned model from "${run.name}"? (${dir})`, 'Switch', 'Not now');
    if (choice !== 'Switch') return;
    await proveWithModel(dir);
    void vscode.window.showInformationMessage('Kimina now proves with the fine-tuned model.');
  }

  private async refreshGpus(): Promise<void> {
    try { this.post({ type: 'gpus', report: await this.api.call('trainingGpus') }); } catch { /* the stream reports the connection */ }
  }

  private stopFollowing(): void {
    this.stream?.stop();
    this.stream = null;
    if (this.gpuTimer) clearInterval(this.gpuTimer);
    this.gpuTimer = null;
  }


  dispose(): void { this.stopFollowing(); }
}

/** Registers the `kimina.trainingMonitor` webview view (contributed in package.json by the extension). */
export function registerTrainingMonitor(context: vscode.ExtensionContext, backend: BackendAddress): vscode.Disposable {
  const provider = new TrainingMonitorProvider(context, backend);
  const registration = vscode.window.registerWebviewViewProvider('kimina.trainingMonitor', provider, { webviewOptions: { retainContextWhenHidden: true } });
  return vscode.Disposable.from(registration, provider);
}
