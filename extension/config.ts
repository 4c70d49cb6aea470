// The kimina.* settings, and the KIMINA_* environment they become for the backend process.
import * as vscode from 'vscode';

export interface KiminaSettings {
  engine: 'onnx' | 'openai';
  model: string;
  openaiBaseUrl: string;
  serverUrl: string;
  serverToken: string;
  samples: number;
  fixTurns: number;
  checkTimeout: number;
  proveTimeout: number;
  leanProject: string;
  replCommand: string;
  device: 'auto' | 'cpu' | 'cuda';
  nodePath: string;
  showDiffOnProof: boolean;
}

export function readSettings(): KiminaSettings {
  const c = vscode.workspace.getConfiguration('kimina');
  return {
    engine: c.get('engine', 'onnx'),
    model: c.get('model', ''),
    openaiBaseUrl: c.get('openaiBaseUrl', ''),
    serverUrl: c.get('serverUrl', ''),
    serverToken: c.get('serverToken', ''),
    samples: c.get('samples', 4),
    fixTurns: c.get('fixTurns', 1),
    checkTimeout: c.get('timeouts.check', 60),
    proveTimeout: c.get('timeouts.prove', 900),
    leanProject: c.get('leanProject', ''),
    replCommand: c.get('replCommand', ''),
    device: c.get('device', 'auto'),
    nodePath: c.get('nodePath', 'node'),
    showDiffOnProof: c.get('showDiffOnProof', true),
  };
}

/** The Lean project: the setting, else the first workspace folder. */
export function leanProjectFolder(s: KiminaSettings): string | undefined {
  return s.leanProject || vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** Environment for `kimina lsp`: only settings that are set, so the backend's own defaults apply otherwise. */
export function backendEnv(s: KiminaSettings): Record<string, string> {
  // Samples and fix turns travel with each request instead.
  const env: Record<string, string> = {
    KIMINA_ENGINE: s.engine,
    KIMINA_TIMEOUT: String(s.checkTimeout),
    KIMINA_PROVE_TIMEOUT: String(s.proveTimeout),
  };
  const optional: [string, string][] = [
    ['KIMINA_MODEL', s.model], ['KIMINA_OPENAI_BASE_URL', s.openaiBaseUrl], ['KIMINA_SERVER_URL', s.serverUrl],
    ['KIMINA_API_TOKEN', s.serverToken], ['KIMINA_REPL_COMMAND', s.replCommand],
    ['KIMINA_LEAN_PROJECT', leanProjectFolder(s) ?? ''], ['KIMINA_DEVICE', s.device === 'auto' ? '' : s.device],
  ];
  for (const [name, value] of optional) if (value) env[name] = value;
  return env;
}

/** Settings whose change needs a backend restart (they travel as environment variables). */
export const restartingSettings = ['engine', 'model', 'openaiBaseUrl', 'serverUrl', 'serverToken', 'timeouts', 'leanProject', 'replCommand', 'device', 'nodePath']
  .map((k) => `kimina.${k}`);
