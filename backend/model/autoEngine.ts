// kimina.engine = auto, the default: which in-process engine runs on this machine (engineChoice.ts chooses).
// A first run stays light: llama.cpp is a candidate only where node-llama-cpp is already installed in the Kimina
// home or a GPU it can use is there (an NVIDIA driver, Apple silicon's Metal); otherwise the onnx engine runs and
// nothing is installed. With both candidates and no stored choice, the onnx engine answers at once and llama.cpp
// is set up and compared in the background (llamaBackground.ts); the choice is stored beside the model and later
// starts load it only. A llama.cpp that failed is tried again when what it depended on changed, or after a week
// (llamaRetry.ts). `kimina model calibrate` compares them on request.
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
import { onnxNowLlamaLater, type BackgroundDeps } from './llamaBackground';
import { llamaDependsHere, retryWhy } from './llamaRetry';
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
export interface AutoDeps extends BackgroundDeps {
  llamaCandidacy(config: EngineConfig, options: CreateEngineOptions, modelDir: string): Promise<LlamaCandidacy>;
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
  llamaDepends: (config, options, modelDir) => llamaDependsHere(config, options.home, modelDir, options.childEnv),
};

/** The failure of llama.cpp among a choice's estimates, with what it depended on; undefined where it ran. */
async function llamaFailureOf(
  choice: EngineChoice,
  config: EngineConfig,
  options: CreateEngineOptions,
  modelDir: string,
  deps: AutoDeps,
): Promise<EngineChoice['llamaFailure']> {
  const none = choice.estimates.find((e) => e.engine === 'llama')?.none;
  return none ? { why: none, at: choice.at, depends: await deps.llamaDepends(config, options, modelDir) } : undefined;
}

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
  const failure = await llamaFailureOf(compared.choice, config, options, modelDir, deps);
  if (failure) compared.choice.llamaFailure = failure;
  storeChoice(modelDir, machineKey(config), compared.choice);
  return compared;
}

/**
 * The engine kimina.engine = auto runs: the stored choice, else the only candidate, else the onnx engine at once
 * with llama.cpp set up and compared in the background (the winner answering from then on).
 */
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
  const key = machineKey(config);
  const stored = readChoice(modelDir, key);
  // A stored choice holds while the candidates are those it compared (llama.cpp installed since: compare again),
  // and a failure of llama.cpp while nothing it depended on changed, for a week.
  const comparedLlama = stored?.estimates.some((e) => e.engine === 'llama') ?? false;
  const failed = llama.candidate ? stored?.llamaFailure : undefined;
  const retry = failed && retryWhy(failed, await deps.llamaDepends(config, options, modelDir));
  if (failed && retry)
    log(`engine auto: trying llama.cpp again in the background (it ${failed.why} on ${failed.at}): ${retry}`);
  if (stored && !retry && (llama.candidate ? comparedLlama : stored.engine === 'onnx')) {
    log(`${stored.words} (chosen ${stored.at}; \`kimina model calibrate\` compares again)`);
    try {
      return new ChosenEngine(await deps.load[stored.engine](config, loading), stored);
    } catch (err) {
      if (stored.engine === 'onnx') throw err;
      const why = `llama.cpp was chosen on ${stored.at} but did not load (${(err as Error).message})`;
      log(`engine auto: ${why}; the onnx engine instead`);
      const choice = soleChoice('onnx', 'onnx', why);
      // Stored as a failure: the next start runs onnx too, and tries llama.cpp again as any failure's.
      const at = choice.at;
      choice.estimates = [{ engine: 'llama', label: stored.label, none: `did not load (${(err as Error).message})` }];
      choice.llamaFailure = {
        why: choice.estimates[0].none!,
        at,
        depends: await deps.llamaDepends(config, options, modelDir),
      };
      storeChoice(modelDir, key, choice);
      return new ChosenEngine(await deps.load.onnx(config, loading), choice);
    }
  }
  if (!llama.candidate) {
    const choice = soleChoice('onnx', 'onnx', llama.why);
    log(choice.words);
    return new ChosenEngine(await deps.load.onnx(config, loading), choice);
  }
  return onnxNowLlamaLater({ config, options: loading, modelDir, why: llama.why, deps, log });
}
