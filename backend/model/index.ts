// The engine factory: one place that turns settings (KIMINA_ENGINE, KIMINA_MODEL, KIMINA_OPENAI_*,
// KIMINA_DEVICE, KIMINA_THREADS) into a ready Engine, in-process ONNX or an OpenAI-compatible server.
import type { Engine } from './engine';
import { OpenAIEngine } from './openai/engine';
import { DEFAULT_MODEL, findTokenizerDir, isFolderSpec, resolveModelDir } from './store';

export type EngineKind = 'onnx' | 'openai';

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
}

export const DEFAULT_OPENAI_BASE_URL = 'http://127.0.0.1:8000/v1';

function pick<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined || value === '') return fallback;
  if (!(allowed as readonly string[]).includes(value)) throw new Error(`${name} must be one of ${allowed.join(', ')}, got '${value}'`);
  return value as T;
}

/** Reads the engine settings from the environment (the extension passes its settings this way). */
export function engineConfigFromEnv(env: NodeJS.ProcessEnv = process.env): EngineConfig {
  const threadsRaw = env.KIMINA_THREADS;
  let threads: number | undefined;
  if (threadsRaw !== undefined && threadsRaw !== '') {
    threads = Number(threadsRaw);
    if (!Number.isInteger(threads) || threads < 1) throw new Error(`KIMINA_THREADS must be a positive whole number, got '${threadsRaw}'`);
  }
  return {
    engine: pick('KIMINA_ENGINE', env.KIMINA_ENGINE, ['onnx', 'openai'] as const, 'onnx'),
    model: env.KIMINA_MODEL || undefined,
    baseUrl: env.KIMINA_OPENAI_BASE_URL || DEFAULT_OPENAI_BASE_URL,
    apiKey: env.KIMINA_OPENAI_API_KEY || undefined,
    nMode: pick('KIMINA_OPENAI_N', env.KIMINA_OPENAI_N, ['auto', 'native', 'parallel'] as const, 'auto'),
    device: pick('KIMINA_DEVICE', env.KIMINA_DEVICE === 'auto' ? '' : env.KIMINA_DEVICE, ['cpu', 'cuda'] as const, 'cpu'),
    threads,
  };
}

export interface CreateEngineOptions { log?: (line: string) => void }

/**
 * Builds the configured engine. onnx: resolves the model folder (a path, or a hub id pulled into the
 * store) and loads it; when none is available the error says to run `kimina model pull …`.
 * openai: connects to the server (checking it is up and serves the model).
 */
export async function createEngine(config: EngineConfig = engineConfigFromEnv(), options: CreateEngineOptions = {}): Promise<Engine> {
  if (config.engine === 'openai') {
    const spec = config.model;
    const folder = spec !== undefined && isFolderSpec(spec);
    return OpenAIEngine.connect({
      baseUrl: config.baseUrl,
      model: folder ? undefined : spec,
      apiKey: config.apiKey,
      nMode: config.nMode,
      tokenizerDir: findTokenizerDir(spec ?? DEFAULT_MODEL),
      log: options.log,
    });
  }
  const modelDir = resolveModelDir(config.model ?? DEFAULT_MODEL);
  const { OnnxEngine } = await import('./onnx/engine');
  return OnnxEngine.load(modelDir, { device: config.device, threads: config.threads, log: options.log });
}
