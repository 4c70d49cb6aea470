// Activation of the VS Code extension: a thin client. The backend (`kimina lsp --stdio`) does the work;
// this side wires commands, the status bar, the Proof view, proposals (diff, accept) and gutter marks.
import * as vscode from 'vscode';
import { Ctx } from './ctx';
import { registerCommands } from './commands';
import { restartingSettings } from './config';
import { ProvedMarks } from './decorations';
import { ProofRunner } from './proofRunner';
import { ProofView } from './proofView';
import { Proposals, recheckThrough } from './proposal';
import { createStatusBar } from './statusBar';
import { watchSetup } from './setup';
import { registerTrainingMonitor } from './trainingMonitor';
import { Repairs } from './repair';
import { registerAgents } from './agents';

let ctx: Ctx | undefined;

export function activate(context: vscode.ExtensionContext): void {
  ctx = new Ctx(context);
  const view = new ProofView(context);
  const proposals = new Proposals(recheckThrough(ctx));
  const marks = new ProvedMarks(context);
  const runner = new ProofRunner(ctx, view, proposals, marks);
  const repairs = new Repairs(ctx, runner, proposals);
  context.subscriptions.push(
    view,
    proposals,
    marks,
    runner,
    repairs,
    createStatusBar(ctx.onStatus, ctx.currentStatus),
    watchSetup(ctx, () => runner.busy),
    ...registerCommands(context, ctx, runner, view, proposals, repairs),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (restartingSettings.some((s) => e.affectsConfiguration(s))) void ctx?.restart();
    }),
  );
  // Agents (MCP, language-model tools) reach the backend this window runs; the Proof view lists their jobs.
  context.subscriptions.push(...registerAgents(ctx, (jobs) => view.showAgentJobs(jobs)));
  // The Training Monitor asks the backend, which relays to the attached `kimina serve` (training outlives a window).
  context.subscriptions.push(registerTrainingMonitor(context, ctx));
  ctx.log.info(`[extension] Kimina ${context.extension.packageJSON.version} activated`);
  void ctx.start();
}

export async function deactivate(): Promise<void> {
  await ctx?.dispose();
  ctx = undefined;
}
