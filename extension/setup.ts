// First-run help: pulling a model and setting up the Lean verifier, asked of the backend over the
// language-server face (kimina/setup/*), with its `$/progress` shown as a notification.
import * as vscode from 'vscode';
import { type BackendStatus, type SetupResult, lspMethods } from '../backend/protocol';
import type { CtxApi } from './ctx';
import { backendEnv, leanProjectFolder, readSettings } from './config';
import { backendRuntime } from './runtime';
import { forEditor, setupGuidance, type Shown } from './words';

const defaultModel = 'AI-MO/Kimina-Prover-RL-0.6B';

/** Tells the user how a setup request ended; true on success (the backend then restarts its services itself). */
async function finish(ctx: CtxApi, title: string, pending: Promise<SetupResult>): Promise<boolean> {
  const result = await pending.catch((err: Error): SetupResult => ({ ok: false, message: err.message }));
  if (result.ok) {
    ctx.log.info(`[setup] ${result.message}`);
    void vscode.window.showInformationMessage(`${title}: done.`);
    return true;
  }
  ctx.log.warn(`[setup] ${title}: ${result.message}`);
  if (result.cancelled) void vscode.window.showInformationMessage(`${title}: cancelled.`);
  else
    void vscode.window.showErrorMessage(`${title} failed: ${forEditor(result.message)}`, 'Show Log').then((b) => {
      if (b) ctx.log.show();
    });
  return false;
}

export async function pullModel(ctx: CtxApi): Promise<void> {
  const model = await vscode.window.showInputBox({
    title: 'Kimina: Pull Model',
    prompt: 'Hugging Face model id',
    value: readSettings().model || defaultModel,
    ignoreFocusOut: true,
  });
  if (!model) return;
  const title = `Kimina: pulling ${model}`;
  await finish(ctx, title, ctx.requestWithProgress(lspMethods.pullModel, { model }, title));
}

/**
 * Creates the trainer's Python environment (what fine-tuning needs) in a terminal, where pip's long output
 * belongs: the bundled CLI's `trainer setup`, under the same Node and settings as the backend.
 */
export function setupTrainer(context: vscode.ExtensionContext): void {
  const settings = readSettings();
  const runtime = backendRuntime(settings.nodePath);
  const terminal = vscode.window.createTerminal({
    name: 'Kimina: Set Up Trainer',
    shellPath: runtime.command,
    shellArgs: [context.asAbsolutePath('dist/cli.js'), 'trainer', 'setup'],
    env: { ...runtime.env, ...backendEnv(settings) },
  });
  terminal.show();
}

export async function setupLean(ctx: CtxApi): Promise<void> {
  const project = leanProjectFolder(readSettings());
  if (!project) {
    void vscode.window
      .showWarningMessage('Kimina: open a Lean project folder (or set kimina.leanProject) first.', 'Open Settings')
      .then((b) => {
        if (b) void vscode.commands.executeCommand('workbench.action.openSettings', 'kimina.leanProject');
      });
    return;
  }
  const title = 'Kimina: setting up the Lean verifier';
  const pending = ctx.requestWithProgress(lspMethods.setupLean, { project }, title);
  const first = await pending.catch((err: Error): SetupResult => ({ ok: false, message: err.message }));
  if (!first.ok && first.buildCommand) {
    // The REPL is ready but the project is not built for its imports: offer the build (with progress).
    ctx.log.warn(`[setup] ${first.message}`);
    const b = await vscode.window.showWarningMessage(
      `Kimina: the Lean project is not built. Build it now (${first.buildCommand}; Mathlib's cache is a few GB)?`,
      'Build Project',
      'Show Log',
    );
    if (b === 'Build Project')
      await finish(
        ctx,
        'Kimina: building the Lean project',
        ctx.requestWithProgress(lspMethods.setupLean, { project, build: true }, 'Kimina: building the Lean project'),
      );
    else if (b === 'Show Log') ctx.log.show();
    return;
  }
  await finish(ctx, title, Promise.resolve(first));
}

/** Shows a guidance message with its buttons and runs the one pressed. */
export function showGuidance(ctx: CtxApi, g: Shown): void {
  const show =
    g.level === 'error'
      ? vscode.window.showErrorMessage
      : g.level === 'warning'
        ? vscode.window.showWarningMessage
        : vscode.window.showInformationMessage;
  void show(g.text, ...g.actions).then((b) => {
    if (b === 'Pull Model') void pullModel(ctx);
    else if (b === 'Set Up Lean') void setupLean(ctx);
    else if (b === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'kimina');
    else if (b === 'Show Log') ctx.log.show();
  });
}

/**
 * Shows the first-run guidance whenever what is missing changes (a model, Lean): at start, after a setup that
 * fixed one part but not the other, after a settings change that lost one. While a proof runs the proof's own
 * message says it (with the same buttons), so the change is only noted.
 */
export function watchSetup(ctx: CtxApi, proving: () => boolean): vscode.Disposable {
  let shown = '';
  return ctx.onStatus((s: BackendStatus) => {
    if (s.state === 'starting') return;
    const g = setupGuidance(s);
    const key = g ? g.actions.join(',') : '';
    if (key === shown) return;
    shown = key;
    if (g && !proving()) showGuidance(ctx, g);
  });
}
