// The engine factory: one place that turns settings (KIMINA_ENGINE, KIMINA_MODEL, KIMINA_OPENAI_*,
// KIMINA_DEVICE, KIMINA_THREADS, KIMINA_KV_CACHE, KIMINA_SPECULATION, KIMINA_SPINNING) into a ready Engine, in-process ONNX or an OpenAI-compatible server.
import { DEFAULT_OPENAI_BASE_URL, engineKinds, type Settings } from '../settings/settings';
import type { Engine } from './engine';
import type { KvCacheSetting } from './onnx/kvPrecision';
import { OpenAIEngine } from './openai/engine';
import { DEFAULT_MODEL, findTokenizerDir, isFolderSpec, resolveModelDir } from './modelStore';

/** The engine kinds (settings.ts engineKinds, which KIMINA_ENGINE is checked against). */
export type EngineKind = (typeof engineKinds)[number];

export interface EngineConfig {
  engine: EngineKind;
  /**
   * onnx: a model folder or a pulled hub id (default DEFAULT_MODEL).
   * openai: the model name the server knows (a hub id for vLLM); a folder path is allowed and then only
   * lends its tokenizer for token counts. Undefined: the server's only model.
   */
  model?: string;
  /** OpenAI API root, e.g. http://127.0.0.1:8000/v1. */
  baseUrl: string;
  apiKey?: string;
  /** openai: send `n`, or one request per sample ('auto' finds out). */
  nMode: 'auto' | 'native' | 'parallel';
  /** onnx: where to run. CUDA falls back to the CPU (with a log line) when unavailable. */
  device: 'cpu' | 'cuda';
  /** onnx: CPU threads; default every core. */
  threads?: number;
  /** onnx: KV cache precision ('auto': see chooseKvCache). */
  kvCache: KvCacheSetting;
  /** onnx: speculative decoding by prompt lookup (DEFAULT_SPECULATION's drafts when on). */
  speculation: boolean;
  /** onnx: onnxruntime's threads spin between operators. */
  spinning: boolean;
}

export { DEFAULT_OPENAI_BASE_URL };

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
] as const;
export type EngineSettings = Pick<Settings, (typeof engineKeys)[number]>;

/** The engine's part of the backend settings (backend/settings/settings.ts). */
export function engineConfigOf(s: EngineSettings): EngineConfig {
  return {
    engine: s.engine,
    model: s.model,
    baseUrl: s.openaiBaseUrl,
    apiKey: s.openaiApiKey,
    nMode: s.openaiN,
    device: s.device,
    threads: s.threads,
    kvCache: s.kvCache,
    speculation: s.speculation,
    spinning: s.spinning,
  };
}

export interface CreateEngineOptions {
  /** KIMINA_HOME, whose models/ folder holds pulled hub ids (the setting, handed down). */
  home: string;
  log?: (line: string) => void;
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
      baseUrl: config.baseUrl,
      model: folder ? undefined : spec,
      apiKey: config.apiKey,
      nMode: config.nMode,
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
      speculation: config.speculation ? SPECULATION_WHEN_ON : false,
      log: options.log,
    });
  },
};
