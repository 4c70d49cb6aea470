// The kimina.* settings and the KIMINA_* environment they become for the backend process (no VS Code API here).

export interface KiminaSettings {
  engine: 'onnx' | 'openai';
  model: string;
  openaiBaseUrl: string;
  serverUrl: string;
  serverToken: string;
  /** quick / thorough presets, or custom: maxTokens, samples and fixTurns (budget.ts). */
  budget: 'quick' | 'thorough' | 'custom';
  maxTokens: number;
  samples: number;
  fixTurns: number;
  checkTimeout: number;
  proveTimeout: number;
  leanProject: string;
  replCommand: string;
  device: 'auto' | 'cpu' | 'cuda';
  kvCache: 'auto' | 'fp32' | 'fp16';
  speculation: boolean;
  nodePath: string;
  showDiffOnProof: boolean;
}

/**
 * Every kimina.* setting the extension reads, by its key under `kimina.`, with the default it falls back to: the one
 * table of the extension's settings. package.json's contributes.configuration declares exactly these keys with these
 * defaults (test/extension/manifest.test.ts), and config.ts reads each through it.
 */
export const settingDefaults = {
  engine: 'onnx',
  model: '',
  openaiBaseUrl: '',
  serverUrl: '',
  serverToken: '',
  budget: 'custom',
  maxTokens: 24576,
  samples: 4,
  fixTurns: 1,
  'timeouts.check': 60,
  'timeouts.prove': 900,
  leanProject: '',
  replCommand: '',
  device: 'auto',
  kvCache: 'auto',
  speculation: false,
  nodePath: '', // empty: VS Code's own runtime (extension/runtime.ts)
  showDiffOnProof: true,
  trainingModel: '',
} as const;
export type SettingKey = keyof typeof settingDefaults;

/** Environment for `kimina lsp`: only settings that are set, so the backend's own defaults apply otherwise. */
export function settingsToEnv(s: KiminaSettings, leanProject: string | undefined): Record<string, string> {
  // Samples and fix turns travel with each request instead.
  const env: Record<string, string> = {
    KIMINA_ENGINE: s.engine,
    KIMINA_TIMEOUT: String(s.checkTimeout),
    KIMINA_PROVE_TIMEOUT: String(s.proveTimeout),
  };
  const optional: [string, string][] = [
    ['KIMINA_MODEL', s.model],
    ['KIMINA_OPENAI_BASE_URL', s.openaiBaseUrl],
    ['KIMINA_SERVER_URL', s.serverUrl],
    ['KIMINA_API_TOKEN', s.serverToken],
    ['KIMINA_REPL_COMMAND', s.replCommand],
    ['KIMINA_LEAN_PROJECT', leanProject ?? ''],
    ['KIMINA_DEVICE', s.device === 'auto' ? '' : s.device],
    ['KIMINA_KV_CACHE', s.kvCache === 'auto' ? '' : s.kvCache],
    ['KIMINA_SPECULATION', s.speculation ? '1' : ''],
  ];
  for (const [name, value] of optional) if (value) env[name] = value;
  return env;
}

/** Settings whose change needs a backend restart (they travel as environment variables). */
export const restartingSettings = [
  'engine',
  'model',
  'openaiBaseUrl',
  'serverUrl',
  'serverToken',
  'timeouts',
  'leanProject',
  'replCommand',
  'device',
  'kvCache',
  'speculation',
  'nodePath',
].map((k) => `kimina.${k}`);
