// First-run help: pulling a model and setting up the Lean verifier with the backend's own CLI
// (`kimina model pull`, `kimina lean setup`), with a progress notification and the output in the Kimina log.
import * as vscode from 'vscode';
import { spawn } from 'node:child_process';
import type { BackendStatus } from '../backend/protocol';
import type { Ctx } from './ctx';
import { backendEnv, leanProjectFolder, readSettings } from './config';

const defaultModel = 'AI-MO/Kimina-Prover-RL-0.6B';

/** Runs `kimina <args>` with progress; the last output line is the progress message. Resolves true on success. */
export function runCli(context: vscode.ExtensionContext, ctx: Ctx, title: string, args: string[]): Promise<boolean> {
  const settings = readSettings();
  return Promise.resolve(vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (progress, token) =>
    new Promise<boolean>((resolve) => {
      ctx.log.info(`[setup] kimina ${args.join(' ')}`);
      const child = spawn(settings.nodePath, [context.asAbsolutePath('dist/cli.js'), ...args], { env: { ...process.env, ...backendEnv(settings) } });
      token.onCancellationRequested(() => child.kill('SIGTERM'));
      const onData = (chunk: Buffer) => {
        const lines = chunk.toString('utf8').split(/[\r\n]+/).map((l) => l.replace(/\x1b\[[0-9;]*[A-Za-z]/g, '').trim()).filter(Boolean);
        for (const l of lines) ctx.log.info(`[setup] ${l}`);
        if (lines.length) progress.report({ message: lines[lines.length - 1].slice(0, 120) });
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.on('error', (err) => { void vscode.window.showErrorMessage(`Kimina: could not run ${settings.nodePath}: ${err.message}`); resolve(false); });
      child.on('close', (code) => {
        if (code === 0) { void vscode.window.showInformationMessage(`${title}: done.`); resolve(true); return; }
        void vscode.window.showErrorMessage(`${title} failed (exit ${code}); see the Kimina log.`, 'Show Log').then((b) => { if (b) ctx.log.show(); });
        resolve(false);
      });
    })));
}

export async function pullModel(context: vscode.ExtensionContext, ctx: Ctx): Promise<void> {
  const model = await vscode.window.showInputBox({ title: 'Kimina: Pull Model', prompt: 'Hugging Face model id', value: readSettings().model || defaultModel, ignoreFocusOut: true });
  if (!model) return;
  if (await runCli(context, ctx, `Kimina: pulling ${model}`, ['model', 'pull', model])) await ctx.restart();
}

export async function setupLean(context: vscode.ExtensionContext, ctx: Ctx): Promise<void> {
  const project = leanProjectFolder(readSettings());
  if (!project) { void vscode.window.showWarningMessage('Kimina: open a Lean project folder (or set kimina.leanProject) first.'); return; }
  if (await runCli(context, ctx, 'Kimina: setting up the Lean verifier', ['lean', 'setup', '--project', project])) await ctx.restart();
}

/** Shows the first-run guidance once per session when the backend reports something missing. */
export function watchSetup(context: vscode.ExtensionContext, ctx: Ctx): vscode.Disposable {
  let shown = false;
  return ctx.onStatus((s: BackendStatus) => {
    if (shown || !s.setup || (!s.setup.model && !s.setup.lean)) return;
    shown = true;
    const buttons = [...(s.setup.model ? ['Pull Model'] : []), ...(s.setup.lean ? ['Set Up Lean'] : []), 'Open Settings'];
    const what = [s.setup.model && 'a model', s.setup.lean && 'the Lean verifier'].filter(Boolean).join(' and ');
    void vscode.window.showWarningMessage(`Kimina needs ${what} before the first proof. ${s.detail ?? ''}`, ...buttons).then((b) => {
      if (b === 'Pull Model') void pullModel(context, ctx);
      else if (b === 'Set Up Lean') void setupLean(context, ctx);
      else if (b === 'Open Settings') void vscode.commands.executeCommand('workbench.action.openSettings', 'kimina');
    });
  });
}
