// A verified proof waiting for the user's decision: shown as a diff against the file (a read-only virtual
// document with the edit applied), accepted as a WorkspaceEdit, or rejected. One proposal at a time.
import * as vscode from 'vscode';
import type { ProofEdit } from '../backend/protocol';

export const proposalScheme = 'kimina-proposal';

export interface Proposal {
  uri: vscode.Uri;
  edit: ProofEdit;
  /** The text the edit replaces, as it was when the proof was requested: accepting checks it is still there. */
  replaced: string;
  /** The whole document with the edit applied, for the diff. */
  proposedText: string;
  declaration: string;
  declarationLine: number;
}

/** The column of an open editor of `uri` (tabs included), else the first column. */
function columnOf(uri: vscode.Uri): vscode.ViewColumn {
  for (const group of vscode.window.tabGroups.all) {
    if (group.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString()))
      return group.viewColumn;
  }
  return vscode.ViewColumn.One;
}

export type AcceptOutcome = 'accepted' | 'stale' | 'none';

export class Proposals implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private current: Proposal | undefined;
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(proposalScheme, this);

  get pending(): Proposal | undefined {
    return this.current;
  }

  set(p: Proposal | undefined): void {
    this.current = p;
    void vscode.commands.executeCommand('setContext', 'kimina.hasProposal', p !== undefined);
    if (p) this.changed.fire(this.proposalUri(p));
  }

  private proposalUri(p: Proposal): vscode.Uri {
    return vscode.Uri.from({ scheme: proposalScheme, path: p.uri.path, query: p.uri.toString() });
  }

  provideTextDocumentContent(): string {
    return this.current?.proposedText ?? '';
  }

  async showDiff(): Promise<void> {
    const p = this.current;
    if (!p) return;
    const name = p.uri.path.split('/').pop();
    await vscode.commands.executeCommand(
      'vscode.diff',
      p.uri,
      this.proposalUri(p),
      `${name} ↔ Kimina proof of ${p.declaration}`,
      { preview: false, preserveFocus: true, viewColumn: columnOf(p.uri) },
    );
  }

  async accept(): Promise<{ outcome: AcceptOutcome; proposal?: Proposal }> {
    const p = this.current;
    if (!p) return { outcome: 'none' };
    const doc = await vscode.workspace.openTextDocument(p.uri);
    const r = p.edit.range;
    const range = new vscode.Range(r.start.line, r.start.character, r.end.line, r.end.character);
    if (doc.getText(range) !== p.replaced) {
      this.set(undefined);
      await this.closeDiffs();
      return { outcome: 'stale', proposal: p };
    }
    const edit = new vscode.WorkspaceEdit();
    edit.replace(p.uri, range, p.edit.newText);
    const applied = await vscode.workspace.applyEdit(edit);
    this.set(undefined);
    await this.closeDiffs();
    // Bring the file back where it was (the diff may have covered it), leaving the Proof view visible.
    if (!vscode.window.visibleTextEditors.some((e) => e.document.uri.toString() === p.uri.toString())) {
      await vscode.window.showTextDocument(doc, { preview: false, viewColumn: columnOf(p.uri), preserveFocus: false });
    }
    return { outcome: applied ? 'accepted' : 'stale', proposal: p };
  }

  async reject(): Promise<Proposal | undefined> {
    const p = this.current;
    this.set(undefined);
    await this.closeDiffs();
    return p;
  }

  private async closeDiffs(): Promise<void> {
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === proposalScheme);
    if (tabs.length) await vscode.window.tabGroups.close(tabs);
  }

  dispose(): void {
    this.registration.dispose();
    this.changed.dispose();
  }
}
