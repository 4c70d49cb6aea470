// The one table of the kimina.* settings of VS Code, for both halves: each row is a setting's key, type, default,
// description, Workspace Trust restriction, whether a change restarts the backend, and the KIMINA_* variable it
// becomes for the backend (backend/settings/settings.ts reads that variable). package.json's
// contributes.configuration, capabilities.untrustedWorkspaces.restrictedConfigurations and the engine enum are
// generated from it (`npm run gen:settings`, scripts/gen-settings.ts; test/extension/settingsTable.test.ts keeps
// them equal); the extension reads (extension/config.ts), maps to the environment and words (extension/words.ts)
// its settings through it. How to add a setting or an engine kind: docs/architecture.md, "How to add …".
// No VS Code API and no import: the extension, the backend's settings and the generator all read it.

/** The engine kinds, each with the line the settings editor shows; KIMINA_ENGINE accepts these, and
 * backend/model/index.ts has one factory for each (engineFactories). */
const engineKindDescriptions = {
  auto: 'Chosen per machine: the in-process engine (ONNX or llama.cpp) with the earlier expected first verified proof by their calibrated cost models; llama.cpp only where it is installed or a GPU it can use is there (`kimina model calibrate` compares both)',
  onnx: 'In-process ONNX model (CPU or CUDA)',
  openai: 'An OpenAI-compatible server (vLLM, SGLang, llama.cpp, Ollama)',
  llama: 'In-process llama.cpp (Metal, Vulkan, CUDA or CPU), installed on first use',
  vllm: 'A vLLM server the backend starts from the trainer environment on the first request and stops when idle (Linux, NVIDIA GPU; `kimina trainer setup --gpu` installs vLLM)',
} as const;
export type EngineKind = keyof typeof engineKindDescriptions;
export const engineKinds = Object.keys(engineKindDescriptions) as EngineKind[];

interface Row {
  type: 'string' | 'integer' | 'number' | 'boolean';
  default: string | number | boolean;
  /** The accepted values, each with its description (enumDescriptions), or without. */
  enum?: Readonly<Record<string, string>> | readonly string[];
  minimum?: number;
  maximum?: number;
  description: string;
  /**
   * Workspace Trust: true for a setting that starts a program, names a server, holds a token or points outside the
   * workspace. It is then machine-scoped (a workspace cannot set it) and listed in restrictedConfigurations.
   */
  restricted: boolean;
  /** A change restarts the backend (the setting travels as an environment variable, read once at its start). */
  restart: boolean;
  /** The backend variable it becomes (declared in backend/settings/settings.ts); none: only the extension reads it. */
  env?: `KIMINA_${string}`;
}

/**
 * Every kimina.* setting, by its key under `kimina.`, in the order the settings editor shows them. A value travels to
 * the backend unless it is empty (''): numbers as digits, booleans as 1 or 0.
 */
export const settingsTable = {
  engine: {
    type: 'string',
    enum: engineKindDescriptions,
    default: 'auto',
    description:
      'Where the model runs. auto: chosen per machine by a short calibration (shown in the status bar and `kimina model list`); the others override it.',
    restricted: true,
    restart: true,
    env: 'KIMINA_ENGINE',
  },
  model: {
    type: 'string',
    default: '',
    description:
      'Model: a Hugging Face id pulled with "Kimina: Pull Model", or a local folder. Empty: the backend default (AI-MO/Kimina-Prover-RL-0.6B).',
    restricted: true,
    restart: true,
    env: 'KIMINA_MODEL',
  },
  openaiBaseUrl: {
    type: 'string',
    default: '',
    description:
      'Base URL of the OpenAI-compatible server when kimina.engine is openai, e.g. http://127.0.0.1:8000/v1.',
    restricted: true,
    restart: true,
    env: 'KIMINA_OPENAI_BASE_URL',
  },
  serverUrl: {
    type: 'string',
    default: '',
    description:
      'URL of a running `kimina serve` to attach to (training outlives a window). Empty: use the discovery file if a server runs, else prove in the editor backend.',
    restricted: true,
    restart: true,
    env: 'KIMINA_SERVER_URL',
  },
  serverToken: {
    type: 'string',
    default: '',
    description: 'API token of that server (sent as Authorization: Bearer).',
    restricted: true,
    restart: true,
    env: 'KIMINA_API_TOKEN',
  },
  budget: {
    type: 'string',
    enum: {
      custom: 'Answers up to kimina.maxTokens tokens, kimina.samples samples, kimina.fixTurns fix turns',
      quick: 'One answer of up to 4,096 tokens, no fix turn: the fastest try (minutes on a laptop CPU)',
      thorough: "The recipe's budget: 8 samples of up to 24,576 tokens and one fix turn (best with a GPU)",
    },
    default: 'custom',
    description: 'How much time a proof may take: a preset, or custom limits. Also chosen in the Proof view.',
    restricted: false,
    restart: false,
  },
  maxTokens: {
    type: 'integer',
    default: 24576,
    minimum: 256,
    maximum: 131072,
    description: "Tokens one answer may use when kimina.budget is custom (the model's context may cut it shorter).",
    restricted: false,
    restart: false,
  },
  samples: {
    type: 'integer',
    default: 4,
    minimum: 1,
    maximum: 64,
    description: 'Answers sampled per proof (pass@k).',
    restricted: false,
    restart: false,
  },
  fixTurns: {
    type: 'integer',
    default: 1,
    minimum: 0,
    maximum: 3,
    description: "Error-fix turns after a failed attempt (Lean's errors are fed back).",
    restricted: false,
    restart: false,
  },
  'timeouts.check': {
    type: 'number',
    default: 60,
    minimum: 1,
    description: 'Seconds Lean may spend checking one candidate.',
    restricted: false,
    restart: true,
    env: 'KIMINA_TIMEOUT',
  },
  'timeouts.prove': {
    type: 'number',
    default: 900,
    minimum: 10,
    description: 'Seconds one proof may take in all.',
    restricted: false,
    restart: true,
    env: 'KIMINA_PROVE_TIMEOUT',
  },
  leanProject: {
    type: 'string',
    default: '',
    description: 'Lean project folder whose toolchain and Mathlib check the proofs. Empty: the first workspace folder.',
    restricted: true,
    restart: true,
    env: 'KIMINA_LEAN_PROJECT',
  },
  replCommand: {
    type: 'string',
    default: '',
    description: 'Command that starts a Lean REPL (default: `lake env <repl>` in the Lean project).',
    restricted: true,
    restart: true,
    env: 'KIMINA_REPL_COMMAND',
  },
  device: {
    type: 'string',
    enum: ['auto', 'cpu', 'cuda'],
    default: 'auto',
    description: 'Device for the ONNX engine.',
    restricted: false,
    restart: true,
    env: 'KIMINA_DEVICE',
  },
  kvCache: {
    type: 'string',
    enum: ['auto', 'fp32', 'fp16'],
    default: 'auto',
    description:
      "Precision of the ONNX engine's KV cache: fp16 halves its memory and slows long answers; auto picks fp16 where a float32 cache of 8 samples × 8,192 tokens would take more than 40% of the memory.",
    restricted: false,
    restart: true,
    env: 'KIMINA_KV_CACHE',
  },
  rowsAtOnce: {
    type: 'integer',
    default: 0,
    minimum: 0,
    maximum: 64,
    description:
      'Samples the in-process engine decodes at once; a proof decodes its samples in waves of this many, lowered (and said so) to the rows whose caches at 24,576-token answers fit half the memory. 0: chosen by the calibration at first run (the least expected time to the first verified proof on this device).',
    restricted: false,
    restart: true,
    env: 'KIMINA_ROWS_AT_ONCE',
  },
  speculation: {
    type: 'boolean',
    default: false,
    description:
      'Speculative decoding by prompt lookup in the ONNX engine: the same proofs (same greedy output, same sampling distribution), about 1.4× faster on an idle machine, slower under load.',
    restricted: false,
    restart: true,
    env: 'KIMINA_SPECULATION',
  },
  llamaGpu: {
    type: 'string',
    enum: ['auto', 'metal', 'cuda', 'vulkan', 'cpu'],
    default: 'auto',
    description:
      'Which llama.cpp backend the llama engine asks for: auto takes Metal, else CUDA, else Vulkan, else the CPU (the first whose build loads).',
    restricted: false,
    restart: true,
    env: 'KIMINA_LLAMA_GPU',
  },
  llamaWeights: {
    type: 'string',
    enum: ['q8_0', 'f16', 'q4_0', 'f32'],
    default: 'q8_0',
    description:
      "Type of the llama engine's weight matrices in the GGUF written from the checkpoint (once per type, kept beside the model).",
    restricted: false,
    restart: true,
    env: 'KIMINA_LLAMA_WEIGHTS',
  },
  vllmIdleMinutes: {
    type: 'number',
    default: 10,
    minimum: 0,
    description:
      'When kimina.engine is vllm: minutes without a request before the vLLM server the backend started is stopped, giving the GPU back (the next request starts it again). 0: it runs until the backend stops.',
    restricted: false,
    restart: true,
    env: 'KIMINA_VLLM_IDLE_MINUTES',
  },
  vllmGpuMemoryUtilization: {
    type: 'number',
    default: 0.85,
    minimum: 0.05,
    maximum: 1,
    description: "When kimina.engine is vllm: the share of the GPU's memory vLLM takes (its --gpu-memory-utilization).",
    restricted: false,
    restart: true,
    env: 'KIMINA_VLLM_GPU_MEMORY_UTILIZATION',
  },
  nodePath: {
    type: 'string',
    default: '',
    description:
      "Node.js (20 or newer) that runs the backend. Empty: VS Code's own runtime (its Electron run as Node; the packaged native modules are N-API).",
    restricted: true,
    restart: true,
  },
  showDiffOnProof: {
    type: 'boolean',
    default: true,
    description: 'Open a diff of the verified proof against the file as soon as it is found.',
    restricted: false,
    restart: false,
  },
  trainingModel: {
    type: 'string',
    default: '',
    description:
      "The model the Training Monitor's form starts with: a Hugging Face id or a local checkpoint folder. Empty: the form's default.",
    restricted: true,
    restart: false,
  },
} as const satisfies Record<string, Row>;

type Table = typeof settingsTable;
export type SettingKey = keyof Table;
type ValueOf<R> = R extends { enum: infer E }
  ? E extends readonly string[]
    ? E[number]
    : keyof E & string
  : R extends { type: 'boolean' }
    ? boolean
    : R extends { type: 'string' }
      ? string
      : number;

/** The value of every kimina.* setting, keyed as in package.json under `kimina.`. */
export type KiminaSettings = { -readonly [K in SettingKey]: ValueOf<Table[K]> };

export const settingKeys = Object.keys(settingsTable) as SettingKey[];
const rows = settingsTable as Record<SettingKey, Row>;

/** The default of each setting. */
export function settingDefaults(): KiminaSettings {
  return Object.fromEntries(settingKeys.map((k) => [k, rows[k].default])) as KiminaSettings;
}

/** The environment of the backend process: every setting that has a variable and is not empty. */
export function settingsEnv(s: KiminaSettings): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of settingKeys) {
    const name = rows[key].env;
    const value = s[key];
    if (name === undefined || value === '') continue;
    env[name] = typeof value === 'boolean' ? (value ? '1' : '0') : String(value);
  }
  return env;
}

/** A KIMINA_* variable → its `kimina.*` setting (for wording the backend's advice in the editor). */
export const settingOfVariable: Readonly<Record<string, string>> = Object.fromEntries(
  settingKeys.flatMap((k) => (rows[k].env ? [[rows[k].env, `kimina.${k}`]] : [])),
);

/** The settings whose change restarts the backend, as `kimina.*` keys (for affectsConfiguration). */
export const restartingSettings = settingKeys.filter((k) => rows[k].restart).map((k) => `kimina.${k}`);

/** package.json's `contributes.configuration.properties`, made from the table. */
export function manifestProperties(): Record<string, Record<string, unknown>> {
  const out: Record<string, Record<string, unknown>> = {};
  for (const key of settingKeys) {
    const r = rows[key];
    const enumValues = r.enum === undefined ? undefined : Array.isArray(r.enum) ? r.enum : Object.keys(r.enum);
    const enumDescriptions = r.enum === undefined || Array.isArray(r.enum) ? undefined : Object.values(r.enum);
    out[`kimina.${key}`] = {
      ...(r.restricted ? { scope: 'machine' } : {}),
      type: r.type,
      ...(enumValues ? { enum: enumValues } : {}),
      default: r.default,
      ...(enumDescriptions ? { enumDescriptions } : {}),
      ...(r.minimum !== undefined ? { minimum: r.minimum } : {}),
      ...(r.maximum !== undefined ? { maximum: r.maximum } : {}),
      description: r.description,
    };
  }
  return out;
}

/** package.json's `capabilities.untrustedWorkspaces.restrictedConfigurations`, made from the table. */
export function restrictedConfigurations(): string[] {
  return settingKeys.filter((k) => rows[k].restricted).map((k) => `kimina.${k}`);
}
