// The "Kimina" palette commands and the ones code lenses / code actions call with (uri, position) arguments.
import * as vscode from 'vscode';
import type { ProveMode } from '../backend/protocol';
import type { CtxApi } from './ctx';
import type { ProofRunner } from './proofRunner';
import type { ProofView } from './proofView';
import { pullModel, setupLean, setupTrainer } from './setup';
import { Proposals } from './proposal';
import type { Repairs } from './repair';
import { attemptSummary } from './words';

type LspPos = { line: number; character: number };

function target(proposals: Proposals, mode: ProveMode, uri?: string, position?: LspPos) {
  const given =
    uri && position
      ? { uri: vscode.Uri.parse(uri), at: new vscode.Position(position.line, position.character) }
      : undefined;
  const editor = vscode.window.activeTextEditor;
  if (!given && !editor) {
    void vscode.window.showWarningMessage('Kimina: open a Lean file and put the cursor in a theorem first.');
    return undefined;
  }
  const { uri: shown, at } = given ?? { uri: editor!.document.uri, at: editor!.selection.active };
  // A proposal's diff editor (the file with the proof applied): the real file, the cursor mapped back to it.
  const real = Proposals.realUri(shown);
  if (real) return { uri: real, position: realPosition(proposals, shown, at), mode };
  if (shown.scheme !== 'file') {
    void vscode.window.showWarningMessage(notAFile(shown.scheme));
    return undefined;
  }
  return { uri: shown, position: at, mode };
}

/** Why a proof cannot start from an editor that shows no file on disk (nothing is sent to the backend). */
function notAFile(scheme: string): string {
  return scheme === 'untitled'
    ? 'Kimina: this editor is not saved to a file. Save it as a .lean file in your Lean project, then prove from it.'
    : `Kimina: this editor shows ${scheme}: content, not a Lean file on disk; open the file itself and prove from there.`;
}

/**
 * A cursor in a proposal's diff editor (the file with one edit applied) as a position in the real file: lines
 * before the edit are the same, lines after it move by the edit's change in length, lines inside it map to its start.
 */
function realPosition(proposals: Proposals, shown: vscode.Uri, at: vscode.Position): vscode.Position {
  const p = proposals.get(Proposals.idOf(shown) ?? '');
  if (!p) return at;
  const start = p.edit.range.start.line;
  const newEnd = start + p.edit.newText.split('\n').length - 1;
  const oldEnd = p.edit.range.end.line;
  if (at.line <= start) return at;
  if (at.line <= newEnd) return new vscode.Position(start, 0);
  return new vscode.Position(at.line - (newEnd - oldEnd), at.character);
}

/** Proves every declaration with a sorry in the file, one after another (the code lenses list them). */
async function proveAllSorries(runner: ProofRunner, proposals: Proposals): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage('Kimina: open a Lean file first.');
    return;
  }
  if (runner.sorryQueue.running || runner.busy) {
    void vscode.window.showWarningMessage('Kimina is already proving; cancel it first ("Kimina: Cancel").');
    return;
  }
  const uri = Proposals.realUri(editor.document.uri) ?? editor.document.uri;
  if (uri.scheme !== 'file') {
    void vscode.window.showWarningMessage(notAFile(uri.scheme));
    return;
  }
  const tried = new Set<string>();
  let proved = 0;
  const source = new vscode.CancellationTokenSource();
  const work = async (): Promise<void> => {
    await vscode.commands.executeCommand('setContext', 'kimina.queueRunning', true);
    while (!source.token.isCancellationRequested) {
      const lenses =
        (await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', uri)) ?? [];
      const doc = await vscode.workspace.openTextDocument(uri);
      const next = lenses.find(
        (l) => l.command?.command === 'kimina.proveTheorem' && !tried.has(doc.lineAt(l.range.start.line).text.trim()),
      );
      if (!next) break;
      tried.add(doc.lineAt(next.range.start.line).text.trim());
      const result = await runner.prove(
        { uri, position: next.range.start, mode: 'theorem' },
        { queued: true, token: source.token },
      );
      if (!result || result.status === 'cancelled') break;
      if (result.status === 'proved') proved++;
    }
  };
  try {
    await runner.sorryQueue.run(() => source.cancel(), work);
  } finally {
    source.dispose();
    await vscode.commands.executeCommand('setContext', 'kimina.queueRunning', false);
  }
  // The proofs wait at their declarations as proposals: nothing entered the file unseen.
  const waiting = proposals.pending(uri).length;
  const choice = await vscode.window.showInformationMessage(
    `Kimina proved ${proved} of ${tried.size} declarations with sorry${proved ? '; the proofs wait at their declarations (Accept / Reject / Show Diff)' : ''}.`,
    ...(waiting ? ['Accept All Verified'] : []),
  );
  if (choice === 'Accept All Verified') await runner.acceptAll(uri);
}

async function showAttempts(runner: ProofRunner, view: ProofView): Promise<void> {
  const result = runner.lastResult;
  view.reveal();
  if (!result || result.attempts.length === 0) {
    void vscode.window.showInformationMessage('Kimina: no attempts yet.');
    return;
  }
  const pick = await vscode.window.showQuickPick(
    result.attempts.map((a, i) => ({
      label: `Sample ${a.sample + 1} · turn ${a.turn}`,
      description: attemptSummary(a),
      index: i,
    })),
    { title: 'Kimina: attempts of the last proof', placeHolder: "Open an attempt's candidate in an editor" },
  );
  if (!pick) return;
  const a = result.attempts[pick.index];
  const errors = (a.verdict?.messages ?? [])
    .map((m) => `-- ${m.severity} at line ${m.pos.line}: ${m.data.split('\n')[0]}`)
    .join('\n');
  const doc = await vscode.workspace.openTextDocument({
    language: 'lean4',
    content: `${a.code ?? a.response}\n\n${errors}\n`,
  });
  await vscode.window.showTextDocument(doc, { viewColumn: vscode.ViewColumn.Beside, preview: true });
}

export function registerCommands(
  context: vscode.ExtensionContext,
  ctx: CtxApi,
  runner: ProofRunner,
  view: ProofView,
  proposals: Proposals,
  repairs: Repairs,
): vscode.Disposable[] {
  const reg = (id: string, fn: (...args: never[]) => unknown) => vscode.commands.registerCommand(id, fn);
  const uriArg = (u?: vscode.Uri | string) => (typeof u === 'string' ? vscode.Uri.parse(u) : u);
  return [
    reg('kimina.proveTheorem', (uri?: string, pos?: LspPos) => {
      const t = target(proposals, 'theorem', uri, pos);
      if (t) return runner.prove(t);
    }),
    reg('kimina.proveGoal', (uri?: string, pos?: LspPos) => {
      const t = target(proposals, 'goal', uri, pos);
      if (t) return runner.prove(t);
    }),
    reg('kimina.repairProof', (uri?: string, pos?: LspPos) => {
      const t = target(proposals, 'repair', uri, pos);
      if (t) return runner.prove(t);
    }),
    reg('kimina.checkBrokenProofs', (u?: vscode.Uri | string) => repairs.checkFile(uriArg(u))),
    reg('kimina.repairAll', (u?: vscode.Uri | string) => repairs.repairAll('file', uriArg(u))),
    reg('kimina.repairAllFolder', (u?: vscode.Uri | string) => repairs.repairAll('folder', uriArg(u))),
    reg('kimina.repairAllWorkspace', () => repairs.repairAll('workspace')),
    reg('kimina.resumeRepairAll', () => repairs.resume()),
    reg('kimina.proveAllSorries', () => proveAllSorries(runner, proposals)),
    reg('kimina.proveAllSorriesFolder', (u?: vscode.Uri | string) => repairs.proveAllSorries('folder', uriArg(u))),
    reg('kimina.proveAllSorriesWorkspace', () => repairs.proveAllSorries('workspace')),
    reg('kimina.acceptAllProofs', (u?: vscode.Uri | string) => runner.acceptAll(uriArg(u))),
    reg('kimina.showProposalDiff', (id?: string) => runner.showDiff(id)),
    reg('kimina.cancel', async () => {
      runner.sorryQueue.stop();
      if (!(await runner.cancel())) void vscode.window.showInformationMessage('Kimina: nothing is running.');
    }),
    reg('kimina.acceptProof', (id?: string) => runner.accept(typeof id === 'string' ? id : undefined)),
    reg('kimina.rejectProof', (id?: string) => runner.reject(typeof id === 'string' ? id : undefined)),
    reg('kimina.retry', () => runner.retry()),
    reg('kimina.showAttempts', () => showAttempts(runner, view)),
    reg('kimina.showProofView', () => view.reveal()),
    reg('kimina.openTrainingMonitor', () => vscode.commands.executeCommand('kimina.trainingMonitor.focus')),
    reg('kimina.setupLean', () => setupLean(ctx)),
    reg('kimina.pullModel', () => pullModel(ctx)),
    reg('kimina.setupTrainer', () => setupTrainer(context)),
    reg('kimina.showLog', () => ctx.log.show()),
    reg('kimina.restartBackend', () => ctx.restart()),
  ];
}
