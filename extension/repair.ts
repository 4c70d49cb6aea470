// Repairing broken proofs from the editor: a "Repair with Kimina" code lens and quick fix on every declaration
// whose proof Lean rejects (from the diagnostics vscode-lean4 publishes, or from Kimina's own check of the file:
// "Kimina: Check for Broken Proofs"), and Repair All for a file, a folder or the workspace: the backend plans the
// queue (kept in SQLite, so a restart resumes it), each repair runs as a `kimina/prove` request in repair mode,
// verified repairs wait as proposals at their declarations, and a summary ends it.
import * as vscode from 'vscode';
import {
  type ClientDiagnostic,
  type EditorProveResult,
  type RepairItem,
  type RepairJob,
  editorCommands,
  lspMethods,
} from '../backend/protocol';
import type { CtxApi } from './ctx';
import type { ProofRunner } from './proofRunner';
import { leanDocuments, type Proposals } from './proposal';

const SEVERITY: Record<number, ClientDiagnostic['severity']> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'info',
  [vscode.DiagnosticSeverity.Hint]: 'info',
};

/** The document's diagnostics from Lean (vscode-lean4), as the backend takes them; Kimina's own are left out. */
function leanDiagnostics(uri: vscode.Uri): ClientDiagnostic[] {
  return vscode.languages
    .getDiagnostics(uri)
    .filter((d) => d.source !== 'kimina')
    .map((d) => ({
      range: {
        start: { line: d.range.start.line, character: d.range.start.character },
        end: { line: d.range.end.line, character: d.range.end.character },
      },
      severity: SEVERITY[d.severity] ?? 'info',
      message: d.message,
      source: d.source,
    }));
}

interface Known {
  version: number;
  declarations: { name: string; line: number }[];
}

export class Repairs implements vscode.CodeLensProvider, vscode.CodeActionProvider, vscode.Disposable {
  private readonly own = vscode.languages.createDiagnosticCollection('kimina');
  private readonly known = new Map<string, Known>();
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  readonly onDidChangeCodeLenses = this.lensesChanged.event;
  private readonly subscriptions: vscode.Disposable[];
  private jobRunning = false;

  constructor(
    private readonly ctx: CtxApi,
    private readonly runner: ProofRunner,
    private readonly proposals: Proposals,
  ) {
    this.subscriptions = [
      vscode.languages.registerCodeLensProvider(leanDocuments, this),
      vscode.languages.registerCodeActionsProvider(leanDocuments, this, {
        providedCodeActionKinds: [vscode.CodeActionKind.QuickFix],
      }),
      // Lean's own diagnostics changed: ask again which declarations they put in error.
      vscode.languages.onDidChangeDiagnostics((e) => {
        if (e.uris.some((u) => this.known.has(u.toString()) || leanDiagnostics(u).length)) this.lensesChanged.fire();
      }),
      // Our check's diagnostics describe the text that was checked: an edit makes them stale.
      vscode.workspace.onDidChangeTextDocument((e) => {
        if (e.contentChanges.length === 0) return;
        this.own.delete(e.document.uri);
      }),
      proposals.onDecided(({ outcome, proposal }) => {
        if (!proposal?.jobItem) return;
        const status = outcome === 'accepted' ? 'accepted' : outcome === 'rejected' ? 'rejected' : 'broken';
        void this.ctx
          .request(lspMethods.repairUpdate, {
            ...proposal.jobItem,
            status,
            reason: outcome === 'stale' ? 'the file changed before the repair was accepted' : undefined,
          })
          .catch((err: Error) => this.ctx.log.warn(`[repair] could not record the decision: ${err.message}`));
      }),
      ctx.onStarted(() => void this.offerResume()),
    ];
  }

  /** Declarations Lean rejects in this version of the document: vscode-lean4's diagnostics, else our last check. */
  private async brokenIn(doc: vscode.TextDocument): Promise<{ name: string; line: number }[]> {
    const key = doc.uri.toString();
    const cached = this.known.get(key);
    const lean = leanDiagnostics(doc.uri);
    if (lean.some((d) => d.severity === 'error')) {
      if (cached?.version === doc.version && cached.declarations.length) return cached.declarations;
      const found = await this.ctx
        .request(lspMethods.brokenDeclarations, { uri: key, code: doc.getText(), diagnostics: lean })
        .catch(() => null);
      const declarations = (found?.declarations ?? []).map((d) => ({ name: d.name, line: d.range.start.line }));
      this.known.set(key, { version: doc.version, declarations });
      return declarations;
    }
    return cached?.version === doc.version ? cached.declarations : [];
  }

  async provideCodeLenses(doc: vscode.TextDocument): Promise<vscode.CodeLens[]> {
    const pendingAt = new Set(this.proposals.pending(doc.uri).map((p) => p.declarationLine));
    return (await this.brokenIn(doc))
      .filter((d) => !pendingAt.has(d.line))
      .map(
        (d) =>
          new vscode.CodeLens(new vscode.Range(d.line, 0, d.line, 0), {
            title: '$(wrench) Repair with Kimina',
            command: editorCommands.repairProof,
            arguments: [doc.uri.toString(), { line: d.line, character: 0 }],
          }),
      );
  }

  provideCodeActions(
    doc: vscode.TextDocument,
    range: vscode.Range,
    context: vscode.CodeActionContext,
  ): vscode.CodeAction[] {
    // the diagnostics at the cursor, else Lean's errors on the cursor's line (a Lean error often sits at `by`)
    const error =
      context.diagnostics.find((d) => d.severity === vscode.DiagnosticSeverity.Error) ??
      vscode.languages
        .getDiagnostics(doc.uri)
        .find((d) => d.severity === vscode.DiagnosticSeverity.Error && d.range.start.line === range.start.line);
    if (!error) return [];
    const action = new vscode.CodeAction('Repair with Kimina', vscode.CodeActionKind.QuickFix);
    action.diagnostics = [error];
    action.command = {
      title: 'Repair with Kimina',
      command: editorCommands.repairProof,
      arguments: [doc.uri.toString(), { line: error.range.start.line, character: error.range.start.character }],
    };
    return [action];
  }

  /** Kimina's own check of a file: its Lean messages become diagnostics, its broken declarations get lenses. */
  async checkFile(uri?: vscode.Uri): Promise<void> {
    const doc = uri ? await vscode.workspace.openTextDocument(uri) : vscode.window.activeTextEditor?.document;
    if (!doc) {
      void vscode.window.showWarningMessage('Kimina: open a Lean file first.');
      return;
    }
    const version = doc.version;
    const found = await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Window, title: 'Kimina: checking the file' },
      () =>
        this.ctx.request(lspMethods.brokenDeclarations, {
          uri: doc.uri.toString(),
          code: doc.getText(),
          diagnostics: leanDiagnostics(doc.uri),
        }),
    );
    if (found.source === 'check') {
      this.own.set(
        doc.uri,
        found.diagnostics.map((d) => {
          const range = new vscode.Range(
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
          );
          const severity =
            d.severity === 'error'
              ? vscode.DiagnosticSeverity.Error
              : d.severity === 'warning'
                ? vscode.DiagnosticSeverity.Warning
                : vscode.DiagnosticSeverity.Information;
          const diagnostic = new vscode.Diagnostic(range, d.message, severity);
          diagnostic.source = 'kimina';
          return diagnostic;
        }),
      );
    }
    this.known.set(doc.uri.toString(), {
      version,
      declarations: found.declarations.map((d) => ({ name: d.name, line: d.range.start.line })),
    });
    this.lensesChanged.fire();
    if (found.problem) void vscode.window.showWarningMessage(`Kimina: ${found.problem}`);
    else
      void vscode.window.showInformationMessage(
        found.declarations.length
          ? `Kimina: Lean rejects ${found.declarations.length} proof${found.declarations.length > 1 ? 's' : ''} in this file (${found.declarations.map((d) => d.name).join(', ')}).`
          : 'Kimina: Lean accepts every proof in this file.',
      );
  }

  /** The Lean files of the file, a folder or the workspace, and the scope in words; null (with a warning) when none. */
  private async filesOf(
    scope: 'file' | 'folder' | 'workspace',
    target?: vscode.Uri,
  ): Promise<{ uris: vscode.Uri[]; label: string } | null> {
    if (scope === 'file') {
      const uri = target ?? vscode.window.activeTextEditor?.document.uri;
      if (!uri) {
        void vscode.window.showWarningMessage('Kimina: open a Lean file first.');
        return null;
      }
      return { uris: [uri], label: vscode.workspace.asRelativePath(uri) };
    }
    const folders =
      scope === 'folder' && target ? [target] : (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri);
    if (folders.length === 0) {
      void vscode.window.showWarningMessage('Kimina: open a folder first.');
      return null;
    }
    const uris: vscode.Uri[] = [];
    for (const folder of folders)
      uris.push(
        ...(await vscode.workspace.findFiles(
          new vscode.RelativePattern(folder, '**/*.lean'),
          '**/{.lake,lake-packages,build,.git}/**',
          2000,
        )),
      );
    return { uris, label: scope === 'workspace' ? 'the workspace' : vscode.workspace.asRelativePath(folders[0]) };
  }

  /** Repair All over the file, a folder or the workspace. */
  async repairAll(scope: 'file' | 'folder' | 'workspace', target?: vscode.Uri): Promise<void> {
    if (this.jobRunning || this.runner.busy) {
      void vscode.window.showWarningMessage('Kimina is already working; cancel it first ("Kimina: Cancel").');
      return;
    }
    const found = await this.filesOf(scope, target);
    if (!found) return;
    const { uris, label } = found;
    this.jobRunning = true;
    try {
      const planned = await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title: 'Kimina Repair All', cancellable: true },
        async (progress, token) => {
          progress.report({ message: `checking ${uris.length} file${uris.length === 1 ? '' : 's'} with Lean…` });
          const files = [];
          for (const uri of uris) {
            const doc = await vscode.workspace.openTextDocument(uri);
            files.push({ uri: uri.toString(), code: doc.getText(), diagnostics: leanDiagnostics(uri) });
          }
          return this.ctx.request(lspMethods.repairPlan, { scope: label, files }, token);
        },
      );
      for (const p of planned.problems)
        void vscode.window.showWarningMessage(
          `Kimina: ${vscode.workspace.asRelativePath(vscode.Uri.parse(p.uri))}: ${p.problem}`,
        );
      this.remember(planned.job);
      if (planned.job.items.length === 0) {
        void vscode.window.showInformationMessage(`Kimina: Lean accepts every proof in ${label}; nothing to repair.`);
        await this.ctx.request(lspMethods.repairJob, { jobId: planned.job.id, state: 'done' });
        return;
      }
      await this.run(planned.job);
    } catch (err) {
      void vscode.window.showErrorMessage(`Kimina Repair All stopped: ${(err as Error).message}`);
    } finally {
      this.jobRunning = false;
    }
  }

  /**
   * Prove All Sorries over a folder or the workspace, in the background: the backend plans one item per sorry in
   * the Repair All queue (SQLite) and proves them one after another (goal mode), resuming after a restart. Each
   * verified proof waits at its declaration as a proposal; a progress notification can cancel the job.
   */
  async proveAllSorries(scope: 'file' | 'folder' | 'workspace', target?: vscode.Uri): Promise<void> {
    const found = await this.filesOf(scope, target);
    if (!found) return;
    // the editor's text for open documents (unsaved edits included); the backend reads the others from disk
    const open = new Map(vscode.workspace.textDocuments.map((d) => [d.uri.toString(), d.getText()]));
    const files = found.uris.map((u) => ({ uri: u.toString(), code: open.get(u.toString()) }));
    try {
      const { job, problems } = await this.ctx.request(lspMethods.sorriesStart, { scope: found.label, files });
      for (const p of problems)
        void vscode.window.showWarningMessage(
          `Kimina: ${vscode.workspace.asRelativePath(vscode.Uri.parse(p.uri))}: ${p.problem}`,
        );
      if (job.items.length === 0) {
        void vscode.window.showInformationMessage(`Kimina: no sorry in ${found.label}.`);
        return;
      }
      void this.follow(job);
    } catch (err) {
      void vscode.window.showErrorMessage(`Kimina Prove All Sorries did not start: ${(err as Error).message}`);
    }
  }

  /** Shows a sorries job's progress until it ends; each verified proof becomes a proposal as it comes. */
  private async follow(job: RepairJob): Promise<void> {
    if (this.followed.has(job.id)) return;
    this.followed.add(job.id);
    const total = job.items.length;
    const ended = await vscode.window.withProgress(
      {
        location: vscode.ProgressLocation.Notification,
        title: `Kimina Prove All Sorries: ${job.scope}`,
        cancellable: true,
      },
      (progress, token) =>
        new Promise<RepairJob>((resolve) => {
          const cancel = token.onCancellationRequested(() => {
            void this.ctx.request(lspMethods.repairJob, { jobId: job.id, state: 'cancelled' }).catch(() => {});
          });
          const listening = this.ctx.onSorriesProgress(({ job: now, item }) => {
            if (now.id !== job.id) return;
            if (item?.status === 'repaired') void this.propose(now, item);
            const done = now.items.filter((i) => i.status !== 'pending').length;
            if (item)
              progress.report({
                message: `${done} of ${total}: ${item.declaration} ${item.status}`,
                increment: 100 / total,
              });
            if (now.state !== 'running') {
              listening.dispose();
              cancel.dispose();
              resolve(now);
            }
          });
        }),
    );
    this.followed.delete(job.id);
    void this.summarize(ended, ended.state === 'cancelled');
  }
  private readonly followed = new Set<string>();

  /** A verified item of a job as a proposal at its declaration (once). */
  private async propose(job: RepairJob, item: RepairItem): Promise<void> {
    if (!item.edit || item.replaced === undefined) return;
    if (this.proposals.pending().some((p) => p.jobItem?.jobId === job.id && p.jobItem.itemId === item.id)) return;
    await this.proposals
      .add({
        id: `${job.id}:${item.id}`,
        uri: vscode.Uri.parse(item.uri),
        edit: item.edit,
        replaced: item.replaced,
        declaration: item.declaration,
        declarationLine: item.line,
        kind: job.kind === 'sorries' ? 'proof' : 'repair',
        jobItem: { jobId: job.id, itemId: item.id },
      })
      .catch(() => {});
  }

  /** The planned items as lenses, until the documents change. */
  private remember(job: RepairJob): void {
    const byUri = new Map<string, { name: string; line: number }[]>();
    for (const item of job.items.filter((i) => i.status === 'pending' || i.status === 'broken'))
      byUri.set(item.uri, [...(byUri.get(item.uri) ?? []), { name: item.declaration, line: item.line }]);
    for (const [uri, declarations] of byUri) {
      const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
      if (doc) this.known.set(uri, { version: doc.version, declarations });
    }
    this.lensesChanged.fire();
  }

  /** Runs a job's pending items one by one; cancelling leaves the rest pending (Resume picks them up). */
  private async run(job: RepairJob): Promise<void> {
    const total = job.items.length;
    let done = job.items.filter((i) => i.status !== 'pending').length;
    let cancelled = false;
    await vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Kimina Repair All', cancellable: true },
      async (progress, token) => {
        for (const item of job.items.filter((i) => i.status === 'pending')) {
          if (token.isCancellationRequested) {
            cancelled = true;
            break;
          }
          progress.report({ message: `${done + 1} of ${total}: ${item.declaration}`, increment: 100 / total });
          const outcome = await this.repairItem(job, item, token);
          if (outcome === 'cancelled') {
            cancelled = true;
            break;
          }
          done++;
          progress.report({ message: `${done} of ${total}: ${item.declaration} ${outcome}` });
        }
      },
    );
    const latest = cancelled
      ? await this.ctx.request(lspMethods.repairJob, { jobId: job.id })
      : await this.ctx.request(lspMethods.repairJob, { jobId: job.id, state: 'done' });
    this.remember(latest);
    // not awaited: the summary waits for a click, and the next Repair All must not wait for it
    void this.summarize(latest, cancelled);
  }

  private async repairItem(
    job: RepairJob,
    item: RepairItem,
    token: vscode.CancellationToken,
  ): Promise<'repaired' | 'still broken' | 'skipped' | 'cancelled'> {
    const uri = vscode.Uri.parse(item.uri);
    let result: EditorProveResult | undefined;
    try {
      result = await this.runner.prove(
        { uri, position: new vscode.Position(item.line, 0), mode: 'repair' },
        { queued: true, token, jobItem: { jobId: job.id, itemId: item.id } },
      );
    } catch (err) {
      result = undefined;
      this.ctx.log.warn(`[repair] ${item.declaration}: ${(err as Error).message}`);
    }
    if (result?.status === 'cancelled' || token.isCancellationRequested) return 'cancelled';
    const update = (status: 'repaired' | 'broken' | 'skipped', reason: string, extra = {}) =>
      this.ctx.request(lspMethods.repairUpdate, { jobId: job.id, itemId: item.id, status, reason, ...extra });
    if (!result) {
      await update('broken', 'the repair request failed (see the Kimina log)');
      return 'still broken';
    }
    if (result.declaration && result.declaration.name !== item.declaration) {
      await update('skipped', `the file changed: line ${item.line + 1} now holds ${result.declaration.name}`);
      return 'skipped';
    }
    const proposal = this.runner.lastProposal;
    if (result.status === 'proved' && result.edit && proposal?.jobItem?.itemId === item.id) {
      await update('repaired', 'verified in place; waiting at its declaration', {
        edit: result.edit,
        replaced: proposal.replaced,
      });
      return 'repaired';
    }
    const why =
      result.problem ??
      result.attempts.filter((a) => !a.user).at(-1)?.verdict?.reason ??
      `no verified repair in ${result.attempts.filter((a) => !a.user).length} answers`;
    const skipped = result.repair?.skipped !== undefined && result.repair.conversation === null;
    await update(skipped ? 'skipped' : 'broken', why);
    return skipped ? 'skipped' : 'still broken';
  }

  private async summarize(job: RepairJob, cancelled: boolean): Promise<void> {
    const count = (s: RepairItem['status'][]) => job.items.filter((i) => s.includes(i.status)).length;
    const repaired = count(['repaired', 'accepted', 'rejected']);
    const broken = count(['broken']);
    const skipped = count(['skipped']);
    const pending = count(['pending']);
    const text =
      job.kind === 'sorries'
        ? `Kimina Prove All Sorries of ${job.scope}${cancelled ? ' cancelled' : ''}: ${repaired} of ${job.items.length} proved, ${broken} not proved, ${skipped} skipped${pending ? `, ${pending} not tried` : ''}.${repaired ? ' The proofs wait at their declarations.' : ''}`
        : cancelled
          ? `Kimina Repair All of ${job.scope} paused at ${job.items.length - pending} of ${job.items.length}: ${repaired} repaired so far ("Kimina: Resume Repair All" goes on).`
          : `Kimina Repair All of ${job.scope}: ${repaired} of ${job.items.length} repaired, ${broken} still broken, ${skipped} skipped.${repaired ? ' The repairs wait at their declarations.' : ''}`;
    const buttons = [...(count(['repaired']) ? ['Accept All Verified'] : []), 'Show Summary'];
    const choice = await vscode.window.showInformationMessage(text, ...buttons);
    if (choice === 'Accept All Verified') await this.acceptJob(job);
    else if (choice === 'Show Summary') await this.showSummary(job);
  }

  private async acceptJob(job: RepairJob): Promise<void> {
    const ids = new Set(job.items.map((i) => i.id));
    const mine = this.proposals.pending().filter((p) => p.jobItem?.jobId === job.id && ids.has(p.jobItem.itemId));
    for (const p of mine.reverse()) await this.proposals.accept(p.id);
  }

  async showSummary(job: RepairJob): Promise<void> {
    const rows = job.items.map(
      (i) =>
        `| ${vscode.workspace.asRelativePath(vscode.Uri.parse(i.uri))} | ${i.declaration} | ${i.line + 1} | ${i.status} | ${(i.reason ?? i.error).replace(/\|/g, '\\|').replace(/\n/g, ' ')} |`,
    );
    const content = [
      `# Kimina ${job.kind === 'sorries' ? 'Prove All Sorries' : 'Repair All'}: ${job.scope}`,
      '',
      '| File | Declaration | Line | Outcome | Why |',
      '|---|---|---|---|---|',
      ...rows,
      '',
    ].join('\n');
    const doc = await vscode.workspace.openTextDocument({ language: 'markdown', content });
    await vscode.window.showTextDocument(doc, { preview: true, viewColumn: vscode.ViewColumn.Beside });
  }

  /** After a restart: verified repairs become proposals again, and an interrupted job offers to go on. */
  async offerResume(): Promise<void> {
    const { jobs } = await this.ctx.request(lspMethods.repairJobs, {}).catch(() => ({ jobs: [] as RepairJob[] }));
    for (const job of jobs) {
      for (const item of job.items) if (item.status === 'repaired') await this.propose(job, item);
      // the backend resumes a Prove All Sorries job itself: show where it stands
      if (job.kind === 'sorries' && job.state === 'running') void this.follow(job);
    }
    const interrupted = jobs.find(
      (j) => j.kind !== 'sorries' && j.state === 'running' && j.items.some((i) => i.status === 'pending'),
    );
    if (!interrupted || this.jobRunning) return;
    const left = interrupted.items.filter((i) => i.status === 'pending').length;
    const choice = await vscode.window.showInformationMessage(
      `Kimina Repair All of ${interrupted.scope} stopped with ${left} of ${interrupted.items.length} declarations left.`,
      'Resume',
      'Discard',
    );
    if (choice === 'Resume') await this.resume(interrupted);
    else if (choice === 'Discard')
      await this.ctx.request(lspMethods.repairJob, { jobId: interrupted.id, state: 'cancelled' });
  }

  async resume(job?: RepairJob): Promise<void> {
    if (this.jobRunning) return;
    const target =
      job ??
      (await this.ctx.request(lspMethods.repairJobs, {})).jobs.find(
        (j) => j.kind !== 'sorries' && j.state === 'running' && j.items.some((i) => i.status === 'pending'),
      );
    if (!target) {
      void vscode.window.showInformationMessage('Kimina: no Repair All is waiting to be resumed.');
      return;
    }
    this.jobRunning = true;
    try {
      await this.run(target);
    } finally {
      this.jobRunning = false;
    }
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
    this.own.dispose();
    this.lensesChanged.dispose();
  }
}
