// The kimina.* settings of VS Code: the only file of the extension that reads or writes them. What each one is, its
// default and the KIMINA_* variable it becomes for the backend: the one table, backend/protocol/settingsTable.ts.
import * as vscode from 'vscode';
import { type KiminaSettings, settingKeys, settingDefaults, settingsEnv } from '../backend/protocol/settingsTable';

export { type KiminaSettings, restartingSettings } from '../backend/protocol/settingsTable';

/** Every kimina.* setting, read now (each one's default from the table). */
export function readSettings(): KiminaSettings {
  const c = vscode.workspace.getConfiguration('kimina');
  const defaults = settingDefaults();
  return Object.fromEntries(settingKeys.map((k) => [k, c.get(k, defaults[k])])) as KiminaSettings;
}

/** kimina.trainingModel: the model the Training Monitor's form starts with ('' for its default). */
export function trainingModelSetting(): string {
  return readSettings().trainingModel;
}

/** Switches proving to an OpenAI-compatible server (kimina.engine = openai) and opens its URL setting. */
export async function useOpenAIEngine(): Promise<void> {
  await vscode.workspace.getConfiguration('kimina').update('engine', 'openai', vscode.ConfigurationTarget.Global);
  await vscode.commands.executeCommand('workbench.action.openSettings', 'kimina.openaiBaseUrl');
}

/**
 * Makes the in-process engine prove with the model in `dir` (user settings: kimina.engine, kimina.model): an
 * OpenAI-compatible server gives way to auto (the in-process engine chosen per machine); onnx or llama stays.
 */
export async function proveWithModel(dir: string): Promise<void> {
  const config = vscode.workspace.getConfiguration('kimina');
  if (config.get<string>('engine') === 'openai')
    await config.update('engine', 'auto', vscode.ConfigurationTarget.Global);
  await config.update('model', dir, vscode.ConfigurationTarget.Global);
}

/** The Lean project: the setting, else the first workspace folder. */
export function leanProjectFolder(s: KiminaSettings): string | undefined {
  return s.leanProject || vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
}

/** Environment for the backend process, from the settings and the open workspace. */
export function backendEnv(s: KiminaSettings): Record<string, string> {
  return settingsEnv({ ...s, leanProject: leanProjectFolder(s) ?? '' });
}

/** Sets kimina.budget in the user settings (the Proof view's preset buttons). */
export async function setBudgetPreset(preset: KiminaSettings['budget']): Promise<void> {
  await vscode.workspace.getConfiguration('kimina').update('budget', preset, vscode.ConfigurationTarget.Global);
}
