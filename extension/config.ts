// The kimina.* settings of VS Code: the only file of the extension that reads or writes them (what they become
// for the backend: settingsEnv.ts).
import * as vscode from 'vscode';
import { type KiminaSettings, settingsToEnv } from './settingsEnv';

export { type KiminaSettings, restartingSettings } from './settingsEnv';

export function readSettings(): KiminaSettings {
  const c = vscode.workspace.getConfiguration('kimina');
  return {
    engine: c.get('engine', 'onnx'),
    model: c.get('model', ''),
    openaiBaseUrl: c.get('openaiBaseUrl', ''),
    serverUrl: c.get('serverUrl', ''),
    serverToken: c.get('serverToken', ''),
    budget: c.get('budget', 'custom'),
    maxTokens: c.get('maxTokens', 24576),
    samples: c.get('samples', 4),
    fixTurns: c.get('fixTurns', 1),
    checkTimeout: c.get('timeouts.check', 60),
    proveTimeout: c.get('timeouts.prove', 900),
    leanProject: c.get('leanProject', ''),
    replCommand: c.get('replCommand', ''),
    device: c.get('device', 'auto'),
    kvCache: c.get('kvCache', 'auto'),
    speculation: c.get('speculation', false),
    nodePath: c.get('nodePath', 'node'),
    showDiffOnProof: c.get('showDiffOnProof', true),
  };
}

/** kimina.trainingModel: the model the Training Monitor's form starts with ('' for its default). */
export function trainingModelSetting(): string {
  return vscode.workspace.getConfiguration('kimina').get<string>('trainingModel', '');
}

/** Makes the in-process engine prove with the model in `dir` (user settings: kimina.engine, kimina.model). */
export async function proveWithModel(dir: string): Promise<void> {
  const config = vscode.workspace.getConfiguration('kimina');
  await config.update('engine', 'onnx', vscode.ConfigurationTarget.Global);
  await config.update('model', dir, vscode.ConfigurationTarget.Global);
}

/** The Lean project: the setting, else the first workspace folder. */
export function leanProjectFolder(s: KiminaSettings): string | undefined {
  return s.leanProject || vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** Environment for the backend process, from the settings and the open workspace. */
export function backendEnv(s: KiminaSettings): Record<string, string> {
  return settingsToEnv(s, leanProjectFolder(s));
}

/** Sets kimina.budget in the user settings (the Proof view's preset buttons). */
export async function setBudgetPreset(preset: KiminaSettings['budget']): Promise<void> {
  await vscode.workspace.getConfiguration('kimina').update('budget', preset, vscode.ConfigurationTarget.Global);
}
