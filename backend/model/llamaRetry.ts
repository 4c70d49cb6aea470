// When kimina.engine = auto tries llama.cpp again after it failed (to install, load or calibrate): the failure is
// stored with the choice (engine-choice.json) together with what it depended on — the node-llama-cpp installed
// in the Kimina home, the GPU seen, the GGUF beside the model — and llama.cpp is tried again (in the background)
// when one of those changed, or RETRY_AFTER_DAYS after the failure; `kimina model calibrate` tries it at once.
import { statSync } from 'node:fs';
import type { EngineConfig } from './engineConfig';

/** What a llama.cpp failure depended on, in words ('none' where there is nothing). */
export interface LlamaDepends {
  /** node-llama-cpp's version and the binary packages installed with it, or 'none'. */
  nodeLlamaCpp: string;
  /** The GPU llama.cpp could use here (runtime.ts llamaGpuHere), or 'none'. */
  gpu: string;
  /** The GGUF's path and modification time, or 'none'. */
  gguf: string;
}

export interface LlamaFailure {
  why: string;
  /** When it failed (ISO time). */
  at: string;
  depends: LlamaDepends;
}

/** A failure older than this is tried again even when nothing it depended on changed (a network now up, say). */
export const RETRY_AFTER_DAYS = 7;

const WORDS: Record<keyof LlamaDepends, string> = {
  nodeLlamaCpp: 'node-llama-cpp installed',
  gpu: 'the GPU seen',
  gguf: 'the GGUF',
};

/** Why llama.cpp is tried again now, in words, or undefined while the failure holds. */
export function retryWhy(failure: LlamaFailure, now: LlamaDepends, nowMs = Date.now()): string | undefined {
  const changed = (Object.keys(WORDS) as (keyof LlamaDepends)[])
    .filter((k) => failure.depends[k] !== now[k])
    .map((k) => `${WORDS[k]} is now ${now[k]} (was ${failure.depends[k]})`);
  if (changed.length) return changed.join('; ');
  const days = (nowMs - Date.parse(failure.at)) / 86_400_000;
  return days >= RETRY_AFTER_DAYS ? `${Math.floor(days)} days since it failed` : undefined;
}

/** What llama.cpp depends on here now: the installed node-llama-cpp, the GPU, the model folder's GGUF. */
export async function llamaDependsHere(
  config: EngineConfig,
  home: string,
  modelDir: string,
  env: NodeJS.ProcessEnv | undefined,
): Promise<LlamaDepends> {
  const { installedRuntimeWords, llamaGpuHere, runtimeDirOf } = await import('./llama/runtime');
  const { ggufPathOf } = await import('./llama/ggufConvert');
  const gguf = ggufPathOf(modelDir, config.llamaWeights ?? 'q8_0');
  const mtime = statSync(gguf, { throwIfNoEntry: false })?.mtime;
  return {
    nodeLlamaCpp: installedRuntimeWords(runtimeDirOf(home)) ?? 'none',
    gpu: (config.llamaGpu === 'cpu' ? undefined : llamaGpuHere(env)) ?? 'none',
    gguf: mtime ? `${gguf} of ${mtime.toISOString()}` : 'none',
  };
}
