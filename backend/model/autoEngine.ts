// kimina.engine = auto, the default: which in-process engine runs on this machine (engineChoice.ts chooses).
// A first run stays light: llama.cpp is a candidate only where node-llama-cpp is already installed in the Kimina
// home or a GPU it can use is there (an NVIDIA driver, Apple silicon's Metal); otherwise the onnx engine runs and
// nothing is installed. With both candidates each is calibrated once (stored beside the model) and the choice is
// stored; later starts load the stored choice only. `kimina model calibrate` compares them on request.
import type { Engine } from './engine';
import {
  ChosenEngine,
  compareEngines,
  machineKey,
  readChoice,
  soleChoice,
  storeChoice,
  type Candidate,
  type EngineChoice,
  type InProcessKind,
} from './engineChoice';
import type { CreateEngineOptions, EngineConfig } from './engineConfig';
import { loadLlamaEngine, loadOnnxEngine } from './inProcessEngines';
import { DEFAULT_MODEL, locateModel } from './modelStore';

/** Whether llama.cpp is a candidate here, and why (or why not). */
interface LlamaCandidacy {
  candidate: boolean;
  why: string;
  /** Loading it may install what is missing (a GPU is here); else only what is installed loads. */
  install?: boolean;
}

/** The reason auto gives for onnx where llama.cpp is neither installed nor has a GPU here. */
export const LLAMA_ABSENT = 'llama.cpp not installed; `kimina model calibrate` compares both';

/** What auto reads of the machine and loads engines with (tests pass doubles). */
export interface AutoDeps {
  llamaCandidacy(config: EngineConfig, options: CreateEngineOptions, modelDir: string): Promise<LlamaCandidacy>;
  load: Record<InProcessKind, (config: EngineConfig, options: CreateEngineOptions) => Promise<Engine>>;
}

/** llama.cpp's candidacy: installed, or a GPU it can use (unless KIMINA_LLAMA_GPU=cpu); and a checkpoint to write its GGUF. */
async function llamaCandidacy(
  config: EngineConfig,
  options: CreateEngineOptions,
  modelDir: string,
): Promise<LlamaCandidacy> {
  const { llamaGpuHere, nodeLlamaCppInstalled, runtimeDirOf } = await import('./llama/runtime');
  const installed = nodeLlamaCppInstalled(runtimeDirOf(options.home));
  const gpu = config.llamaGpu === 'cpu' ? undefined : llamaGpuHere(options.childEnv);
  if (!installed && !gpu) return { candidate: false, why: LLAMA_ABSENT };
  const { checkpointDir } = await import('./llama/ggufConvert');
  try {
    checkpointDir(modelDir);
  } catch {
    return { candidate: false, why: "the model folder has no safetensors checkpoint to write llama.cpp's GGUF from" };
  }
  return { candidate: true, why: installed ? 'node-llama-cpp is installed' : `${gpu} is here`, install: Boolean(gpu) };
}

export const realAutoDeps: AutoDeps = {
  llamaCandidacy,
  load: { onnx: loadOnnxEngine, llama: loadLlamaEngine },
};

/** The candidates' comparison, stored for this machine; `withLlama` makes llama.cpp a candidate (installing it). */
export async function compareAndStore(
  config: EngineConfig,
  options: CreateEngineOptions,
  modelDir: string,
  candidates: InProcessKind[],
  deps: AutoDeps = realAutoDeps,
  /** Said after the choice's words (why a candidate is missing). */
  aside?: string,
): Promise<{ choice: EngineChoice; engine: Engine }> {
  const log = options.log ?? ((line: string) => console.error(line));
  const compared = await compareEngines(
    candidates.map((kind): Candidate => ({ kind, load: () => deps.load[kind](config, options) })),
    log,
  );
  if (aside) compared.choice.words += `; ${aside}`;
  storeChoice(modelDir, machineKey(config), compared.choice);
  return compared;
}

/** The engine kimina.engine = auto runs: the stored choice, else the only candidate, else the comparison's winner. */
export async function autoEngine(
  config: EngineConfig,
  options: CreateEngineOptions,
  deps: AutoDeps = realAutoDeps,
): Promise<Engine> {
  const log = options.log ?? ((line: string) => console.error(line));
  const modelDir = locateModel(options.home, config.model ?? DEFAULT_MODEL).dir;
  const llama = await deps.llamaCandidacy(config, options, modelDir);
  // Without a GPU here llama.cpp runs as installed: nothing more (its GPU builds) is installed unasked.
  const loading = llama.install ? options : { ...options, childEnv: undefined };
  const stored = readChoice(modelDir, machineKey(config));
  // A stored choice holds while the candidates are those it compared (llama.cpp installed since: compare again).
  const comparedLlama = stored?.estimates.some((e) => e.engine === 'llama') ?? false;
  if (stored && (llama.candidate ? comparedLlama : stored.engine === 'onnx')) {
    log(`${stored.words} (chosen ${stored.at}; \`kimina model calibrate\` compares again)`);
    try {
      return new ChosenEngine(await deps.load[stored.engine](config, loading), stored);
    } catch (err) {
      if (stored.engine === 'onnx') throw err;
      const why = `llama.cpp was chosen on ${stored.at} but did not load (${(err as Error).message})`;
      log(`engine auto: ${why}; the onnx engine instead`);
      return new ChosenEngine(await deps.load.onnx(config, loading), soleChoice('onnx', 'onnx', why));
    }
  }
  if (!llama.candidate) {
    const choice = soleChoice('onnx', 'onnx', llama.why);
    log(choice.words);
    return new ChosenEngine(await deps.load.onnx(config, loading), choice);
  }
  log(`engine auto: comparing onnx and llama.cpp (${llama.why}) by a short calibration of each, once on this machine`);
  const { choice, engine } = await compareAndStore(config, loading, modelDir, ['onnx', 'llama'], deps);
  log(choice.words);
  return new ChosenEngine(engine, choice);
}
