// Verified proofs and repairs waiting for the user's decision, any number at a time, each shown at its
// declaration in the real file (code lenses: Accept / Reject / Show Diff), as a diff against the file (a read-only
// virtual `kimina-proposal:` document with that one edit applied), accepted one by one or all together. A new
// proof never replaces a pending one. Ranges follow the user's edits; any edit to the proposal's declaration,
// its statement included, makes it stale (accepting it then inserts nothing), and when the file changed anywhere
// since the proof was checked, Accept has Lean check the edit again on the file as it is now (`kimina/recheck`,
// backend/editor/recheck.ts) before writing it.
import * as vscode from 'vscode';
import { type ProofEdit, type RecheckResult, lspMethods } from '../backend/protocol';
import type { CtxApi } from './ctx';

const proposalScheme = 'kimina-proposal';
/** The documents Kimina works on (as the language client's selector). */
export const leanDocuments: vscode.DocumentSelector = [
  { language: 'lean4' },
  { language: 'lean' },
  { pattern: '**/*.lean', scheme: 'file' },
];

/** Accept's check through the backend (`kimina/recheck`, backend/editor/recheck.ts). */
export function recheckThrough(ctx: Pick<CtxApi, 'request'>): Recheck {
  // called as ctx's method: `request` reads the backend's state from its `this`
  return (p) =>
    ctx.request(lspMethods.recheckProposal, {
      uri: p.uri.toString(),
      code: p.code,
      edit: p.edit,
      declarationLine: p.declarationLine,
    });
}

export interface Proposal {
  id: string;
  uri: vscode.Uri;
  edit: ProofEdit;
  /** The text the edit replaces, as it was when the proof was requested: accepting checks it is still there. */
  replaced: string;
  declaration: string;
  declarationLine: number;
  kind: 'proof' | 'repair';
  /** The Repair All job item it came from, when so (its outcome is recorded there). */
  jobItem?: { jobId: string; itemId: number };
  /** The document's version the proof was checked on; unknown (after a restart): Accept checks again. */
  checkedVersion?: number;
  /** The declaration's text as checked, from the start of its first line to its end: found again by it. */
  declarationText?: string;
}

/** Checks a proposal's edit again on the document as it is now; `edit` and `declarationLine` are in `code`. */
export type Recheck = (p: {
  uri: vscode.Uri;
  code: string;
  edit: ProofEdit;
  declarationLine: number;
}) => Promise<RecheckResult>;

interface Tracked extends Proposal {
  /** Offsets in the document as it is now: the edit's range and the declaration's start and end. */
  from: number;
  to: number;
  declAt: number;
  declEnd: number;
  stale: boolean;
  /** The file changed since the proof was checked: Accept checks again first. */
  changed: boolean;
}

/** The column of an open editor of `uri` (tabs included), else the first column. */
function columnOf(uri: vscode.Uri): vscode.ViewColumn {
  for (const group of vscode.window.tabGroups.all) {
    if (group.tabs.some((t) => t.input instanceof vscode.TabInputText && t.input.uri.toString() === uri.toString()))
      return group.viewColumn;
  }
  return vscode.ViewColumn.One;
}

type AcceptOutcome = 'accepted' | 'stale' | 'none';
export type Decision = { outcome: AcceptOutcome | 'rejected'; proposal?: Proposal; problem?: string };
/** After Accept: where the declaration now stands (offsets), for its gutter mark. */
export type Accepted = {
  outcome: AcceptOutcome;
  proposal?: Proposal;
  span?: { start: number; end: number };
  problem?: string;
};

let counter = 0;

export class Proposals implements vscode.TextDocumentContentProvider, vscode.CodeLensProvider, vscode.Disposable {
  private readonly all = new Map<string, Tracked>();
  private readonly changed = new vscode.EventEmitter<vscode.Uri>();
  readonly onDidChange = this.changed.event;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private readonly decided = new vscode.EventEmitter<Decision>();
  /** A proposal was accepted, rejected or found stale. */
  readonly onDecided = this.decided.event;
  private readonly subscriptions: vscode.Disposable[];

  /** `recheck`: how Accept has Lean check a proposal again (none: a proposal whose file changed is stale). */
  constructor(private readonly recheck?: Recheck) {
    this.subscriptions = [
      vscode.workspace.registerTextDocumentContentProvider(proposalScheme, this),
      vscode.languages.registerCodeLensProvider(leanDocuments, this),
      vscode.workspace.onDidChangeTextDocument((e) => this.follow(e)),
    ];
  }

  static newId(): string {
    return `k${Date.now().toString(36)}-${++counter}`;
  }

  /** Pending proposals, of one file when given, in file order. */
  pending(uri?: vscode.Uri): Tracked[] {
    return [...this.all.values()]
      .filter((p) => !uri || p.uri.toString() === uri.toString())
      .sort((a, b) => a.uri.toString().localeCompare(b.uri.toString()) || a.from - b.from);
  }

  get(id: string): Tracked | undefined {
    return this.all.get(id);
  }

  /** Adds a proposal; the others stay. `text` is the document as the proof saw it. */
  async add(p: Proposal): Promise<void> {
    const doc = await vscode.workspace.openTextDocument(p.uri);
    const text = doc.getText();
    const r = p.edit.range;
    let from = doc.offsetAt(new vscode.Position(r.start.line, r.start.character));
    let to = doc.offsetAt(new vscode.Position(r.end.line, r.end.character));
    let declAt = doc.offsetAt(new vscode.Position(p.declarationLine, 0));
    let stale = false;
    const declText = p.declarationText;
    if (declText !== undefined && text.slice(declAt, declAt + declText.length) !== declText) {
      // the file changed between the check and now: the declaration is found again by its text, once
      const at = text.indexOf(declText);
      if (at < 0 || text.indexOf(declText, at + 1) >= 0) stale = true;
      else {
        // the edit's positions, counted inside the declaration's text as it was checked
        const within = (pos: { line: number; character: number }) =>
          declText
            .split('\n')
            .slice(0, pos.line - p.declarationLine)
            .reduce((n, l) => n + l.length + 1, 0) + pos.character;
        from = at + within(r.start);
        to = at + within(r.end);
        declAt = at;
      }
    }
    const declEnd = Math.max(to, declText !== undefined ? declAt + declText.length : to);
    stale ||= text.slice(from, to) !== p.replaced;
    const changed = p.checkedVersion === undefined || doc.version !== p.checkedVersion;
    this.all.set(p.id, { ...p, from, to, declAt, declEnd, stale, changed });
    this.refresh(p.uri);
  }

  private refresh(uri?: vscode.Uri): void {
    void vscode.commands.executeCommand('setContext', 'kimina.hasProposal', this.all.size > 0);
    this.lensesChanged.fire();
    if (uri) for (const p of this.pending(uri)) this.changed.fire(this.proposalUri(p));
  }

  /**
   * Keeps offsets in step with the user's edits. An edit above or in the declaration means Accept checks again (one
   * below it cannot change how Lean elaborates it); an edit of the
   * declaration itself (its statement, its proof, text typed at its end) makes the proposal stale. New lines
   * typed right before the declaration's first line only move it.
   */
  private follow(e: vscode.TextDocumentChangeEvent): void {
    const uri = e.document.uri.toString();
    let touched = false;
    for (const p of this.all.values()) {
      if (p.uri.toString() !== uri || e.contentChanges.length === 0) continue;
      for (const c of e.contentChanges) {
        const start = c.rangeOffset;
        const end = c.rangeOffset + c.rangeLength;
        const delta = c.text.length - c.rangeLength;
        const linesAbove = end === p.declAt && (c.text === '' || c.text.endsWith('\n'));
        // Lean reads a file top-down: text after the declaration cannot change how it elaborates
        if (start <= p.declEnd) p.changed = true;
        if (end < p.declAt || linesAbove) {
          p.from += delta;
          p.to += delta;
          p.declAt += delta;
          p.declEnd += delta;
        } else if (start > p.declEnd) {
          continue;
        } else p.stale = true;
        touched = true;
      }
    }
    if (touched) this.refresh(e.document.uri);
  }

  proposalUri(p: Proposal): vscode.Uri {
    return vscode.Uri.from({
      scheme: proposalScheme,
      path: p.uri.path,
      query: new URLSearchParams({ uri: p.uri.toString(), id: p.id }).toString(),
    });
  }

  /** The real file behind a `kimina-proposal:` document (proving from the diff editor acts on the file). */
  static realUri(uri: vscode.Uri): vscode.Uri | undefined {
    if (uri.scheme !== proposalScheme) return undefined;
    const real = new URLSearchParams(uri.query).get('uri');
    return real ? vscode.Uri.parse(real) : undefined;
  }

  /** The proposal a `kimina-proposal:` document shows. */
  static idOf(uri: vscode.Uri): string | undefined {
    return uri.scheme === proposalScheme ? (new URLSearchParams(uri.query).get('id') ?? undefined) : undefined;
  }

  /** The document with this one proposal applied, as it is now. */
  provideTextDocumentContent(uri: vscode.Uri): string {
    const p = this.all.get(Proposals.idOf(uri) ?? '');
    if (!p) return '';
    const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === p.uri.toString());
    const text = doc?.getText() ?? '';
    return text.slice(0, p.from) + p.edit.newText + text.slice(p.to);
  }

  provideCodeLenses(doc: vscode.TextDocument): vscode.CodeLens[] {
    const lenses: vscode.CodeLens[] = [];
    for (const p of this.pending(doc.uri)) {
      const at = doc.positionAt(p.declAt);
      const range = new vscode.Range(at.line, 0, at.line, 0);
      const what = p.kind === 'repair' ? 'repair' : 'proof';
      lenses.push(
        new vscode.CodeLens(range, {
          title: p.stale ? `$(warning) Kimina ${what} (file changed)` : `$(check) Accept Kimina ${what}`,
          command: 'kimina.acceptProof',
          arguments: [p.id],
        }),
        new vscode.CodeLens(range, { title: '$(close) Reject', command: 'kimina.rejectProof', arguments: [p.id] }),
        new vscode.CodeLens(range, {
          title: '$(diff) Show Diff',
          command: 'kimina.showProposalDiff',
          arguments: [p.id],
        }),
      );
    }
    if (this.pending(doc.uri).length > 1) {
      const first = doc.positionAt(this.pending(doc.uri)[0].declAt);
      lenses.push(
        new vscode.CodeLens(new vscode.Range(first.line, 0, first.line, 0), {
          title: `$(check-all) Accept All Verified (${this.pending(doc.uri).length})`,
          command: 'kimina.acceptAllProofs',
          arguments: [doc.uri.toString()],
        }),
      );
    }
    return lenses;
  }

  async showDiff(id: string): Promise<void> {
    const p = this.all.get(id);
    if (!p) return;
    await vscode.workspace.openTextDocument(p.uri);
    const name = p.uri.path.split('/').pop();
    await vscode.commands.executeCommand(
      'vscode.diff',
      p.uri,
      this.proposalUri(p),
      `${name} ↔ Kimina ${p.kind === 'repair' ? 'repair' : 'proof'} of ${p.declaration}`,
      { preview: false, preserveFocus: true, viewColumn: columnOf(p.uri) },
    );
  }

  async accept(id: string): Promise<Accepted> {
    const p = this.all.get(id);
    if (!p) return { outcome: 'none' };
    const doc = await vscode.workspace.openTextDocument(p.uri);
    const range = new vscode.Range(doc.positionAt(p.from), doc.positionAt(p.to));
    this.all.delete(id);
    await this.closeDiffs(id);
    const stale = (problem?: string): Accepted => {
      this.refresh(p.uri);
      this.decided.fire({ outcome: 'stale', proposal: p, problem });
      return { outcome: 'stale', proposal: p, problem };
    };
    if (p.stale || doc.getText(range) !== p.replaced) return stale();
    if (p.changed) {
      // the file changed since the proof was checked: Lean checks the edit again on the file as it is now
      if (!this.recheck) return stale('the file changed since the proof was checked');
      const version = doc.version;
      const edit = { range: { start: range.start, end: range.end }, newText: p.edit.newText };
      const again = await this.recheck({
        uri: p.uri,
        code: doc.getText(),
        edit,
        declarationLine: doc.positionAt(p.declAt).line,
      }).catch((err: Error): RecheckResult => ({ ok: false, problem: err.message }));
      if (!again.ok) return stale(again.problem ?? 'Lean does not accept it on the file as it is now');
      if (doc.version !== version || p.stale) return stale('the file changed while the proof was checked again');
    }
    const edit = new vscode.WorkspaceEdit();
    edit.replace(p.uri, range, p.edit.newText);
    const applied = await vscode.workspace.applyEdit(edit);
    const span = { start: p.declAt, end: p.declEnd + p.edit.newText.length - (p.to - p.from) };
    this.refresh(p.uri);
    // Bring the file back where it was (the diff may have covered it), leaving the Proof view visible.
    if (!vscode.window.visibleTextEditors.some((e) => e.document.uri.toString() === p.uri.toString())) {
      await vscode.window.showTextDocument(doc, { preview: false, viewColumn: columnOf(p.uri), preserveFocus: false });
    }
    const outcome = applied ? 'accepted' : 'stale';
    this.decided.fire({ outcome, proposal: p });
    return applied ? { outcome, proposal: p, span } : { outcome, proposal: p };
  }

  async reject(id: string): Promise<Proposal | undefined> {
    const p = this.all.get(id);
    if (!p) return undefined;
    this.all.delete(id);
    await this.closeDiffs(id);
    this.refresh(p.uri);
    this.decided.fire({ outcome: 'rejected', proposal: p });
    return p;
  }

  /** Accepts every pending proposal (of one file when given), last in the file first so earlier ranges hold. */
  async acceptAll(uri?: vscode.Uri): Promise<{ accepted: number; stale: number }> {
    let accepted = 0;
    let stale = 0;
    for (const p of this.pending(uri).reverse()) {
      const { outcome } = await this.accept(p.id);
      if (outcome === 'accepted') accepted++;
      else if (outcome === 'stale') stale++;
    }
    return { accepted, stale };
  }

  private async closeDiffs(id: string): Promise<void> {
    const tabs = vscode.window.tabGroups.all
      .flatMap((g) => g.tabs)
      .filter(
        (t) =>
          t.input instanceof vscode.TabInputTextDiff &&
          t.input.modified.scheme === proposalScheme &&
          Proposals.idOf(t.input.modified) === id,
      );
    if (tabs.length) await vscode.window.tabGroups.close(tabs);
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.changed.dispose();
    this.lensesChanged.dispose();
    this.decided.dispose();
  }
}
