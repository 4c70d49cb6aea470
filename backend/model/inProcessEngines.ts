// The in-process engines' loaders, without fallbacks: the onnx engine on a model folder, the llama engine on its
// checkpoint (node-llama-cpp installed first where options.childEnv is given). The factory (index.ts) and the
// chooser (autoEngine.ts) load through them.
import type { Engine } from './engine';
import type { CreateEngineOptions, EngineConfig } from './engineConfig';
import { DEFAULT_MODEL, locateModel, resolveModelDir } from './modelStore';

/** The onnx engine on the model folder (a path, or a hub id pulled into the store); the error says to pull one. */
export async function loadOnnxEngine(config: EngineConfig, options: CreateEngineOptions): Promise<Engine> {
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
}

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
    signal: options.signal,
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
    signal: options.signal,
  });
}
