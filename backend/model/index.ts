// The engine factory: one place that turns settings (KIMINA_ENGINE, KIMINA_MODEL, KIMINA_OPENAI_*,
// KIMINA_DEVICE, KIMINA_THREADS, KIMINA_KV_CACHE, KIMINA_SPECULATION, KIMINA_SPINNING, KIMINA_ROWS_AT_ONCE,
// KIMINA_LLAMA_*, KIMINA_VLLM_*) into a ready Engine: in-process ONNX, an OpenAI-compatible server, in-process
// llama.cpp, a vLLM server the backend starts itself, or
// (auto, the default) the in-process one chosen for this machine (autoEngine.ts).
import { DEFAULT_OPENAI_BASE_URL, type engineKinds } from '../settings/settings';
import type { CreateEngineOptions, EngineConfig } from './engineConfig';
import { loadLlamaEngine, loadOnnxEngine } from './inProcessEngines';
import type { Engine } from './engine';
import { OpenAIEngine } from './openai/engine';
import { DEFAULT_MODEL, findTokenizerDir, isFolderSpec } from './modelStore';

/** The engine kinds (settings.ts engineKinds, which KIMINA_ENGINE is checked against). */
export type EngineKind = (typeof engineKinds)[number];

export { DEFAULT_OPENAI_BASE_URL };

export { engineConfigOf, type CreateEngineOptions, type EngineConfig } from './engineConfig';

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
  onnx: loadOnnxEngine,
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
  // A vLLM server the backend starts on the first request and stops when idle (vllm/load.ts refuses, saying why,
  // without an NVIDIA GPU or without vllm in the trainer environment).
  vllm: async (config, options) => {
    const { loadVllmEngine } = await import('./vllm/load');
    return loadVllmEngine(config, options);
  },
  // Chosen per machine between onnx and llama by their calibrated cost models (autoEngine.ts).
  auto: async (config, options) => {
    const { autoEngine } = await import('./autoEngine');
    return autoEngine(config, options);
  },
};
