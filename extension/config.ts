// The kimina.* settings of VS Code: the only file of the extension that reads or writes them (what they become
// for the backend: settingsEnv.ts).
import * as vscode from 'vscode';
import { type KiminaSettings, type SettingKey, settingDefaults, settingsToEnv } from './settingsEnv';

export { type KiminaSettings, restartingSettings } from './settingsEnv';

export function readSettings(): KiminaSettings {
  const c = vscode.workspace.getConfiguration('kimina');
  const get = <T>(key: SettingKey): T => c.get<T>(key, settingDefaults[key] as T);
  return {
    engine: get('engine'),
    model: get('model'),
    openaiBaseUrl: get('openaiBaseUrl'),
    serverUrl: get('serverUrl'),
    serverToken: get('serverToken'),
    budget: get('budget'),
    maxTokens: get('maxTokens'),
    samples: get('samples'),
    fixTurns: get('fixTurns'),
    checkTimeout: get('timeouts.check'),
    proveTimeout: get('timeouts.prove'),
    leanProject: get('leanProject'),
    replCommand: get('replCommand'),
    device: get('device'),
    kvCache: get('kvCache'),
    speculation: get('speculation'),
    nodePath: get('nodePath'),
    showDiffOnProof: get('showDiffOnProof'),
  };
}

/** kimina.trainingModel: the model the Training Monitor's form starts with ('' for its default). */
export function trainingModelSetting(): string {
  return vscode.workspace.getConfiguration('kimina').get<string>('trainingModel', settingDefaults.trainingModel);
}

/** Switches proving to an OpenAI-compatible server (kimina.engine = openai) and opens its URL setting. */
export async function useOpenAIEngine(): Promise<void> {
  await vscode.workspace.getConfiguration('kimina').update('engine', 'openai', vscode.ConfigurationTarget.Global);
  await vscode.commands.executeCommand('workbench.action.openSettings', 'kimina.openaiBaseUrl');
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
