// Opens the engine and the Lean verifier an evaluation runs on, from the command line's choices
// and the KIMINA_* environment (verifier settings: docs/verifier.md).
import type { Engine } from '../model/engine';
import { createEngine, engineConfigFromEnv } from '../model/index';
import type { LeanVerifier } from '../lean/types';
import { buildVerifier, verifierSettingsFromEnv } from '../lean/settings';

export interface BackendChoice {
  /** onnx (in-process) or openai (a vLLM/SGLang/llama.cpp server). */
  engine: string;
  /** onnx: a model folder or pulled hub id; openai: the name the server knows. */
  model: string;
  /** OpenAI-compatible server root (engine openai). */
  baseUrl?: string;
  log?: (line: string) => void;
}

export interface Backends {
  engine: Engine;
  verifier: LeanVerifier;
  /** Lean checks the verifier takes at once (running + queued) before refusing more. */
  verifierCapacity: number;
  describe: string[];
  close(): Promise<void>;
}

export async function openBackends(choice: BackendChoice): Promise<Backends> {
  const settings = verifierSettingsFromEnv();
  if (choice.engine !== 'onnx' && choice.engine !== 'openai') throw new Error(`--engine must be onnx or openai, got '${choice.engine}'`);
  const base = engineConfigFromEnv();
  const engine: Engine = await createEngine(
    { ...base, engine: choice.engine, model: choice.model, baseUrl: choice.baseUrl ?? base.baseUrl },
    { log: choice.log },
  );
  let built;
  try { built = buildVerifier(settings); } catch (err) { await engine.close(); throw err; }
  return {
    engine,
    verifier: built.verifier,
    verifierCapacity: settings.maxRepls + settings.maxQueue,
    describe: [`engine: ${engine.name} (${engine.model})`, `Lean: ${built.describe}`],
    close: async () => { await Promise.allSettled([engine.close(), built.verifier.close()]); },
  };
}
