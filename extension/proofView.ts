// The Proof view: a webview panel beside the editor that shows one proof run live (think block, attempts,
// verdicts, the result with Accept / Reject / Retry). The host replays the run's messages when the view reloads.
import * as vscode from 'vscode';
import type { FromView, ToView } from '../media/proofViewMessages';

export class ProofView implements vscode.Disposable {
  private panel: vscode.WebviewPanel | undefined;
  private history: ToView[] = [];
  private readonly actions = new vscode.EventEmitter<FromView['type']>();
  /** Buttons pressed in the view (accept, reject, retry, cancel, showDiff). */
  readonly onAction = this.actions.event;

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

  reveal(): void {
    if (this.panel) { this.panel.reveal(undefined, true); return; }
    const media = vscode.Uri.joinPath(this.context.extensionUri, 'dist', 'media');
    this.panel = vscode.window.createWebviewPanel('kimina.proofView', 'Kimina Proof', { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true },
      { enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [media], enableFindWidget: true });
    this.panel.iconPath = vscode.Uri.joinPath(this.context.extensionUri, 'media', 'kimina.svg');
    this.panel.webview.html = this.html(this.panel.webview, media);
    this.panel.webview.onDidReceiveMessage((m: FromView) => {
      if (m.type === 'ready') { for (const msg of this.history) void this.panel?.webview.postMessage(msg); return; }
      this.actions.fire(m.type);
    });
    this.panel.onDidDispose(() => { this.panel = undefined; });
  }

  private html(webview: vscode.Webview, media: vscode.Uri): string {
    const nonce = Array.from({ length: 24 }, () => Math.floor(Math.random() * 36).toString(36)).join('');
    const script = webview.asWebviewUri(vscode.Uri.joinPath(media, 'proofView.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(media, 'proofView.css'));
    return `<!DOCTYPE html><html lang="en"><head><meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src ${webview.cspSource}; script-src 'nonce-${nonce}';">
<meta name="viewport" content="width=device-width, initial-scale=1.0"><link rel="stylesheet" href="${style}"><title>Kimina Proof</title></head>
<body><main id="root"><p class="empty">Run "Kimina: Prove This Theorem" in a Lean file.</p></main><script nonce="${nonce}" src="${script}"></script></body></html>`;
  }

  dispose(): void {
    this.panel?.dispose();
    this.actions.dispose();
  }
}
