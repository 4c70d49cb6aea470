// Gutter marks on declarations proved with Kimina in this session ("verified by Lean"). A mark follows its
// declaration through the user's edits (offsets kept in step with each change) and is cleared as soon as the
// declaration itself is edited: what Lean verified is no longer what the file holds.
import * as vscode from 'vscode';

interface Mark {
  name: string;
  /** The declaration's offsets in the document as it is now. */
  start: number;
  end: number;
}

export class ProvedMarks implements vscode.Disposable {
  private readonly proved = new Map<string, Mark[]>();
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
      vscode.workspace.onDidChangeTextDocument((e) => this.follow(e)),
    );
  }

  /** Marks a declaration that Lean verified, at its offsets [start, end) in the document as it is now. */
  add(uri: vscode.Uri, name: string, span: { start: number; end: number }): void {
    const marks = (this.proved.get(uri.toString()) ?? []).filter((m) => m.end <= span.start || m.start >= span.end);
    marks.push({ name, ...span });
    this.proved.set(uri.toString(), marks);
    this.refresh();
  }

  /** The marks of a document, as they stand now (for tests and the refresh). */
  marksOf(uri: vscode.Uri): readonly Mark[] {
    return this.proved.get(uri.toString()) ?? [];
  }

  /** Moves marks with edits before them; drops a mark whose declaration an edit touches. */
  private follow(e: vscode.TextDocumentChangeEvent): void {
    const marks = this.proved.get(e.document.uri.toString());
    if (!marks || e.contentChanges.length === 0) return;
    const kept: Mark[] = [];
    for (const m of marks) {
      let alive = true;
      for (const c of e.contentChanges) {
        const start = c.rangeOffset;
        const end = c.rangeOffset + c.rangeLength;
        const delta = c.text.length - c.rangeLength;
        if (end < m.start || (end === m.start && c.text.endsWith('\n'))) {
          m.start += delta;
          m.end += delta;
        } else if (start > m.end) continue;
        else alive = false;
      }
      if (alive) kept.push(m);
    }
    this.proved.set(e.document.uri.toString(), kept);
    this.refresh();
  }

  refresh(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      const marks = this.proved.get(editor.document.uri.toString());
      if (!marks) continue;
      const options = marks.map((m) => {
        const at = editor.document.positionAt(m.start).line;
        return {
          range: new vscode.Range(at, 0, at, 0),
          hoverMessage: `${m.name}: proved with Kimina, verified by Lean`,
        };
      });
      editor.setDecorations(this.type, options);
    }
  }

  dispose(): void {
    this.type.dispose();
    for (const s of this.subscriptions) s.dispose();
  }
}
