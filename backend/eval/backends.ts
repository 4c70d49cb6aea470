// Opens the engine and the Lean verifier an evaluation runs on, from the command line's choices
// and the KIMINA_* environment (verifier settings: docs/verifier.md).
import type { Engine } from '../model/engine';
import { OpenAIEngine } from '../model/openai/engine';
import type { LeanVerifier } from '../lean/types';
import { buildVerifier, verifierSettingsFromEnv } from '../lean/settings';

export interface BackendChoice {
  engine: string;
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
  let engine: Engine;
  if (choice.engine === 'openai') {
    const baseUrl = choice.baseUrl ?? process.env.KIMINA_OPENAI_BASE_URL;
    if (!baseUrl) throw new Error('--engine openai needs --base-url (or KIMINA_OPENAI_BASE_URL), e.g. http://127.0.0.1:8000/v1');
    engine = await OpenAIEngine.connect({ baseUrl, model: choice.model, log: choice.log });
  } else {
    throw new Error(`engine '${choice.engine}' is not available to kimina eval in this build; use --engine openai with a vLLM/SGLang server`);
  }
  const built = buildVerifier(settings);
  return {
    engine,
    verifier: built.verifier,
    verifierCapacity: settings.maxRepls + settings.maxQueue,
    describe: [`engine: ${engine.name} (${engine.model})`, `Lean: ${built.describe}`],
    close: async () => { await Promise.allSettled([engine.close(), built.verifier.close()]); },
  };
}
