// Exporting a verl job for a Ray cluster (training-recipe.md §2.1, §9): parquet train/test sets, the reward
// module that calls this backend's reward service, the recipe's overrides as a launch script, a runtime env,
// and the `ray job submit` command.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { TrainingHyperparameters, TrainingPrompt, VerlExportResult } from '../protocol';
import { trainerRows } from './promptSet';

const execFileAsync = promisify(execFile);

export interface VerlExportOptions {
  outDir: string;
  model: string;
  train: TrainingPrompt[];
  test: TrainingPrompt[];
  hyper: TrainingHyperparameters;
  /** The backend root the Ray workers reach, e.g. http://10.0.0.5:8000. */
  rewardUrl: string;
  nodes?: number;
  gpusPerNode?: number;
  /** Python with pyarrow (the trainer environment) and the trainer sources, to write parquet. */
  python: string;
  sourceDir: string;
  experiment?: string;
}

/** verl overrides following the recipe's kimina_prover_1.7B.sh, with this job's data, model, sizes and reward. */
export function verlOverrides(o: Pick<VerlExportOptions, 'model' | 'hyper' | 'nodes' | 'gpusPerNode' | 'experiment'>): Record<string, string | number | boolean> {
  const h = o.hyper;
  return {
    'algorithm.adv_estimator': 'grpo',
    'algorithm.norm_adv_by_std_in_grpo': false,
    'algorithm.use_kl_in_reward': false,
    'data.train_files': '[data/train.parquet]',
    'data.val_files': '[data/test.parquet]',
    'data.train_batch_size': h.promptsPerStep,
    'data.max_prompt_length': h.maxPromptLength,
    'data.max_response_length': h.maxCompletionLength,
    'data.filter_overlong_prompts': true,
    'data.truncation': 'error',
    'data.return_raw_chat': true,
    '+data.return_extra_info': true,
    'data.dataloader_num_workers': 0,
    'actor_rollout_ref.model.path': o.model,
    'actor_rollout_ref.model.use_remove_padding': true,
    'actor_rollout_ref.model.enable_gradient_checkpointing': true,
    'actor_rollout_ref.actor.optim.lr': h.learningRate,
    'actor_rollout_ref.actor.ppo_mini_batch_size': Math.max(1, Math.floor(h.perDeviceBatch / h.numGenerations)),
    'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu': 2,
    'actor_rollout_ref.actor.ppo_max_token_len_per_gpu': h.maxPromptLength + h.maxCompletionLength,
    'actor_rollout_ref.actor.loss_agg_mode': 'seq-mean-token-sum-norm',
    'actor_rollout_ref.actor.use_kl_loss': false,
    'actor_rollout_ref.actor.kl_loss_coef': 0.0,
    'actor_rollout_ref.actor.entropy_coeff': 0,
    'actor_rollout_ref.actor.clip_ratio_low': h.epsilon,
    'actor_rollout_ref.actor.clip_ratio_high': h.epsilonHigh,
    'actor_rollout_ref.actor.fsdp_config.param_offload': false,
    'actor_rollout_ref.actor.fsdp_config.optimizer_offload': false,
    'actor_rollout_ref.rollout.name': 'vllm',
    'actor_rollout_ref.rollout.n': h.numGenerations,
    'actor_rollout_ref.rollout.tensor_model_parallel_size': 1,
    'actor_rollout_ref.rollout.gpu_memory_utilization': 0.6,
    'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu': 2,
    'actor_rollout_ref.rollout.max_num_batched_tokens': h.maxPromptLength + h.maxCompletionLength,
    'actor_rollout_ref.rollout.val_kwargs.do_sample': true,
    'actor_rollout_ref.rollout.val_kwargs.n': h.evalSamples,
    'actor_rollout_ref.rollout.val_kwargs.temperature': 1,
    'actor_rollout_ref.rollout.val_kwargs.top_p': 0.95,
    'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu': 2,
    'actor_rollout_ref.ref.fsdp_config.param_offload': true,
    'reward_model.reward_manager': 'batch',
    'reward_model.launch_reward_fn_async': true,
    'custom_reward_function.path': 'kimina_reward.py',
    'custom_reward_function.name': 'reward',
    '+custom_reward_function.reward_kwargs.return_dict': true,
    'trainer.critic_warmup': 0,
    'trainer.logger': '["console"]',
    'trainer.project_name': 'kimina-prover',
    'trainer.experiment_name': o.experiment ?? 'kimina-personal',
    'trainer.n_gpus_per_node': o.gpusPerNode ?? 8,
    'trainer.nnodes': o.nodes ?? 1,
    'trainer.save_freq': h.saveSteps,
    'trainer.test_freq': h.evalSteps,
    'trainer.total_training_steps': h.maxSteps,
  };
}

function shellWord(v: string | number | boolean): string {
  const s = String(v);
  return /^[\w@%+=:,./[\]-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

export function launchScript(overrides: Record<string, string | number | boolean>): string {
  const lines = Object.entries(overrides).map(([k, v]) => `  ${k}=${shellWord(v)}`);
  return ['#!/usr/bin/env bash', '# verl GRPO (Dr.GRPO) job exported by `kimina train export-verl`; extra overrides may follow as arguments.',
    'set -euo pipefail', 'cd "$(dirname "$0")"', 'python3 -m verl.trainer.main_ppo \\', lines.join(' \\\n') + ' \\', '  "$@"', ''].join('\n');
}

export function runtimeEnv(rewardUrl: string): string {
  return ['# Ray runtime environment (ray job submit --runtime-env runtime_env.yaml).', 'working_dir: ./', 'excludes: [".git"]', 'env_vars:',
    `  KIMINA_REWARD_URL: ${JSON.stringify(rewardUrl)}`, '  TORCH_NCCL_AVOID_RECORD_STREAMS: "1"', '  CUDA_DEVICE_MAX_CONNECTIONS: "1"', ''].join('\n');
}

export function submitCommand(address: string): string[] {
  return ['ray', 'job', 'submit', `--address=${address}`, '--runtime-env=runtime_env.yaml', '--no-wait', '--', 'bash', 'run_verl.sh'];
}

export async function exportVerl(o: VerlExportOptions): Promise<VerlExportResult> {
  if (o.train.length === 0) throw new Error('no training prompts to export');
  const data = join(o.outDir, 'data');
  mkdirSync(data, { recursive: true });
  writeFileSync(join(data, 'train.jsonl'), trainerRows(o.train));
  writeFileSync(join(data, 'test.jsonl'), trainerRows(o.test));
  const env = { ...process.env, PYTHONPATH: o.sourceDir };
  for (const split of ['train', 'test']) {
    try {
      await execFileAsync(o.python, ['-m', 'kimina_trainer.verl_export', join(data, `${split}.jsonl`), join(data, `${split}.parquet`)], { env, cwd: o.sourceDir });
    } catch (err) {
      throw new Error(`could not write ${split}.parquet with ${o.python} (run \`kimina trainer setup\`): ${(err as Error).message}`);
    }
  }
  const reward = readFileSync(join(o.sourceDir, 'verl', 'kimina_reward.py'), 'utf8').replace('__KIMINA_REWARD_URL__', o.rewardUrl);
  writeFileSync(join(o.outDir, 'kimina_reward.py'), reward);
  const overrides = verlOverrides(o);
  writeFileSync(join(o.outDir, 'run_verl.sh'), launchScript(overrides), { mode: 0o755 });
  writeFileSync(join(o.outDir, 'overrides.json'), JSON.stringify(overrides, null, 2) + '\n');
  writeFileSync(join(o.outDir, 'runtime_env.yaml'), runtimeEnv(o.rewardUrl));
  const files = ['data/train.parquet', 'data/test.parquet', 'kimina_reward.py', 'run_verl.sh', 'overrides.json', 'runtime_env.yaml'];
  return { outDir: o.outDir, files, submitCommand: submitCommand('http://HEAD_NODE:8265') };
}
