// Runs one proof at a time from the editor: sends kimina/prove, streams events into the Proof view and a
// cancellable progress notification, then turns a verified proof or repair into a proposal at its declaration
// (code lenses, diff, Accept / Reject); a new one never replaces those already pending.
import * as vscode from 'vscode';
import type { EditorProveResult, LspProveEvent, ProveMode } from '../backend/protocol';
import { errorKindOf, lspMethods } from '../backend/protocol';
import type { CtxApi } from './ctx';
import { readSettings, setBudgetPreset } from './config';
import { type Budget, budgetOf, budgetText } from './budget';
import { type Lean4Exports, plainGoalAt } from './leanGoal';
import type { ViewBudget } from '../media/proofViewMessages';
import type { ProofView } from './proofView';
import { type Proposal, Proposals } from './proposal';
import type { ProvedMarks } from './decorations';
import { showGuidance } from './setup';
import { attemptSummary, outcomeMessage, requestFailedMessage, setupGuidance } from './words';
import { SorryQueue } from './sorryQueue';

export interface ProveTarget {
  uri: vscode.Uri;
  position: vscode.Position;
  mode: ProveMode;
}
interface Running {
  id: string;
  target: ProveTarget;
  onEvent(e: LspProveEvent): void;
}

let counter = 0;

export class ProofRunner implements vscode.Disposable {
  private running: Running | undefined;
  /** The last proof failed because the backend could not prove at all (no model, no Lean). */
  private failedForSetup = false;
  /** The id of the run the Proof view shows. */
  private viewRun = '';
  private last: { target: ProveTarget; result?: EditorProveResult } | undefined;
  /** The proposal the Proof view shows (its Accept / Reject / Show Diff buttons act on it). */
  private viewProposal: string | undefined;
  /** The proposal the last proof made, if any. */
  lastProposal: Proposal | undefined;
  /** "Prove All Sorries": its queue, which Cancel stops. */
  readonly sorryQueue = new SorryQueue();
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly ctx: CtxApi,
    private readonly view: ProofView,
    private readonly proposals: Proposals,
    private readonly marks: ProvedMarks,
  ) {
    this.subscriptions = [
      ctx.onProveEvent((e) => {
        if (this.running && e.id === this.running.id) this.running.onEvent(e);
      }),
      view.onAction((action) => void this.onViewAction(action)),
      view.onBudget((preset) => void this.pickBudget(preset)),
      // A proof that failed because something was missing: once the backend is ready again (a model was
      // pulled, Lean set up), the view stops showing the old failure and offers Retry.
      ctx.onStatus((s) => {
        if (s.state === 'ready' && !setupGuidance(s) && this.failedForSetup) {
          this.failedForSetup = false;
          this.view.post({ type: 'note', message: 'Kimina is ready now: Retry proves it again.' });
        }
      }),
    ];
  }

  /** The engine's speed (tokens/s, all samples together) measured in the last proof with this engine and model. */
  private measuredSpeed(): number | undefined {
    const s = this.ctx.currentStatus;
    return this.ctx.memory.get<Record<string, number>>('kimina.measuredSpeed', {})[`${s.engine}|${s.model}`];
  }

  private rememberSpeed(tokensPerSecond: number): void {
    const s = this.ctx.currentStatus;
    if (!(tokensPerSecond > 0) || !s.engine) return;
    const all = { ...this.ctx.memory.get<Record<string, number>>('kimina.measuredSpeed', {}) };
    all[`${s.engine}|${s.model}`] = Math.round(tokensPerSecond * 10) / 10;
    void this.ctx.memory.update('kimina.measuredSpeed', all);
  }

  private viewBudget(b: Budget): ViewBudget {
    const tokensPerSecond = this.measuredSpeed();
    return { ...b, text: budgetText(b, tokensPerSecond), ...(tokensPerSecond ? { tokensPerSecond } : {}) };
  }

  private async pickBudget(preset: Budget['preset']): Promise<void> {
    await setBudgetPreset(preset);
    this.view.post({ type: 'budget', budget: this.viewBudget(budgetOf(readSettings())) });
  }

  /** The goal at the cursor from the Lean 4 extension, when it runs (it is never started from here). */
  private async showLeanGoal(id: string, target: ProveTarget): Promise<void> {
    const lean4 = vscode.extensions.getExtension<Lean4Exports>('leanprover.lean4');
    if (!lean4?.isActive || !lean4.exports?.lean4EnabledFeatures) return;
    const position = { line: target.position.line, character: target.position.character };
    const goal = await plainGoalAt(lean4.exports, target.uri.toString(), position);
    if (goal && this.last?.target === target && this.viewRun === id)
      this.view.post({ type: 'goal', goals: goal.goals, line: position.line, source: 'lean4' });
  }

  get busy(): boolean {
    return this.running !== undefined;
  }
  get lastResult(): EditorProveResult | undefined {
    return this.last?.result;
  }

  private async onViewAction(action: string): Promise<void> {
    if (action === 'accept') await this.accept();
    else if (action === 'reject') await this.reject();
    else if (action === 'retry') await this.retry();
    else if (action === 'cancel') await this.cancel();
    else if (action === 'showDiff' && this.viewProposal) await this.proposals.showDiff(this.viewProposal);
    else if (action === 'setupLean') await vscode.commands.executeCommand('kimina.setupLean');
    else if (action === 'pickTheorem') await this.pickTheorem();
  }

  /**
   * Proves (or repairs) the target; a verified result becomes a proposal at its declaration. `queued` (Prove All
   * Sorries, Repair All): no diff opens and no message per proof; the queue reports at its end. Resolves with the
   * result, or undefined when the request itself failed.
   */
  async prove(
    target: ProveTarget,
    options: {
      queued?: boolean;
      token?: vscode.CancellationToken;
      jobItem?: { jobId: string; itemId: number };
    } = {},
  ): Promise<EditorProveResult | undefined> {
    const apply = options.queued ?? false;
    if (this.running) {
      void vscode.window.showWarningMessage('Kimina is already proving; cancel it first ("Kimina: Cancel").');
      return undefined;
    }
    const doc = await vscode.workspace.openTextDocument(target.uri);
    const text = doc.getText();
    const version = doc.version;
    const settings = readSettings();
    const budget = budgetOf(settings);
    this.failedForSetup = false;
    let lastSpeed = 0;
    const id = `p${Date.now().toString(36)}-${++counter}`;
    const file = vscode.workspace.asRelativePath(target.uri);
    this.last = { target };
    this.viewRun = id;
    this.lastProposal = undefined;
    this.view.begin({
      type: 'start',
      id,
      title:
        target.mode === 'goal'
          ? `Goal at line ${target.position.line + 1}`
          : target.mode === 'repair'
            ? `Repair at line ${target.position.line + 1}`
            : `Prove at line ${target.position.line + 1}`,
      mode: target.mode,
      file,
      startedAt: Date.now(),
      budget: this.viewBudget(budget),
    });
    void vscode.commands.executeCommand('setContext', 'kimina.proving', true);
    void this.showLeanGoal(id, target);
    // A queue's token outlives this proof: its cancel listener goes when the proof ends, or a later Cancel
    // would also send kimina/cancel for this finished proof.
    const listening: (vscode.Disposable | undefined)[] = [];
    try {
      return await vscode.window.withProgress(
        {
          // in a queue the queue's own notification counts (n of m) and cancels
          location: apply ? vscode.ProgressLocation.Window : vscode.ProgressLocation.Notification,
          title: 'Kimina',
          cancellable: !apply,
        },
        async (progress, token) => {
          const cancel = () => void this.ctx.request(lspMethods.cancel, { id }).catch(() => {});
          listening.push(token.onCancellationRequested(cancel), options.token?.onCancellationRequested(cancel));
          progress.report({
            message:
              target.mode === 'goal'
                ? 'proving the goal at the cursor…'
                : target.mode === 'repair'
                  ? 'repairing the proof…'
                  : 'proving…',
          });
          this.running = {
            id,
            target,
            onEvent: (e) => {
              this.view.post({ type: 'event', event: e, at: Date.now() });
              if (e.type === 'stage') progress.report({ message: e.message.split('\n')[0] });
              else if (e.type === 'progress') {
                lastSpeed = e.tokensPerSecond;
                const wave = e.wave && e.wave.of > 1 ? `wave ${e.wave.index} of ${e.wave.of}, ` : '';
                progress.report({
                  message: `thinking… ${wave}${e.tokens} tokens, ${e.tokensPerSecond.toFixed(1)} tok/s`,
                });
              } else if (e.type === 'attempt')
                progress.report({ message: `turn ${e.attempt.turn}: ${attemptSummary(e.attempt)}` });
            },
          };
          let result: EditorProveResult;
          try {
            result = await this.ctx.request(lspMethods.prove, {
              id,
              uri: target.uri.toString(),
              code: text,
              mode: target.mode,
              position: { line: target.position.line, character: target.position.character },
              samples: budget.samples,
              fixTurns: budget.fixTurns,
              maxTokens: budget.maxTokens,
            });
            if (lastSpeed > 0) this.rememberSpeed(lastSpeed);
          } catch (err) {
            const shown = requestFailedMessage((err as Error).message, errorKindOf(err));
            const missing = setupGuidance(this.ctx.currentStatus);
            this.failedForSetup = missing !== undefined || shown.actions.includes('Pull Model');
            this.view.post({ type: 'failed', message: shown.text.replace(/^Kimina: /, '') });
            // Something is missing: say what, with the buttons that fix it, each time a proof needs it.
            showGuidance(this.ctx, missing ?? shown);
            return undefined;
          }
          this.last = { target, result };
          await this.present(result, target, { text, version }, apply, options.jobItem);
          return result;
        },
      );
    } finally {
      for (const l of listening) l?.dispose();
      this.running = undefined;
      void vscode.commands.executeCommand('setContext', 'kimina.proving', false);
    }
  }

  private async present(
    result: EditorProveResult,
    target: ProveTarget,
    checked: { text: string; version: number },
    apply: boolean,
    jobItem?: { jobId: string; itemId: number },
  ): Promise<void> {
    const canAccept = result.status === 'proved' && result.edit !== null;
    this.view.post({ type: 'result', result, canAccept, at: Date.now() });
    const name = result.declaration?.name ?? 'the theorem';
    if (!canAccept) {
      if (result.verifierFailure) this.failedForSetup = true;
      const shown = outcomeMessage(result, apply);
      if (!shown) return;
      const show =
        shown.level === 'error'
          ? vscode.window.showErrorMessage
          : shown.level === 'warning'
            ? vscode.window.showWarningMessage
            : vscode.window.showInformationMessage;
      void show(shown.text, ...shown.actions).then((b) => {
        if (b === 'Retry') void this.retry();
        else if (b === 'Show Attempts') void vscode.commands.executeCommand('kimina.showAttempts');
        else if (b === 'Set Up Lean') void vscode.commands.executeCommand('kimina.setupLean');
        else if (b === 'Show Log') this.ctx.log.show();
        else if (b === 'Pick a Theorem') void this.pickTheorem(target.uri);
      });
      return;
    }
    const edit = result.edit!;
    const text = checked.text;
    const offsetOf = (p: { line: number; character: number }) => {
      const lines = text.split('\n');
      return lines.slice(0, p.line).reduce((n, l) => n + l.length + 1, 0) + p.character;
    };
    const declarationLine = result.declaration?.range.start.line ?? target.position.line;
    const declarationEnd = result.declaration ? offsetOf(result.declaration.range.end) : offsetOf(edit.range.end);
    const proposal: Proposal = {
      id: Proposals.newId(),
      uri: target.uri,
      edit,
      replaced: text.slice(offsetOf(edit.range.start), offsetOf(edit.range.end)),
      declaration: name,
      declarationLine,
      checkedVersion: checked.version,
      declarationText: text.slice(
        offsetOf({ line: declarationLine, character: 0 }),
        Math.max(declarationEnd, offsetOf(edit.range.end)),
      ),
      kind: result.mode === 'repair' ? 'repair' : 'proof',
      ...(jobItem ? { jobItem } : {}),
    };
    await this.proposals.add(proposal);
    this.viewProposal = proposal.id;
    this.lastProposal = proposal;
    if (!apply && readSettings().showDiffOnProof) await this.proposals.showDiff(proposal.id);
  }

  /** The proposal a command without an id means: the diff editor's, else the Proof view's, else the only one. */
  private chooseProposal(id?: string): string | undefined {
    if (id && this.proposals.get(id)) return id;
    const active = vscode.window.activeTextEditor?.document.uri;
    const shown = active ? Proposals.idOf(active) : undefined;
    if (shown && this.proposals.get(shown)) return shown;
    if (this.viewProposal && this.proposals.get(this.viewProposal)) return this.viewProposal;
    const all = this.proposals.pending();
    return all.length === 1 ? all[0].id : undefined;
  }

  private async pickProposal(id?: string): Promise<string | undefined> {
    const chosen = this.chooseProposal(id);
    if (chosen || id) return chosen;
    const all = this.proposals.pending();
    if (all.length === 0) return undefined;
    const pick = await vscode.window.showQuickPick(
      all.map((p) => ({
        label: `${p.declaration}`,
        description: `${vscode.workspace.asRelativePath(p.uri)}:${p.declarationLine + 1} · ${p.kind}`,
        id: p.id,
      })),
      { title: 'Kimina: which proposal?' },
    );
    return pick?.id;
  }

  async showDiff(id?: string): Promise<void> {
    const chosen = await this.pickProposal(id);
    if (chosen) await this.proposals.showDiff(chosen);
  }

  async acceptAll(uri?: vscode.Uri): Promise<void> {
    const { accepted, stale } = await this.proposals.acceptAll(uri);
    if (accepted && this.viewProposal && !this.proposals.get(this.viewProposal))
      this.view.post({ type: 'resolved', outcome: 'accepted' });
    void vscode.window.showInformationMessage(
      `Kimina accepted ${accepted} proposal${accepted === 1 ? '' : 's'}${stale ? `; ${stale} no longer matched the file and were dropped` : ''}.`,
    );
  }

  async accept(id?: string): Promise<void> {
    const chosen = await this.pickProposal(id);
    const accepted = chosen ? await this.proposals.accept(chosen) : { outcome: 'none' as const };
    const { outcome, proposal } = accepted;
    if (outcome === 'none' || !proposal) {
      void vscode.window.showInformationMessage('Kimina: no proof is waiting to be accepted.');
      return;
    }
    if (proposal.id === this.viewProposal)
      this.view.post({ type: 'resolved', outcome: outcome === 'accepted' ? 'accepted' : 'stale' });
    if (outcome === 'accepted' && proposal && 'span' in accepted && accepted.span)
      this.marks.add(proposal.uri, proposal.declaration, accepted.span);
    if (outcome === 'stale')
      void vscode.window
        .showWarningMessage(
          `Kimina: the file changed since the proof started${'problem' in accepted && accepted.problem ? ` (${accepted.problem})` : ''}; nothing was inserted. Retry to prove it again.`,
          'Retry',
        )
        .then((b) => {
          if (b) void this.retry();
        });
  }

  async reject(id?: string): Promise<void> {
    const chosen = await this.pickProposal(id);
    const p = chosen ? await this.proposals.reject(chosen) : undefined;
    if (p && p.id === this.viewProposal) this.view.post({ type: 'resolved', outcome: 'rejected' });
  }

  async retry(): Promise<void> {
    if (!this.last) {
      void vscode.window.showInformationMessage('Kimina: nothing to retry yet.');
      return;
    }
    await this.prove(this.last.target);
  }

  /** Lets the user pick a declaration with a sorry in the file (from the code lenses), then proves it. */
  async pickTheorem(uri = this.last?.target.uri): Promise<void> {
    if (!uri) return;
    const lenses =
      (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? [];
    const doc = await vscode.workspace.openTextDocument(uri);
    const items = lenses
      .filter((l) => l.command?.command === 'kimina.proveTheorem')
      .map((l) => ({
        label: doc
          .lineAt(l.range.start.line)
          .text.trim()
          .replace(/\s*:=.*$/, ''),
        description: `line ${l.range.start.line + 1}`,
        line: l.range.start.line,
        character: l.range.start.character,
      }));
    if (!items.length) {
      void vscode.window.showInformationMessage('Kimina: no theorem in this file has a sorry to prove.');
      return;
    }
    const pick = await vscode.window.showQuickPick(items, {
      title: 'Kimina: pick a theorem to prove',
      placeHolder: 'Theorems with sorry in this file',
    });
    if (!pick) return;
    await this.prove({ uri, position: new vscode.Position(pick.line, pick.character), mode: 'theorem' });
  }

  async cancel(): Promise<boolean> {
    const r = this.running;
    if (!r) return false;
    await this.ctx.request(lspMethods.cancel, { id: r.id }).catch(() => {});
    return true;
  }

  dispose(): void {
    for (const s of this.subscriptions) s.dispose();
  }
}
