// kimina.engine = vllm, loaded: refused, saying why and what to do, where vLLM cannot run (no NVIDIA GPU on Linux,
// no vllm in the trainer environment's Python, no Hugging Face checkpoint in the model folder); otherwise the
// engine, whose server starts on the first request (engine.ts). Nothing starts on the GPU while loading.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Engine } from '../engine';
import type { CreateEngineOptions, EngineConfig } from '../engineConfig';
import { CHECKPOINT_SUBDIR, DEFAULT_MODEL, findTokenizerDir, locateModel, resolveModelDir } from '../modelStore';
import { VllmEngine } from './engine';

/** vLLM cannot run here: the message says why and what to do. */
class VllmUnavailable extends Error {}

/**
 * --max-model-len: the recipe's context, prompts of up to 8192 tokens (the fix turn's limit, prover/fixTurn.ts)
 * plus answers of up to 24,576 (prover/request.ts), so every answer the recipe allows fits.
 */
export const VLLM_MAX_MODEL_LEN = 32768;

/** --seed: fixed, so a restarted server samples as the one before it did (requests send their own seeds too). */
const VLLM_SEED = 0;

/** The trainer environment's Python, as training/paths.ts trainerPython says (the model room cannot import it). */
function vllmPython(c: Pick<EngineConfig, 'trainerPython' | 'trainerVenv'>): string {
  return c.trainerPython ?? join(c.trainerVenv, 'bin', 'python');
}

/** The NVIDIA GPU nvidia-smi lists first (`GPU 0: NVIDIA H100 80GB HBM3`), or why there is none. */
function nvidiaGpu(env: NodeJS.ProcessEnv | undefined): { gpu?: string; none?: string } {
  if (process.platform !== 'linux') return { none: `vLLM runs on Linux, this is ${process.platform}` };
  const r = spawnSync('nvidia-smi', ['-L'], { env, timeout: 10_000, encoding: 'utf8' });
  if (r.error)
    return {
      none: `nvidia-smi ${(r.error as NodeJS.ErrnoException).code === 'ENOENT' ? 'not found' : r.error.message}`,
    };
  const first = r.stdout.split('\n').find((l) => l.startsWith('GPU '));
  if (r.status !== 0 || !first)
    return { none: `nvidia-smi -L lists no GPU (${(r.stderr || r.stdout).trim().slice(0, 200)})` };
  return { gpu: first.replace(/\s*\(UUID:.*\)\s*$/, '') };
}

const VLLM_PROBE = `
import importlib.util, json
spec = importlib.util.find_spec("vllm")
version = None
if spec is not None:
    try:
        from importlib.metadata import version as v
        version = v("vllm")
    except Exception:
        pass
print(json.dumps({"found": spec is not None, "version": version}))
`;

/** Whether `python` can import vllm (found without importing it: seconds, not the minute torch takes). */
function vllmIn(python: string, env: NodeJS.ProcessEnv | undefined): { version?: string; none?: string } {
  if (!existsSync(python)) return { none: `${python} is not there` };
  const r = spawnSync(python, ['-c', VLLM_PROBE], { env, timeout: 60_000, encoding: 'utf8' });
  try {
    const found = JSON.parse(r.stdout.trim().split('\n').pop() ?? '') as { found: boolean; version: string | null };
    return found.found ? { version: found.version ?? 'version unknown' } : { none: `${python} has no vllm` };
  } catch {
    return { none: `${python} did not run (${(r.error?.message ?? r.stderr ?? '').trim().slice(0, 200)})` };
  }
}

/** The folder vLLM loads: the model folder or its checkpoint/ subfolder, with config.json and safetensors. */
function checkpointFolder(modelDir: string): string {
  for (const d of [modelDir, join(modelDir, CHECKPOINT_SUBDIR)])
    if (existsSync(join(d, 'config.json')) && readdirSync(d).some((f) => f.endsWith('.safetensors'))) return d;
  throw new VllmUnavailable(
    `${modelDir} has no Hugging Face checkpoint (config.json and *.safetensors, in the folder or its checkpoint/ subfolder) for vLLM to load; a model pulled as a ready ONNX export has none: set KIMINA_MODEL to a checkpoint folder`,
  );
}

export async function loadVllmEngine(config: EngineConfig, options: CreateEngineOptions): Promise<Engine> {
  const log = options.log ?? ((line: string) => console.error(line));
  const env = options.childEnv ?? {};
  const nvidia = nvidiaGpu(env);
  if (!nvidia.gpu)
    throw new VllmUnavailable(
      `kimina.engine = vllm needs an NVIDIA GPU on Linux, and there is none here (${nvidia.none}); use kimina.engine = auto for the in-process engines, or openai with a vLLM server elsewhere`,
    );
  const python = vllmPython(config);
  const vllm = vllmIn(python, env);
  if (!vllm.version)
    throw new VllmUnavailable(
      `kimina.engine = vllm runs vLLM from the trainer environment, and ${vllm.none}: install it with \`kimina trainer setup --gpu\` (the Train view's setup makes the same environment), or set KIMINA_TRAINER_PYTHON to a Python with vllm`,
    );
  const spec = config.model ?? DEFAULT_MODEL;
  const located = locateModel(options.home, spec);
  if (located.format === 'incomplete') resolveModelDir(options.home, spec); // its error: pull the model
  const modelDir = checkpointFolder(located.dir);
  log(
    `vllm: ${nvidia.gpu}; vllm ${vllm.version} in ${python}; checkpoint ${modelDir} (the server starts on the first request)`,
  );
  return new VllmEngine({
    server: {
      python,
      modelDir,
      servedModelName: located.id === located.dir ? modelDir : located.id,
      maxModelLen: VLLM_MAX_MODEL_LEN,
      gpuMemoryUtilization: config.vllmGpuMemoryUtilization,
      seed: VLLM_SEED,
      env,
    },
    idleMinutes: config.vllmIdleMinutes,
    tokenizerDir: findTokenizerDir(options.home, spec) ?? modelDir,
    log,
  });
}
