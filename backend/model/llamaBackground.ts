// kimina.engine = auto's first start where llama.cpp is a candidate but not yet compared (a GPU here, or
// node-llama-cpp installed): the onnx engine loads and answers at once, and llama.cpp is set up and compared in
// the background — node-llama-cpp installed (its GPU build, up to ~540 MB for CUDA), the GGUF written (in a worker
// thread), each engine's cost model calibrated (llama.cpp's between requests, so a decode in flight neither slows
// it nor is slowed) — and the choice stored. If llama.cpp wins, the next generate call runs on it; if it fails,
// the onnx engine stays, the log says why, and the failure is stored with what it depended on (llamaRetry.ts).
import type { Engine } from './engine';
import {
  choose,
  estimateOf,
  machineKey,
  soleChoice,
  storeChoice,
  type EngineEstimate,
  type InProcessKind,
} from './engineChoice';
import type { CreateEngineOptions, EngineConfig } from './engineConfig';
import { RETRY_AFTER_DAYS, type LlamaDepends } from './llamaRetry';
import { SwitchingEngine } from './switchingEngine';

/** What the background loads engines with and reads of the machine (autoEngine.ts's AutoDeps; tests pass doubles). */
export interface BackgroundDeps {
  load: Record<InProcessKind, (config: EngineConfig, options: CreateEngineOptions) => Promise<Engine>>;
  /** What a llama.cpp failure depends on here now (llamaRetry.ts): it is tried again when this changes. */
  llamaDepends(config: EngineConfig, options: CreateEngineOptions, modelDir: string): Promise<LlamaDepends>;
}

export interface BackgroundSetup {
  config: EngineConfig;
  /** How the engines load (childEnv given: node-llama-cpp may be installed). */
  options: CreateEngineOptions;
  modelDir: string;
  /** Why llama.cpp is a candidate, in words. */
  why: string;
  deps: BackgroundDeps;
  log: (line: string) => void;
}

/** The onnx engine now, answering while llama.cpp is set up and compared in the background. */
export async function onnxNowLlamaLater(setup: BackgroundSetup): Promise<SwitchingEngine> {
  const { config, options, deps, log, why } = setup;
  log(`engine auto: the onnx engine answers now; llama.cpp (${why}) is set up and compared with it in the background`);
  const onnx = await deps.load.onnx(config, options);
  const engine = new SwitchingEngine(
    onnx,
    soleChoice('onnx', 'onnx', `llama.cpp (${why}) is set up and compared in the background`),
  );
  engine.background = compareInBackground(engine, onnx, setup);
  return engine;
}

/** The background work: never rejects; what ends it (a choice, a failure, a cancel) is logged. */
async function compareInBackground(engine: SwitchingEngine, onnx: Engine, setup: BackgroundSetup): Promise<void> {
  const { config, modelDir, deps, log } = setup;
  const signal = engine.signal;
  const key = machineKey(config);
  let llama: Engine | undefined;
  try {
    engine.setStage('installing llama.cpp and writing its GGUF where missing');
    log('engine auto: setting up llama.cpp in the background (node-llama-cpp, the GGUF)');
    let loadFailure: string | undefined;
    try {
      llama = await deps.load.llama(config, { ...setup.options, signal });
    } catch (err) {
      loadFailure = `did not load (${(err as Error).message})`;
    }
    if (signal.aborted) return;
    // Both are timed between requests: a decode in flight would slow the probe and be slowed by it.
    engine.setStage('calibrating the engines between requests');
    await engine.whenIdle();
    if (signal.aborted) return;
    const onnxEstimate = await estimateOf('onnx', onnx);
    let llamaEstimate: EngineEstimate = { engine: 'llama', label: 'llama', none: loadFailure ?? 'did not load' };
    if (llama) {
      try {
        llamaEstimate = await estimateOf('llama', llama);
      } catch (err) {
        llamaEstimate = { engine: 'llama', label: 'llama', none: `did not calibrate (${(err as Error).message})` };
      }
    }
    if (signal.aborted) return;
    const choice = choose([onnxEstimate, llamaEstimate]);
    if (llamaEstimate.none) {
      const failure = {
        why: llamaEstimate.none,
        at: choice.at,
        depends: await deps.llamaDepends(config, setup.options, modelDir),
      };
      choice.llamaFailure = failure;
      log(
        `engine auto: llama.cpp ${llamaEstimate.none}; the onnx engine stays (llama.cpp is tried again when node-llama-cpp, the GPU or the GGUF changes, or after ${RETRY_AFTER_DAYS} days; \`kimina model calibrate\` tries it now)`,
      );
    }
    storeChoice(modelDir, key, choice);
    if (choice.engine === 'llama' && llama) {
      engine.switchTo(llama, choice);
      llama = undefined; // the engine's now
      log(`${choice.words} (compared in the background: the next request runs on llama.cpp)`);
    } else {
      engine.settle(choice);
      log(`${choice.words} (compared in the background)`);
    }
  } catch (err) {
    // Not llama.cpp's failure (the onnx calibration, the store): the onnx engine stays, unstored.
    if (!signal.aborted) {
      const why = `the comparison in the background failed (${(err as Error).message})`;
      log(`engine auto: ${why}; the onnx engine stays`);
      engine.settle(soleChoice('onnx', 'onnx', why));
    }
  } finally {
    if (signal.aborted) log('engine auto: the background setup of llama.cpp was cancelled (the engine closed)');
    await llama?.close().catch(() => undefined);
  }
}
