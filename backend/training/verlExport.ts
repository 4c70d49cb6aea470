// Exporting a verl job for a Ray cluster (training-recipe.md §2.1, §9): parquet train/test sets, the reward
// module that calls this backend's reward service, our multi-turn dataset class (the recipe's error-fix turn),
// the recipe's overrides as a launch script, a runtime env, and the `ray job submit` command.
// docs/training.md lines these overrides up with the recipe's kimina_prover_1.7B.sh. The job is written for one
// verl release (verlVersions.ts): the batch reward up to 0.6, verl's per-sample reward loop from 0.7; the
// launch script checks that the cluster runs that release before it starts.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TrainingHyperparameters, TrainingPrompt, VerlExportResult } from '../protocol';
import { MAX_FEEDBACK_CHARS } from '../prover/fixTurn';
import { trainerRows } from './promptSet';
import { FIX_CACHE_SIZE, RECIPE_EPOCHS } from './presets';
import { chooseVerl, type VerlTarget } from './verlVersions';

const execFileAsync = promisify(execFile);

/** The recipe's starting checkpoints (kimina_prover_1.7B.sh / kimina_prover_0.6B.sh). */
export const RECIPE_START_MODEL = 'AI-MO/Kimina-Prover-Distill-1.7B';

export interface VerlExportOptions {
  outDir: string;
  model: string;
  train: TrainingPrompt[];
  test: TrainingPrompt[];
  /** data_source of the validation rows: the recipe's `AI-MO/minif2f_test`, or `kimina/held-out`. */
  testSource?: string;
  /** Total optimizer steps; unset = the recipe's 15 epochs. */
  steps?: number;
  hyper: TrainingHyperparameters;
  /** The backend root the Ray workers reach, e.g. http://10.0.0.5:8000. */
  rewardUrl: string;
  nodes?: number;
  gpusPerNode?: number;
  /** Python with pyarrow (the trainer environment) and the trainer sources, to write parquet. */
  python: string;
  sourceDir: string;
  experiment?: string;
  /** The base environment that python runs with, handed down by the root (Settings.childEnv). */
  env: NodeJS.ProcessEnv;
  /** The verl release to write the job for (`--verl`); unset: the trainer environment's, else the newest known. */
  verl?: string;
}

/** The experiment name the recipe uses for a start checkpoint (kimina-prover-1.7B / kimina-prover-0.6B). */
function experimentName(model: string): string {
  const size = /(\d+(?:\.\d+)?B)\b/i.exec(model)?.[1];
  return size ? `kimina-prover-${size}` : 'kimina-prover';
}

/**
 * verl overrides following the recipe's kimina_prover_1.7B.sh key by key (docs/training.md has the side-by-side),
 * with this job's data, model, sizes, reward module and our multi-turn dataset class.
 */
export function verlOverrides(
  o: Pick<VerlExportOptions, 'model' | 'hyper' | 'nodes' | 'gpusPerNode' | 'experiment' | 'steps'>,
  verl: Pick<VerlTarget, 'wiring' | 'keys' | 'v1Trainer'> = { wiring: 'reward-loop', keys: 'reward', v1Trainer: true },
): Record<string, string | number | boolean> {
  const h = o.hyper;
  const context = h.maxPromptLength + h.maxCompletionLength;
  return {
    'algorithm.adv_estimator': 'grpo',
    'algorithm.use_kl_in_reward': false,
    'algorithm.norm_adv_by_std_in_grpo': false,
    'data.train_files': '[data/train.parquet]',
    'data.val_files': '[data/test.parquet]',
    'data.train_batch_size': h.promptsPerStep,
    'data.max_prompt_length': h.maxPromptLength,
    'data.max_response_length': h.maxCompletionLength,
    '+data.return_extra_info': true,
    '+data.multiturn': true,
    '+data.multiturn_sampling_rate': h.fixSamplingRate,
    '+data.multiturn_n_samples_in_cache': FIX_CACHE_SIZE,
    '+data.multiturn_max_feedback_length': MAX_FEEDBACK_CHARS,
    '+data.multiturn_seed': h.seed,
    'data.return_raw_chat': true,
    'data.dataloader_num_workers': 0,
    'data.filter_overlong_prompts': true,
    'data.custom_cls.path': 'kimina_dataset.py',
    'data.custom_cls.name': 'KiminaMultiturnDataset',
    'data.truncation': 'error',
    'actor_rollout_ref.model.path': o.model,
    'actor_rollout_ref.actor.optim.lr': h.learningRate,
    'actor_rollout_ref.model.use_remove_padding': true,
    'actor_rollout_ref.actor.ppo_mini_batch_size': Math.max(1, Math.floor(h.perDeviceBatch / h.numGenerations)),
    'actor_rollout_ref.actor.loss_agg_mode': 'seq-mean-token-sum-norm',
    'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': 2,
    'actor_rollout_ref.actor.use_kl_loss': false,
    'actor_rollout_ref.actor.kl_loss_coef': 0.0,
    'actor_rollout_ref.actor.entropy_coeff': 0,
    'actor_rollout_ref.actor.clip_ratio_low': h.epsilon,
    'actor_rollout_ref.actor.clip_ratio_high': h.epsilonHigh,
    'actor_rollout_ref.model.enable_gradient_checkpointing': true,
    'actor_rollout_ref.actor.fsdp_config.param_offload': false,
    'actor_rollout_ref.actor.fsdp_config.optimizer_offload': false,
    'actor_rollout_ref.actor.ppo_max_token_len_per_gpu': context,
    'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu': 2,
    'actor_rollout_ref.rollout.tensor_model_parallel_size': 1,
    'actor_rollout_ref.rollout.name': 'vllm',
    'actor_rollout_ref.rollout.gpu_memory_utilization': 0.6,
    'actor_rollout_ref.rollout.n': h.numGenerations,
    'actor_rollout_ref.rollout.temperature': h.temperature,
    'actor_rollout_ref.rollout.top_p': h.topP,
    'actor_rollout_ref.rollout.val_kwargs.do_sample': true,
    'actor_rollout_ref.rollout.val_kwargs.n': h.evalSamples,
    'actor_rollout_ref.rollout.val_kwargs.temperature': 1,
    'actor_rollout_ref.rollout.val_kwargs.top_p': 0.95,
    'actor_rollout_ref.rollout.max_num_batched_tokens': context,
    'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu': 2,
    'actor_rollout_ref.ref.fsdp_config.param_offload': true,
    'actor_rollout_ref.ref.log_prob_max_token_len_per_gpu': context,
    ...rewardOverrides(verl),
    // verl 0.9's v1 trainer never hands the dataset its batches (on_batch_end): no error-fix turns there.
    ...(verl.v1Trainer ? { 'trainer.use_v1': false } : {}),
    'trainer.critic_warmup': 0,
    'trainer.logger': '["console"]',
    'trainer.project_name': 'kimina-prover',
    'trainer.experiment_name': o.experiment ?? experimentName(o.model),
    'trainer.n_gpus_per_node': o.gpusPerNode ?? 8,
    'trainer.nnodes': o.nodes ?? 1,
    'trainer.save_freq': h.saveSteps,
    'trainer.test_freq': h.evalSteps,
    ...(o.steps !== undefined
      ? { 'trainer.total_training_steps': o.steps }
      : { 'trainer.total_epochs': RECIPE_EPOCHS }),
  };
}

/**
 * How verl calls the reward module. Up to 0.6: the batch manager hands `reward` every answer of a step at once
 * (run beside the rollout). From 0.7: verl's reward loop calls the `compute_score` coroutine once per answer; it
 * gathers the answers that arrive together into the same batched, size-limited requests with failover, and always
 * answers a dict (the score and the fields the dataset class reads), so no reward_kwargs are needed.
 */
function rewardOverrides({ wiring, keys }: Pick<VerlTarget, 'wiring' | 'keys'>): Record<string, string | boolean> {
  if (wiring === 'batch')
    return {
      'reward_model.reward_manager': 'batch',
      'reward_model.launch_reward_fn_async': true,
      'custom_reward_function.path': 'kimina_reward.py',
      'custom_reward_function.name': 'reward',
      '+custom_reward_function.reward_kwargs.return_dict': true,
    };
  if (keys === 'top-level')
    return {
      'reward_model.reward_manager': 'naive',
      'custom_reward_function.path': 'kimina_reward.py',
      'custom_reward_function.name': 'compute_score',
    };
  return {
    'reward.reward_manager.name': 'naive',
    'reward.custom_reward_function.path': 'kimina_reward.py',
    'reward.custom_reward_function.name': 'compute_score',
  };
}

function shellWord(v: string | number | boolean): string {
  const s = String(v);
  return /^[\w@%+=:,./[\]-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/**
 * The launch script: first checks that the python3 the job runs with has the verl release series the job was
 * written for (read from verl/version/version without importing verl, else the package metadata) and says
 * what to do when it does not; KIMINA_VERL_ANY=1 skips the check. Then verl's main_ppo with the overrides.
 */
export function launchScript(
  overrides: Record<string, string | number | boolean>,
  verl: Pick<VerlTarget, 'version' | 'series' | 'wiring' | 'accepts'>,
): string {
  const lines = Object.entries(overrides).map(([k, v]) => `  ${k}=${shellWord(v)}`);
  const wiring = verl.wiring === 'batch' ? 'batch reward' : 'reward loop';
  return [
    '#!/usr/bin/env bash',
    `# verl GRPO (Dr.GRPO) job exported by \`kimina train export-verl\` for verl ${verl.version} (${verl.series}.x, ${wiring});`,
    '# extra overrides may follow as arguments.',
    'set -euo pipefail',
    'cd "$(dirname "$0")"',
    `JOB_VERL=${verl.version}`,
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a bash parameter expansion of the script, not a template
    'if [ -z "${KIMINA_VERL_ANY:-}" ]; then',
    `  HAVE=$(python3 -c 'import importlib.util as u, importlib.metadata as m, os
s = u.find_spec("verl")
if s is None or not s.origin: raise SystemExit(1)
f = os.path.join(os.path.dirname(s.origin), "version", "version")
print(open(f).read().strip() if os.path.exists(f) else m.version("verl"))' 2>/dev/null) || HAVE=""`,
    '  if [ -z "$HAVE" ]; then',
    '    echo "kimina: verl is not installed for $(command -v python3) on this node; this job was written for verl $JOB_VERL: pip install verl==$JOB_VERL" >&2',
    '    exit 3',
    '  fi',
    '  case "$HAVE" in',
    `    ${verl.accepts.join(' | ')}) ;;`,
    '    *)',
    `    echo "kimina: this job was written for verl $JOB_VERL (${verl.accepts.join(' or ')}) but this cluster runs verl $HAVE." >&2`,
    '    echo "  Either install the job\'s release on the cluster: pip install verl==$JOB_VERL" >&2',
    '    echo "  or export the job again for the cluster\'s release: kimina train export-verl --verl $HAVE (with the same flags as before)." >&2',
    '    echo "  KIMINA_VERL_ANY=1 skips this check." >&2',
    '    exit 3',
    '    ;;',
    '  esac',
    'fi',
    'python3 -m verl.trainer.main_ppo \\',
    lines.join(' \\\n') + ' \\',
    '  "$@"',
    '',
  ].join('\n');
}

function runtimeEnv(rewardUrl: string): string {
  return [
    '# Ray runtime environment (ray job submit --runtime-env runtime_env.yaml).',
    'working_dir: ./',
    'excludes: [".git"]',
    'env_vars:',
    `  KIMINA_REWARD_URL: ${JSON.stringify(rewardUrl)}`,
    '  TORCH_NCCL_AVOID_RECORD_STREAMS: "1"',
    '  CUDA_DEVICE_MAX_CONNECTIONS: "1"',
    '',
  ].join('\n');
}

export function submitCommand(address: string): string[] {
  return [
    'ray',
    'job',
    'submit',
    `--address=${address}`,
    '--runtime-env=runtime_env.yaml',
    '--no-wait',
    '--',
    'bash',
    'run_verl.sh',
  ];
}

/** The verl release installed in an environment (without importing it), or undefined when there is none. */
async function installedVerl(python: string, env: NodeJS.ProcessEnv): Promise<string | undefined> {
  try {
    const { stdout } = await execFileAsync(python, ['-c', 'import importlib.metadata as m; print(m.version("verl"))'], {
      env,
      windowsHide: true,
      timeout: 30_000,
    });
    return stdout.trim() || undefined;
  } catch {
    return undefined;
  }
}

export async function exportVerl(o: VerlExportOptions): Promise<VerlExportResult> {
  // Refused before anything is written: a release whose config the job was never checked against.
  const verl = chooseVerl(o.verl, o.verl === undefined ? await installedVerl(o.python, o.env) : undefined);
  if (o.train.length === 0) throw new Error('no training prompts to export');
  if (o.test.length === 0) throw new Error('no validation prompts to export (verl validates every test_freq steps)');
  const data = join(o.outDir, 'data');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, 'train.jsonl'), trainerRows(o.train));
  writeFileSync(join(data, 'test.jsonl'), trainerRows(o.test));
  const env = { ...o.env, PYTHONPATH: o.sourceDir };
  const sources: Record<string, string> = { train: 'kimina/personal', test: o.testSource ?? 'kimina/held-out' };
  for (const split of ['train', 'test']) {
    try {
      await execFileAsync(
        o.python,
        [
          '-m',
          'kimina_trainer.verl_export',
          join(data, `${split}.jsonl`),
          join(data, `${split}.parquet`),
          sources[split],
        ],
        { env, cwd: o.sourceDir, windowsHide: true },
      );
    } catch (err) {
      throw new Error(
        `could not write ${split}.parquet with ${o.python} (run \`kimina trainer setup\`): ${(err as Error).message}`,
      );
    }
  }
  const reward = readFileSync(join(o.sourceDir, 'verl', 'kimina_reward.py'), 'utf8').replace(
    '__KIMINA_REWARD_URL__',
    o.rewardUrl,
  );
  writeFileSync(join(o.outDir, 'kimina_reward.py'), reward);
  for (const file of ['kimina_dataset.py', 'kimina_verifiers.py'])
    writeFileSync(join(o.outDir, file), readFileSync(join(o.sourceDir, 'verl', file), 'utf8'));
  const overrides = verlOverrides(o, verl);
  writeFileSync(join(o.outDir, 'run_verl.sh'), launchScript(overrides, verl), { mode: 0o755 });
  writeFileSync(join(o.outDir, 'overrides.json'), JSON.stringify(overrides, null, 2) + '\n');
  writeFileSync(join(o.outDir, 'runtime_env.yaml'), runtimeEnv(o.rewardUrl));
  const files = [
    'data/train.parquet',
    'data/test.parquet',
    'kimina_reward.py',
    'kimina_dataset.py',
    'kimina_verifiers.py',
    'run_verl.sh',
    'overrides.json',
    'runtime_env.yaml',
  ];
  return {
    outDir: o.outDir,
    files,
    submitCommand: submitCommand('http://HEAD_NODE:8265'),
    verl: { version: verl.version, from: verl.from, wiring: verl.wiring },
  };
}
