// The engines' part of the backend settings (EngineConfig) and what every engine loader is handed
// (CreateEngineOptions): apart from the factory (index.ts), so the loaders and the chooser import them without
// an import circle.
import type { Settings } from '../settings/settings';

/**
 * The settings the engines read, under their own names (backend/settings/settings.ts, docs/settings.md): `engine`;
 * `model` (onnx: a model folder or a pulled hub id, default DEFAULT_MODEL; openai: the model name the server knows,
 * a hub id for vLLM, or a folder that then only lends its tokenizer for token counts; undefined: the server's only
 * model); openai: `openaiBaseUrl`, `openaiApiKey`, `openaiN` (send `n`, or one request per sample; 'auto' finds
 * out); onnx: `device` (CUDA falls back to the CPU with a log line), `threads` (default every core), `kvCache`
 * (see chooseKvCache), `speculation` (DEFAULT_SPECULATION's drafts when on), `spinning` (onnxruntime's threads
 * spin between operators), `rowsAtOnce` (samples decoded at once; 0: from the calibration); vllm: `vllmIdleMinutes`,
 * `vllmGpuMemoryUtilization`, and the trainer environment's Python it runs (`trainerPython`, else `trainerVenv`'s).
 */
const engineKeys = [
  'engine',
  'model',
  'openaiBaseUrl',
  'openaiApiKey',
  'openaiN',
  'device',
  'threads',
  'kvCache',
  'speculation',
  'spinning',
  'llamaGpu',
  'llamaWeights',
  'rowsAtOnce',
  'vllmIdleMinutes',
  'vllmGpuMemoryUtilization',
  'trainerPython',
  'trainerVenv',
] as const;
export type EngineConfig = Pick<Settings, (typeof engineKeys)[number]>;

/** The engine's part of the backend settings, picked (not renamed). */
export function engineConfigOf(s: EngineConfig): EngineConfig {
  return Object.fromEntries(engineKeys.map((k) => [k, s[k]])) as EngineConfig;
}

export interface CreateEngineOptions {
  /** KIMINA_HOME, whose models/ folder holds pulled hub ids (the setting, handed down). */
  home: string;
  log?: (line: string) => void;
  /** The environment child processes start from (Settings.childEnv): the llama engine installs its runtime with it. */
  childEnv?: NodeJS.ProcessEnv;
  /** Cancels a load in progress (auto's llama.cpp setup in the background: npm, the GGUF write). */
  signal?: AbortSignal;
}
