// Gutter marks on declarations proved with Kimina in this session (found again by name after edits).
import * as vscode from 'vscode';

export class ProvedMarks implements vscode.Disposable {
  private readonly proved = new Map<string, Map<string, number>>();
  private readonly type: vscode.TextEditorDecorationType;
  private readonly subscriptions: vscode.Disposable[] = [];

  constructor(context: vscode.ExtensionContext) {
    this.type = vscode.window.createTextEditorDecorationType({
      gutterIconPath: vscode.Uri.joinPath(context.extensionUri, 'media', 'proved.svg'),
      gutterIconSize: 'contain',
      overviewRulerColor: new vscode.ThemeColor('testing.iconPassed'),
      overviewRulerLane: vscode.OverviewRulerLane.Left,
    });
    this.subscriptions.push(
      vscode.window.onDidChangeVisibleTextEditors(() => this.refresh()),
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (this.proved.has(e.document.uri.toString())) this.refresh();
      }),
    );
  }

  /** Marks a declaration (by name; `line` is where it started, used for unnamed examples). */
  add(uri: vscode.Uri, name: string, line: number): void {
    const marks = this.proved.get(uri.toString()) ?? new Map<string, number>();
    marks.set(name, line);
    this.proved.set(uri.toString(), marks);
    this.refresh();
  }

  private lineOf(doc: vscode.TextDocument, name: string, fallback: number): number {
    if (name !== 'example') {
      const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const re = new RegExp(`(?:^|\\s)(?:theorem|lemma)\\s+${escaped}(?=[\\s(:[{]|$)`, 'u');
      for (let i = 0; i < doc.lineCount; i++) if (re.test(doc.lineAt(i).text)) return i;
    }
    return Math.min(fallback, doc.lineCount - 1);
  }

  refresh(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const marks = this.proved.get(editor.document.uri.toString());
      if (!marks) continue;
      const options = [...marks].map(([name, line]) => {
        const at = this.lineOf(editor.document, name, line);
        return { range: new vscode.Range(at, 0, at, 0), hoverMessage: `${name}: proved with Kimina, verified by Lean` };
      });
      editor.setDecorations(this.type, options);
    }
  }

  dispose(): void {
    this.type.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
