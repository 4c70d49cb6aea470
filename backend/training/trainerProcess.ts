// Launching one Python trainer process for a run: its JSON config, environment and log file.
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  osOf,
  pathList,
  processCommandLine,
  processTable,
  startProcess,
  stopPlan,
  stopTree,
  stopTreeOfPid,
  systemStop,
  type Os,
  type ProcessSpec,
  type StopDeps,
  type StopPlan,
} from '../lean/processes';
import type { TrainingHyperparameters } from '../protocol';
import { MAX_FEEDBACK_CHARS } from '../prover/fixTurn';
import { FIX_CACHE_SIZE } from './presets';

export interface TrainerLaunch {
  python: string;
  sourceDir: string;
  configPath: string;
  logPath: string;
  /** "cpu" or GPU ids for CUDA_VISIBLE_DEVICES. */
  gpus: string;
  /** Kept on PYTHONPATH after the trainer's own sources (the PYTHONPATH setting). */
  pythonPath?: string;
  /** The base environment the trainer starts from, handed down by the root (Settings.childEnv). */
  env: NodeJS.ProcessEnv;
}

export interface TrainerExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface TrainerHandle {
  pid: number;
  /** SIGTERM asks the trainer to checkpoint and stop (the stop line on Windows); SIGKILL stops its whole tree. */
  kill(signal: NodeJS.Signals): void;
  exited: Promise<TrainerExit>;
}

export type TrainerLauncher = (launch: TrainerLaunch) => TrainerHandle;

/** Trainer settings no preset varies: the recipe's validation top-p, and TRL's colocated vLLM share of GPU memory. */
const TRAINER_FIXED = { evalTopP: 0.95, vllmGpuMemoryUtilization: 0.3 };
/** LoRA on every attention and MLP projection of a Qwen3 block. */
const LORA_TARGETS = ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'];

/** The Python run config (kimina_trainer/config.py field names), every key. */
export function trainerConfig(options: {
  runId: string;
  backendUrl: string;
  token?: string;
  model: string;
  outputDir: string;
  trainFile: string;
  heldOutFile: string | null;
  hyper: TrainingHyperparameters;
  cpu: boolean;
  launchId?: string;
}): Record<string, unknown> {
  const h = options.hyper;
  return {
    run_id: options.runId,
    backend_url: options.backendUrl,
    token: options.token ?? null,
    model_path: options.model,
    launch_id: options.launchId ?? null,
    backend_pid: options.launchId ? process.pid : null,
    output_dir: options.outputDir,
    train_file: options.trainFile,
    held_out_file: options.heldOutFile,
    learning_rate: h.learningRate,
    num_generations: h.numGenerations,
    prompts_per_step: h.promptsPerStep,
    per_device_batch: h.perDeviceBatch,
    max_completion_length: h.maxCompletionLength,
    max_prompt_length: h.maxPromptLength,
    temperature: h.temperature,
    top_p: h.topP,
    epsilon: h.epsilon,
    epsilon_high: h.epsilonHigh,
    beta: h.beta,
    max_steps: h.maxSteps,
    save_steps: h.saveSteps,
    eval_steps: h.evalSteps,
    eval_samples: h.evalSamples,
    seed: h.seed,
    lora: h.loraRank > 0 ? { r: h.loraRank, alpha: 2 * h.loraRank, dropout: 0, target_modules: LORA_TARGETS } : null,
    use_vllm: h.useVllm,
    fix_sampling_rate: h.fixSamplingRate,
    use_cpu: options.cpu,
    // Every key of kimina_trainer/config.py is sent: the Python side has no defaults of its own.
    fix_seed_file: null,
    eval_top_p: TRAINER_FIXED.evalTopP,
    vllm_gpu_memory_utilization: TRAINER_FIXED.vllmGpuMemoryUtilization,
    fix_cache_size: FIX_CACHE_SIZE,
    max_feedback_chars: MAX_FEEDBACK_CHARS,
    gradient_checkpointing: true,
    final_export: true,
  };
}

export function writeTrainerConfig(path: string, config: Record<string, unknown>): void {
  writeFileSync(path, JSON.stringify(config, null, 2) + '\n', { mode: 0o600 }); // holds the API token
}

/**
 * How `python -m kimina_trainer.worker` starts on an OS (backend/lean/processes.ts decides the process rules): argv,
 * the trainer's environment (PYTHONPATH in the OS's form: `;` on Windows), and the spawn options: its own process group
 * on POSIX (so a Ctrl-C in the terminal reaches the backend alone, and a stop takes the trainer's helpers too), no
 * console window on Windows, where it is not detached (a detached child gets its own console; taskkill /T stops the
 * tree instead).
 */
export function trainerSpec(launch: TrainerLaunch, os: Os = osOf()): ProcessSpec {
  const env: NodeJS.ProcessEnv = {
    ...launch.env,
    PYTHONPATH: pathList([launch.sourceDir, launch.pythonPath], os),
    PYTHONUNBUFFERED: '1',
    TOKENIZERS_PARALLELISM: 'false',
    HF_HUB_DISABLE_TELEMETRY: '1',
  };
  env.CUDA_VISIBLE_DEVICES = launch.gpus === 'cpu' ? '' : launch.gpus;
  const argv = [launch.python, '-m', 'kimina_trainer.worker', '--config', launch.configPath];
  return { argv, cwd: launch.sourceDir, env, os }; // started with spawnOptions(spec, stdio) (startProcess)
}

/** The line on the trainer's stdin that asks it to checkpoint and stop (kimina_trainer/lifeline.py), as SIGTERM does. */
export const STOP_LINE = 'stop\n';

/**
 * What a signal to the trainer does on an OS. SIGKILL: the whole tree (process group on POSIX, taskkill /T /F on
 * Windows). SIGTERM, the graceful stop (the step in flight finishes, a checkpoint is written): the signal on POSIX;
 * on Windows Node's kill is TerminateProcess, which no handler sees, so the stop line goes to its stdin instead.
 */
export function trainerSignalPlan(
  pid: number,
  signal: NodeJS.Signals,
  os: Os = osOf(),
):
  | { kind: 'tree'; plan: StopPlan }
  | { kind: 'signal'; pid: number; signal: NodeJS.Signals }
  | { kind: 'stdin'; line: string } {
  if (signal === 'SIGKILL') return { kind: 'tree', plan: stopPlan(pid, os) };
  if (os === 'win32') return { kind: 'stdin', line: STOP_LINE };
  return { kind: 'signal', pid, signal };
}

/**
 * A launcher for an OS (default this machine's), its stops run through `stop` (systemStop of the launch's env, or a
 * test's double). The backend owns the trainer's life (kimina_trainer/lifeline.py): the trainer gets SIGKILL from the
 * kernel when this process dies (Linux parent-death signal, armed against the config's backend_pid) and also ends when
 * its stdin, whose write end only this process holds, reaches end-of-file (every OS).
 */
export function trainerLauncher(os: Os = osOf(), stop?: (env: NodeJS.ProcessEnv) => StopDeps): TrainerLauncher {
  return (launch) => {
    const log = openSync(launch.logPath, 'a', 0o600);
    const child = startProcess(trainerSpec(launch, os), ['pipe', log, log]);
    closeSync(log);
    // The lifeline: never ended; it closes when this process exits (the stop line is its only write). It must not keep us alive.
    child.stdin?.on('error', () => {
      /* the trainer exited */
    });
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    const exited = new Promise<TrainerExit>((resolve) => {
      child.on('error', () => resolve({ code: 127, signal: null }));
      child.on('exit', (code, signal) => resolve({ code, signal }));
    });
    if (child.pid === undefined) return { pid: -1, kill: () => {}, exited };
    const pid = child.pid;
    const deps = (stop ?? systemStop)(launch.env);
    const kill = (signal: NodeJS.Signals): void => {
      const plan = trainerSignalPlan(pid, signal, os);
      if (plan.kind === 'tree') stopTree(child, os, deps);
      else if (plan.kind === 'stdin') child.stdin?.write(plan.line);
      else {
        try {
          deps.kill(plan.pid, plan.signal);
        } catch {
          /* already gone */
        }
      }
    };
    return { pid, kill, exited };
  };
}

/** Spawns the trainer on this machine's OS, output appended to the run's log file. */
export const spawnTrainer: TrainerLauncher = trainerLauncher();

/** Stops the whole tree of a trainer known only by its pid (started by an earlier backend; see isOurTrainer). */
export function killTrainerTree(
  pid: number,
  env: NodeJS.ProcessEnv,
  os: Os = osOf(),
  deps: StopDeps = systemStop(env),
): void {
  stopTreeOfPid(pid, os, deps);
}

/** The last lines of a run's trainer log, for error messages. */
export function logTail(logPath: string, lines = 15): string {
  if (!existsSync(logPath)) return '';
  return readFileSync(logPath, 'utf8')
    .split('\n')
    .filter((l) => l.trim())
    .slice(-lines)
    .join('\n');
}

/**
 * True when `pid` is alive and is a Kimina trainer for this config (so it is safe to stop after a backend restart):
 * its command line from /proc on Linux, `ps` on macOS, PowerShell on Windows (processCommandLine), probes run with `env`.
 */
export async function isOurTrainer(
  pid: number,
  configPath: string,
  env: NodeJS.ProcessEnv,
  os: Os = osOf(),
  exec: (argv: string[]) => Promise<string> = processTable(env),
): Promise<boolean> {
  const cmdline = await processCommandLine(pid, os, exec);
  return !!cmdline && cmdline.includes('kimina_trainer.worker') && cmdline.includes(configPath);
}

export function runFiles(dir: string) {
  return {
    config: join(dir, 'run.json'),
    train: join(dir, 'train.jsonl'),
    heldOut: join(dir, 'held_out.jsonl'),
    log: join(dir, 'trainer.log'),
    output: join(dir, 'output'),
  };
}
