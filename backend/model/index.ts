// The engine factory: one place that turns settings (KIMINA_ENGINE, KIMINA_MODEL, KIMINA_OPENAI_*,
// KIMINA_DEVICE, KIMINA_THREADS, KIMINA_KV_CACHE, KIMINA_SPECULATION, KIMINA_SPINNING, KIMINA_ROWS_AT_ONCE,
// KIMINA_LLAMA_*) into a ready Engine: in-process ONNX, an OpenAI-compatible server or in-process llama.cpp, or
// (auto, the default) the in-process one chosen for this machine (autoEngine.ts).
import { DEFAULT_OPENAI_BASE_URL, type engineKinds, type Settings } from '../settings/settings';
import type { Engine } from './engine';
import { OpenAIEngine } from './openai/engine';
import { DEFAULT_MODEL, findTokenizerDir, isFolderSpec, locateModel, resolveModelDir } from './modelStore';

/** The engine kinds (settings.ts engineKinds, which KIMINA_ENGINE is checked against). */
export type EngineKind = (typeof engineKinds)[number];

export { DEFAULT_OPENAI_BASE_URL };

/**
 * The settings the engines read, under their own names (backend/settings/settings.ts, docs/settings.md): `engine`;
 * `model` (onnx: a model folder or a pulled hub id, default DEFAULT_MODEL; openai: the model name the server knows,
 * a hub id for vLLM, or a folder that then only lends its tokenizer for token counts; undefined: the server's only
 * model); openai: `openaiBaseUrl`, `openaiApiKey`, `openaiN` (send `n`, or one request per sample; 'auto' finds
 * out); onnx: `device` (CUDA falls back to the CPU with a log line), `threads` (default every core), `kvCache`
 * (see chooseKvCache), `speculation` (DEFAULT_SPECULATION's drafts when on), `spinning` (onnxruntime's threads
 * spin between operators), `rowsAtOnce` (samples decoded at once; 0: from the calibration).
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
}

/**
 * Builds the configured engine. onnx: resolves the model folder (a path, or a hub id pulled into the
 * store) and loads it; when none is available the error says to run `kimina model pull …`.
 * openai: connects to the server (checking it is up and serves the model).
 */
export async function createEngine(config: EngineConfig, options: CreateEngineOptions): Promise<Engine> {
  return engineFactories[config.engine](config, options);
}

export type EngineFactory = (config: EngineConfig, options: CreateEngineOptions) => Promise<Engine>;

/** One factory per engine kind, each reading its own fields of EngineConfig (a new kind: an entry here and in engineKinds). */
export const engineFactories: Record<EngineKind, EngineFactory> = {
  openai: async (config, options) => {
    const spec = config.model;
    const folder = spec !== undefined && isFolderSpec(spec);
    return OpenAIEngine.connect({
      baseUrl: config.openaiBaseUrl,
      model: folder ? undefined : spec,
      apiKey: config.openaiApiKey,
      nMode: config.openaiN,
      tokenizerDir: findTokenizerDir(options.home, spec ?? DEFAULT_MODEL),
      log: options.log,
    });
  },
  onnx: async (config, options) => {
    const modelDir = resolveModelDir(options.home, config.model ?? DEFAULT_MODEL);
    const { OnnxEngine, SPECULATION_WHEN_ON } = await import('./onnx/engine');
    return OnnxEngine.load(modelDir, {
      device: config.device,
      threads: config.threads,
      kvCache: config.kvCache,
      spinning: config.spinning,
      rowsAtOnce: config.rowsAtOnce,
      speculation: config.speculation ? SPECULATION_WHEN_ON : false,
      log: options.log,
    });
  },
  // llama.cpp through node-llama-cpp, installed on first use (llama/runtime.ts); where it cannot load or the model
  // folder has no checkpoint to write its GGUF from, the onnx engine runs instead, and the log says why.
  llama: async (config, options) => {
    const log = options.log ?? ((line: string) => console.error(line));
    const { LlamaUnavailable } = await import('./llama/runtime');
    try {
      return await loadLlamaEngine(config, options);
    } catch (e) {
      if (!(e instanceof LlamaUnavailable)) throw e;
      log(`llama: ${e.message}; falling back to the onnx engine`);
      try {
        return await engineFactories.onnx(config, options);
      } catch (fallback) {
        throw new Error(
          `the llama engine is unavailable (${e.message}) and its fallback, the onnx engine, failed too: ${(fallback as Error).message}`,
        );
      }
    }
  },
  // Chosen per machine between onnx and llama by their calibrated cost models (autoEngine.ts).
  auto: async (config, options) => {
    const { autoEngine } = await import('./autoEngine');
    return autoEngine(config, options);
  },
};

/**
 * The llama engine without a fallback: a LlamaUnavailable error says why it cannot run (node-llama-cpp not
 * installable or loadable, no checkpoint in the model folder). Installs node-llama-cpp when options.childEnv is given.
 */
export async function loadLlamaEngine(config: EngineConfig, options: CreateEngineOptions): Promise<Engine> {
  const log = options.log ?? ((line: string) => console.error(line));
  const located = locateModel(options.home, config.model ?? DEFAULT_MODEL);
  if (located.format === 'incomplete') resolveModelDir(options.home, config.model ?? DEFAULT_MODEL); // its error
  const { loadNodeLlamaCpp, runtimeDirOf } = await import('./llama/runtime');
  const { checkpointDir } = await import('./llama/ggufConvert');
  checkpointDir(located.dir); // before installing anything: a folder without a checkpoint cannot use it
  const runtime = await loadNodeLlamaCpp(runtimeDirOf(options.home), {
    gpu: config.llamaGpu !== 'cpu',
    installWith: options.childEnv,
    log,
  });
  const { LlamaEngine } = await import('./llama/engine');
  return LlamaEngine.load(located.dir, {
    runtime,
    gpu: config.llamaGpu,
    weights: config.llamaWeights,
    threads: config.threads,
    speculation: config.speculation ? 8 : false,
    rowsAtOnce: config.rowsAtOnce,
    log,
  });
}
