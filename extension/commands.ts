// The "Kimina" palette commands and the ones code lenses / code actions call with (uri, position) arguments.
import * as vscode from 'vscode';
import type { ProveMode } from '../backend/protocol';
import type { Ctx } from './ctx';
import type { ProofRunner } from './proofRunner';
import type { ProofView } from './proofView';
import { pullModel, setupLean } from './setup';
import { attemptSummary } from './words';

type LspPos = { line: number; character: number };

function target(mode: ProveMode, uri?: string, position?: LspPos) {
  if (uri && position)
    return { uri: vscode.Uri.parse(uri), position: new vscode.Position(position.line, position.character), mode };
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage('Kimina: open a Lean file and put the cursor in a theorem first.');
    return undefined;
  }
  return { uri: editor.document.uri, position: editor.selection.active, mode };
}

/** Proves every declaration with a sorry in the file, one after another (the code lenses list them). */
let queueRunning = false;

async function proveAllSorries(runner: ProofRunner): Promise<void> {
  const editor = vscode.window.activeTextEditor;
  if (!editor) {
    void vscode.window.showWarningMessage('Kimina: open a Lean file first.');
    return;
  }
  if (queueRunning || runner.busy) {
    void vscode.window.showWarningMessage('Kimina is already proving; cancel it first ("Kimina: Cancel").');
    return;
  }
  queueRunning = true;
  const uri = editor.document.uri;
  const tried = new Set<string>();
  let proved = 0;
  const source = new vscode.CancellationTokenSource();
  const stop = vscode.commands.registerCommand('kimina.internal.stopQueue', () => source.cancel());
  try {
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
        { apply: true, token: source.token },
      );
      if (!result || result.status === 'cancelled') break;
      if (result.status === 'proved') proved++;
    }
  } finally {
    queueRunning = false;
    stop.dispose();
    source.dispose();
    await vscode.commands.executeCommand('setContext', 'kimina.queueRunning', false);
  }
  void vscode.window.showInformationMessage(
    `Kimina proved ${proved} of ${tried.size} declarations with sorry${proved ? '; the proofs are in the file (undo with Ctrl+Z)' : ''}.`,
  );
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
  ctx: Ctx,
  runner: ProofRunner,
  view: ProofView,
): vscode.Disposable[] {
  const reg = (id: string, fn: (...args: never[]) => unknown) => vscode.commands.registerCommand(id, fn);
  return [
    reg('kimina.proveTheorem', (uri?: string, pos?: LspPos) => {
      const t = target('theorem', uri, pos);
      if (t) return runner.prove(t);
    }),
    reg('kimina.proveGoal', (uri?: string, pos?: LspPos) => {
      const t = target('goal', uri, pos);
      if (t) return runner.prove(t);
    }),
    reg('kimina.proveAllSorries', () => proveAllSorries(runner)),
    reg('kimina.cancel', async () => {
      await vscode.commands.executeCommand('kimina.internal.stopQueue').then(undefined, () => {});
      if (!(await runner.cancel())) void vscode.window.showInformationMessage('Kimina: nothing is running.');
    }),
    reg('kimina.acceptProof', () => runner.accept()),
    reg('kimina.rejectProof', () => runner.reject()),
    reg('kimina.retry', () => runner.retry()),
    reg('kimina.showAttempts', () => showAttempts(runner, view)),
    reg('kimina.showProofView', () => view.reveal()),
    reg('kimina.openTrainingMonitor', () => vscode.commands.executeCommand('kimina.trainingMonitor.focus')),
    reg('kimina.setupLean', () => setupLean(ctx)),
    reg('kimina.pullModel', () => pullModel(ctx)),
    reg('kimina.showLog', () => ctx.log.show()),
    reg('kimina.restartBackend', () => ctx.restart()),
  ];
}
