// The Proof view: a webview panel beside the editor that shows one proof run live (think block, attempts,
// verdicts, the result with Accept / Reject / Retry). The host replays the run's messages when the view reloads.
import * as vscode from 'vscode';
import type { AgentJob } from '../backend/protocol';
import type { BudgetPreset, FromView, ToView } from '../media/proofViewMessages';
import { webviewHtml } from './webviewHtml';

export class ProofView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private history: ToView[] = [];
  private agentJobs: ToView | undefined;
  private readonly actions = new vscode.EventEmitter<Exclude<FromView['type'], 'budget'>>();
  /** Buttons pressed in the view (accept, reject, retry, cancel, showDiff, setupLean, pickTheorem). */
  readonly onAction = this.actions.event;
  private readonly budgets = new vscode.EventEmitter<BudgetPreset>();
  /** A budget preset picked in the view. */
  readonly onBudget = this.budgets.event;

  constructor(private readonly context: vscode.ExtensionContext) {}

  /** Starts a new run: clears the view and shows it beside the editor without taking focus. */
  begin(message: Extract<ToView, { type: 'start' }>): void {
    this.history = [message];
    this.reveal();
    void this.panel!.webview.postMessage(message);
  }

  post(message: ToView): void {
    this.history.push(message);
    if (this.panel) void this.panel.webview.postMessage(message);
  }

  /** Lists agents' proof jobs (kept apart from the run, so a new run does not clear them). */
  showAgentJobs(jobs: AgentJob[]): void {
    this.agentJobs = { type: 'agentJobs', jobs };
    if (this.panel) void this.panel.webview.postMessage(this.agentJobs);
  }

  reveal(): void {
    if (this.panel) {
      this.panel.reveal(undefined, true);
      return;
    }
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'dist', 'media');
    this.panel = vscode.window.createWebviewPanel(
      'kimina.proofView',
      'Kimina Proof',
      { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [media], enableFindWidget: true },
    );
    this.panel.iconPath = vscode.Uri.joinPath(this.context.extensionUri, 'media', 'kimina.svg');
    this.panel.webview.html = webviewHtml(this.panel.webview, media, {
      name: 'proofView',
      title: 'Kimina Proof',
      placeholder: '<p class="empty">Run "Kimina: Prove This Theorem" in a Lean file.</p>',
    });
    this.panel.webview.onDidReceiveMessage((m: FromView) => {
      if (m.type === 'ready') {
        for (const msg of this.history) void this.panel?.webview.postMessage(msg);
        if (this.agentJobs) void this.panel?.webview.postMessage(this.agentJobs);
        return;
      }
      if (m.type === 'budget') this.budgets.fire(m.preset);
      else this.actions.fire(m.type);
    });
    this.panel.onDidDispose(() => {
      this.panel = undefined;
    });
  }

  dispose(): void {
    this.panel?.dispose();
    this.actions.dispose();
    this.budgets.dispose();
  }
}
