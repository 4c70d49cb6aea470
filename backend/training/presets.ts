// Hyperparameter presets: the recipe (training-recipe.md §2.1) and versions of it scaled to smaller machines.
import type { TrainingHyperparameters, TrainingPresetName } from '../protocol';

/** The recipe's error-fix cache size (`+data.multiturn_n_samples_in_cache=5000`). */
export const FIX_CACHE_SIZE = 5000;
/** The recipe's training length (`trainer.total_epochs=15`) when no step count is given. */
export const RECIPE_EPOCHS = 15;

const RECIPE: TrainingHyperparameters = {
  learningRate: 2e-6,
  numGenerations: 8,
  promptsPerStep: 256,
  perDeviceBatch: 256,
  maxCompletionLength: 24576,
  maxPromptLength: 8192,
  temperature: 1.0,
  topP: 1.0,
  epsilon: 0.2,
  epsilonHigh: 0.3,
  beta: 0,
  maxSteps: 1000,
  saveSteps: 5,
  evalSteps: 5,
  evalSamples: 8,
  evalPrompts: 64,
  seed: 42,
  loraRank: 0,
  useVllm: 'auto',
  fixSamplingRate: 0.5,
  heldOutShare: 0.1,
};

export const PRESETS: Record<TrainingPresetName, { summary: string; hyper: TrainingHyperparameters }> = {
  'tiny-cpu': {
    summary: 'smoke test on the CPU: tiny batches and lengths (only useful with a tiny model)',
    hyper: {
      ...RECIPE,
      learningRate: 1e-4,
      numGenerations: 4,
      promptsPerStep: 2,
      perDeviceBatch: 8,
      maxCompletionLength: 32,
      maxPromptLength: 1024,
      maxSteps: 10,
      saveSteps: 2,
      evalSteps: 5,
      evalSamples: 2,
      evalPrompts: 4,
      useVllm: 'off',
    },
  },
  'single-gpu-lora': {
    summary: 'one GPU (24 GB+): LoRA r=32, 16 prompts x 8 samples per generation, 8k-token answers',
    hyper: {
      ...RECIPE,
      learningRate: 1e-5,
      promptsPerStep: 16,
      perDeviceBatch: 16,
      maxCompletionLength: 8192,
      maxPromptLength: 2048,
      maxSteps: 400,
      saveSteps: 16,
      evalSteps: 40,
      evalSamples: 4,
      evalPrompts: 32,
      loraRank: 32,
    },
  },
  'single-gpu-full': {
    summary: 'one large GPU (80 GB+): all weights, 16 prompts x 8 samples, 16k-token answers',
    hyper: {
      ...RECIPE,
      promptsPerStep: 16,
      perDeviceBatch: 8,
      maxCompletionLength: 16384,
      maxPromptLength: 4096,
      maxSteps: 400,
      saveSteps: 16,
      evalSteps: 40,
      evalSamples: 8,
      evalPrompts: 32,
    },
  },
  'recipe-8gpu': {
    summary: 'the published recipe (8 GPUs, 256 prompts x 8 samples): export it to verl for a Ray cluster',
    hyper: RECIPE,
  },
};

export function presetHyper(
  name: TrainingPresetName,
  overrides: Partial<TrainingHyperparameters> = {},
): TrainingHyperparameters {
  const preset = PRESETS[name];
  if (!preset) throw new Error(`unknown preset '${name}' (one of ${Object.keys(PRESETS).join(', ')})`);
  const hyper = { ...preset.hyper, ...overrides };
  validateHyper(hyper);
  return hyper;
}

function validateHyper(h: TrainingHyperparameters): void {
  const problems: string[] = [];
  for (const [k, v] of Object.entries(h))
    if (typeof v === 'number' && !Number.isFinite(v)) problems.push(`${k} must be a number`);
  if (h.numGenerations < 2) problems.push('numGenerations must be at least 2');
  if (h.promptsPerStep < 1 || h.perDeviceBatch < 1 || h.maxSteps < 1)
    problems.push('promptsPerStep, perDeviceBatch and maxSteps must be positive');
  if ((h.promptsPerStep * h.numGenerations) % h.perDeviceBatch !== 0)
    problems.push('promptsPerStep x numGenerations must be a multiple of perDeviceBatch');
  if (h.perDeviceBatch % h.numGenerations !== 0 && h.numGenerations % h.perDeviceBatch !== 0)
    problems.push('perDeviceBatch and numGenerations must divide one another');
  if (h.saveSteps < 1) problems.push('saveSteps must be at least 1');
  if (h.evalPrompts < 0 || h.evalSteps < 0 || h.evalSamples < 1)
    problems.push('evalPrompts and evalSteps must be >= 0, evalSamples >= 1');
  if (h.heldOutShare < 0 || h.heldOutShare >= 1) problems.push('heldOutShare must be in [0, 1)');
  if (h.fixSamplingRate < 0 || h.fixSamplingRate > 1) problems.push('fixSamplingRate must be in [0, 1]');
  if (!['auto', 'on', 'off'].includes(h.useVllm)) problems.push('useVllm must be auto, on or off');
  if (problems.length) throw new Error(`bad training settings: ${problems.join('; ')}`);
}
