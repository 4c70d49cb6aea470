// Training charts in the editor area: one panel per run (or per comparison of runs) with the run's step metrics at
// full width, kept live from the training events the backend relays (kimina/training/event) and, in case an event
// was missed, by asking for the steps since the last one every few seconds.
import * as vscode from 'vscode';
import { type StepMetrics, type TrainingRun, lspMethods } from '../backend/protocol';
import type { FromCharts, ToCharts } from '../media/trainingChartsMessages';
import type { Ctx } from './ctx';
import { webviewHtml } from './webviewHtml';

const POLL_MS = 5_000;

class ChartsPanel implements vscode.Disposable {
  readonly panel: vscode.WebviewPanel;
  private readonly lastStep = new Map<string, number>();
  private readonly subscriptions: vscode.Disposable[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    context: vscode.ExtensionContext,
    private readonly ctx: Ctx,
    readonly runIds: string[],
    title: string,
    onClosed: () => void,
  ) {
    const media = vscode.Uri.joinPath(context.extensionUri, 'dist', 'media');
    this.panel = vscode.window.createWebviewPanel(
      'kimina.trainingCharts',
      title,
      { viewColumn: vscode.ViewColumn.Active, preserveFocus: false },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [media] },
    );
    this.panel.iconPath = vscode.Uri.joinPath(context.extensionUri, 'media', 'kimina.svg');
    this.panel.webview.html = webviewHtml(this.panel.webview, media, {
      name: 'trainingCharts',
      title,
      placeholder: '<p>Loading…</p>',
      inlineStyles: true,
    });
    this.subscriptions.push(
      this.panel.webview.onDidReceiveMessage((m: FromCharts) => {
        if (m.type === 'ready') void this.load();
      }),
      ctx.onTrainingEvent((e) => {
        if (e.type === 'run' && this.runIds.includes(e.run.id)) this.post({ type: 'run', run: e.run });
        if (e.type === 'metrics' && this.runIds.includes(e.runId))
          this.addSteps(e.runId, [{ step: e.step, kind: e.kind, metrics: e.metrics }], false);
      }),
      ctx.onTrainingConnection((c) => this.post({ type: 'connection', status: c.status, message: c.message })),
    );
    this.panel.onDidDispose(() => {
      this.dispose();
      onClosed();
    });
    this.timer = setInterval(() => void this.poll(), POLL_MS);
  }

  private post(m: ToCharts): void {
    void this.panel.webview.postMessage(m);
  }

  private addSteps(runId: string, steps: StepMetrics[], replace: boolean): void {
    const newest = Math.max(this.lastStep.get(runId) ?? -1, ...steps.map((s) => s.step));
    this.lastStep.set(runId, newest);
    this.post({ type: 'metrics', runId, steps, replace });
  }

  private async load(): Promise<void> {
    this.post({ type: 'show', runIds: this.runIds });
    try {
      const connection = await this.ctx.request(lspMethods.trainingFollow, { follow: true });
      this.post({ type: 'connection', status: connection.status, message: connection.message });
      const runs: TrainingRun[] = [];
      for (const id of this.runIds) {
        runs.push(await this.ctx.request(lspMethods.trainingRun, { id }));
        this.addSteps(id, (await this.ctx.request(lspMethods.trainingMetrics, { id })).steps, true);
      }
      this.post({ type: 'runs', runs });
    } catch (err) {
      this.post({ type: 'error', message: (err as Error).message });
    }
  }

  /** Steps the events may have missed (a reconnect, a backend restart). */
  private async poll(): Promise<void> {
    if (!this.panel.visible) return;
    for (const id of this.runIds) {
      try {
        const since = this.lastStep.get(id);
        const { steps } = await this.ctx.request(lspMethods.trainingMetrics, {
          id,
          ...(since !== undefined && since >= 0 ? { since } : {}),
        });
        const fresh = steps.filter((s) => s.step > (since ?? -1));
        if (fresh.length) this.addSteps(id, fresh, false);
        this.post({ type: 'run', run: await this.ctx.request(lspMethods.trainingRun, { id }) });
      } catch {
        /* the connection status says why */
      }
    }
  }

  dispose(): void {
    clearInterval(this.timer);
    for (const s of this.subscriptions) s.dispose();
    this.subscriptions.length = 0;
  }
}

/** Opens (or brings forward) the charts of one run, or of several runs compared. */
export class TrainingCharts implements vscode.Disposable {
  private readonly panels = new Map<string, ChartsPanel>();

  constructor(
    private readonly context: vscode.ExtensionContext,
    private readonly ctx: Ctx,
  ) {}

  open(runs: { id: string; name: string }[]): void {
    if (!runs.length) return;
    const key = runs
      .map((r) => r.id)
      .sort()
      .join(',');
    const existing = this.panels.get(key);
    if (existing) {
      existing.panel.reveal();
      return;
    }
    const title = runs.length === 1 ? `Training: ${runs[0].name}` : `Training: ${runs.map((r) => r.name).join(' vs ')}`;
    const panel = new ChartsPanel(
      this.context,
      this.ctx,
      runs.map((r) => r.id),
      title,
      () => this.panels.delete(key),
    );
    this.panels.set(key, panel);
  }

  dispose(): void {
    for (const p of this.panels.values()) p.panel.dispose();
    this.panels.clear();
  }
}
