// Builds the LanguageClient that runs `node dist/cli.js lsp --stdio` (the backend's language-server face).
import type * as vscode from 'vscode';
import {
  CloseAction,
  ErrorAction,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
} from 'vscode-languageclient/node';
import { createInterface } from 'node:readline';
import { backendEnv, type KiminaSettings } from './config';
import { backendRuntime } from './runtime';
import { logLevelOf } from './words';

export interface ClientHooks {
  /** Called when the backend process died; return false to stop restarting it. */
  onCrash(): boolean;
}

export function createClient(
  context: vscode.ExtensionContext,
  settings: KiminaSettings,
  log: vscode.LogOutputChannel,
  hooks: ClientHooks,
): LanguageClient {
  const cli = context.asAbsolutePath('dist/cli.js');
  // kimina.nodePath unset: VS Code's own runtime (ELECTRON_RUN_AS_NODE=1); the packaged native modules are N-API
  const runtime = backendRuntime(settings.nodePath);
  log.info(`[extension] ${runtime.describe}`);
  const run = {
    command: runtime.command,
    args: [cli, 'lsp', '--stdio'],
    options: { env: { ...process.env, ...runtime.env, ...backendEnv(settings) } },
  };
  const serverOptions: ServerOptions = { run, debug: run };
  // The backend logs everything on stderr (stdout carries LSP): each line at its own level, not all as errors.
  const lines = (input: NodeJS.ReadableStream, onLine: (line: string) => void) =>
    createInterface({ input, crlfDelay: Infinity, terminal: false, historySize: 0 }).on('line', onLine);
  const stdioOptions = {
    stdout: (input: NodeJS.ReadableStream, channel: vscode.LogOutputChannel) => lines(input, (l) => channel.info(l)),
    stderr: (input: NodeJS.ReadableStream, channel: vscode.LogOutputChannel) =>
      lines(input, (l) => channel[logLevelOf(l)](l)),
  };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ language: 'lean4' }, { language: 'lean' }, { pattern: '**/*.lean' }],
    outputChannel: log,
    stdioOptions,
    errorHandler: {
      error: () => ({ action: ErrorAction.Continue }),
      closed: () => ({ action: hooks.onCrash() ? CloseAction.Restart : CloseAction.DoNotRestart, handled: true }),
    },
  };
  return new LanguageClient('kimina', 'Kimina', serverOptions, clientOptions);
}
