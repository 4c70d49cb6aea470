// Training messages: runs, their controls, per-step metrics, sampled rollouts, the reward service, SSE events.
import type { FormatErrorName } from './prove';
import { verdictModes, type VerdictStatus } from './verify';
import { s, type Infer, type Schema } from './schema';

/**
 * preparing: estimating win rates to filter the prompt set; queued: waiting for its GPUs (or for them to go
 * idle); running includes restarting after a crash.
 */
export type TrainingRunState =
  'preparing' | 'queued' | 'running' | 'pausing' | 'paused' | 'completed' | 'failed' | 'cancelled';

const trainingPresetNames = ['tiny-cpu', 'single-gpu-lora', 'single-gpu-full', 'recipe-8gpu'] as const;
export type TrainingPresetName = (typeof trainingPresetNames)[number];

/** Only start when the GPUs are idle (nobody else computing on them), or at once. */
const trainingSchedules = ['now', 'when-idle'] as const;
export type TrainingSchedule = (typeof trainingSchedules)[number];

/** The trainer's hyperparameters (names as in the Python run config, camelCase here). */
export interface TrainingHyperparameters {
  learningRate: number;
  numGenerations: number;
  promptsPerStep: number;
  /** Sequences per forward/backward pass. */
  perDeviceBatch: number;
  maxCompletionLength: number;
  maxPromptLength: number;
  temperature: number;
  topP: number;
  epsilon: number;
  epsilonHigh: number;
  beta: number;
  maxSteps: number;
  saveSteps: number;
  evalSteps: number;
  evalSamples: number;
  /** At most this many held-out prompts are evaluated; extra held-out candidates go back to training. */
  evalPrompts: number;
  seed: number;
  /** LoRA rank; 0 trains all weights. */
  loraRank: number;
  useVllm: 'auto' | 'on' | 'off';
  fixSamplingRate: number;
  /** Share of the harvested prompts kept out of training for evaluation. */
  heldOutShare: number;
}

/** Bounds on one request to the training routes. */
const trainingLimits = {
  promptsPerRequest: 5000,
  statementChars: 100_000,
  messageChars: 1_000_000,
  messagesPerPrompt: 16,
  pathChars: 4096,
  rewardItemsPerRequest: 1024,
  responseChars: 1_000_000,
  previousAnswers: 4,
  metricsPerReport: 500,
  logChars: 100_000,
} as const;

const text = (max: number) => s.string({ max });
const chatMessage = s.object({
  role: s.enum(['system', 'user', 'assistant']),
  content: text(trainingLimits.messageChars),
});

/** One training prompt: the Kimina prompt messages plus the trusted statement the reward checks against. */
const trainingPromptSchema = s.object({
  id: s.string({ min: 1, max: 500 }),
  prompt: s.array(chatMessage, { min: 1, max: trainingLimits.messagesPerPrompt }),
  formalStatement: s.string({ notBlank: true, max: trainingLimits.statementChars }),
  /** Where it came from, e.g. `Foo.lean:12 bar` or `attempt 42`. */
  source: s.optional(text(1000)),
  /** The current model's estimated win rate, when measured. */
  winRate: s.optional(s.number({ min: 0, max: 1 })),
});
export type TrainingPrompt = Infer<typeof trainingPromptSchema>;

/** Each hyperparameter's type and the range a request may ask for (the presets' own checks come on top). */
const hyperparameterSchemas: { [K in keyof TrainingHyperparameters]: Schema<TrainingHyperparameters[K]> } = {
  learningRate: s.number({ above: 0, max: 1 }),
  numGenerations: s.integer({ min: 1, max: 1024 }),
  promptsPerStep: s.integer({ min: 1, max: 100_000 }),
  perDeviceBatch: s.integer({ min: 1, max: 100_000 }),
  maxCompletionLength: s.integer({ min: 1, max: 1_000_000 }),
  maxPromptLength: s.integer({ min: 1, max: 1_000_000 }),
  temperature: s.number({ min: 0, max: 10 }),
  topP: s.number({ above: 0, max: 1 }),
  epsilon: s.number({ min: 0, max: 10 }),
  epsilonHigh: s.number({ min: 0, max: 10 }),
  beta: s.number({ min: 0, max: 100 }),
  maxSteps: s.integer({ min: 1, max: 10_000_000 }),
  saveSteps: s.integer({ min: 1, max: 10_000_000 }),
  evalSteps: s.integer({ min: 0, max: 10_000_000 }),
  evalSamples: s.integer({ min: 1, max: 1024 }),
  evalPrompts: s.integer({ min: 0, max: 100_000 }),
  seed: s.integer({ min: 0, max: 2 ** 32 - 1 }),
  loraRank: s.integer({ min: 0, max: 4096 }),
  useVllm: s.enum(['auto', 'on', 'off']),
  fixSamplingRate: s.number({ min: 0, max: 1 }),
  heldOutShare: s.number({ min: 0, max: 0.99 }),
};
const optionalAll = <F extends Record<string, Schema<unknown>>>(fields: F) =>
  Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, s.optional(v)])) as {
    [K in keyof F]: F[K] & { optional: true };
  };

/**
 * `POST /v1/training/runs`. model: Hugging Face model id or local folder with safetensors weights; workspace: Lean
 * workspace to harvest personal proofs from; prompts: given directly (tests, scripts), used together with any
 * harvested ones; gpus: GPU ids, e.g. "0" or "0,1", or "cpu" (default: every visible GPU, else "cpu");
 * winRate: the recipe's prompt-set filter: sample `samples` answers per training prompt with the current prover
 * model, drop prompts won more often than `maxWinRate` (default 0.5), repeat never-won ones `hardCopies` times (default 2).
 */
export const startTrainingRequestSchema = s.object({
  name: s.optional(text(200)),
  preset: s.enum(trainingPresetNames, {
    messages: { '*': `unknown preset (one of ${trainingPresetNames.join(', ')})` },
  }),
  model: s.string({
    notBlank: true,
    max: trainingLimits.pathChars,
    messages: {
      missing: 'model is required (a Hugging Face id or a local folder)',
      string_type: 'model is required (a Hugging Face id or a local folder)',
      string_too_short: 'model is required (a Hugging Face id or a local folder)',
    },
  }),
  workspace: s.optional(s.string({ min: 1, max: trainingLimits.pathChars })),
  prompts: s.optional(s.array(trainingPromptSchema, { max: trainingLimits.promptsPerRequest })),
  heldOut: s.optional(s.array(trainingPromptSchema, { max: trainingLimits.promptsPerRequest })),
  gpus: s.optional(
    s.string({
      max: 300,
      pattern: /^(cpu|\d{1,3}(,\d{1,3}){0,63})$/,
      patternText: '"cpu" or GPU numbers such as 0 or 0,1',
    }),
  ),
  schedule: s.optional(s.enum(trainingSchedules)),
  overrides: s.optional(s.object(optionalAll(hyperparameterSchemas), { extra: 'forbid' })),
  winRate: s.optional(
    s.object({
      samples: s.integer({ min: 1, max: 64 }),
      maxWinRate: s.optional(s.number({ min: 0, max: 1 })),
      hardCopies: s.optional(s.integer({ min: 0, max: 16 })),
    }),
  ),
});
export type StartTrainingRequest = Infer<typeof startTrainingRequestSchema>;

export interface TrainingEvalSummary {
  step: number;
  metrics: Record<string, number>;
}

export interface TrainingRun {
  id: string;
  name: string;
  state: TrainingRunState;
  preset: TrainingPresetName;
  model: string;
  gpus: string;
  schedule: TrainingSchedule;
  hyper: TrainingHyperparameters;
  createdAt: string;
  updatedAt: string;
  /** Last finished optimizer step the backend heard of. */
  step: number;
  /** Newest checkpoint's step (resume point). */
  checkpointStep: number;
  restarts: number;
  trainPrompts: number;
  heldOutPrompts: number;
  outputDir: string;
  /** Merged final weights (safetensors) once finished. */
  finalDir: string | null;
  /** Held-out evaluation of the base model (step 0) and of the newest step. */
  baseEval: TrainingEvalSummary | null;
  latestEval: TrainingEvalSummary | null;
  /** True when the newest held-out pass@k beats the base model's. */
  improved: boolean | null;
  /** ONNX folder after an export, ready for the prover. */
  onnxDir: string | null;
  error: string | null;
}

export type MetricKind = 'train' | 'eval';

/** One step's metrics; names follow TRL and the recipe (training-recipe.md §10), e.g. `reward`, `acc/turn_1`. */
export interface StepMetrics {
  step: number;
  kind: MetricKind;
  metrics: Record<string, number>;
}

export interface RolloutSample {
  id: number;
  runId: string;
  step: number;
  purpose: 'train' | 'eval';
  promptId: string;
  turn: number;
  think: string;
  code: string | null;
  response: string;
  formatError: FormatErrorName;
  verdict: VerdictStatus | null;
  score: number;
  createdAt: string;
}

export interface GpuStatus {
  index: number;
  name: string;
  memoryUsedMb: number;
  memoryTotalMb: number;
  utilizationPct: number;
}
export interface GpuReport {
  available: boolean;
  gpus: GpuStatus[];
  note?: string;
}

/**
 * `POST /v1/training/runs/:id/reward` (the trainer's reward service). At most 1024 items by the schema; under
 * `kimina serve` the admission queue refuses more than KIMINA_MAX_BATCH (default 128) with 413 first. turn: 1 for a first answer, 2 for an answer
 * to the error-fix prompt; previous: earlier assistant answers in the conversation (turn 2: the turn-1 answer),
 * each must pass the format checks too.
 */
const rewardItemSchema = s.object({
  promptId: text(500),
  turn: s.integer({ min: 1, max: 2 }),
  formalStatement: s.string({ max: trainingLimits.statementChars }),
  previous: s.array(text(trainingLimits.responseChars), { max: trainingLimits.previousAnswers }),
  response: text(trainingLimits.responseChars),
});
export type RewardItem = Infer<typeof rewardItemSchema>;
export const rewardRequestSchema = s.object({
  step: s.integer({ min: 0, max: 1e9 }),
  /** Default `train`. */
  purpose: s.optional(s.enum(['train', 'eval'])),
  items: s.array(rewardItemSchema, { max: trainingLimits.rewardItemsPerRequest }),
  /** `strict` (default): our verdict; `recipe`: kimina-client's rule (no Lean error, no sorries entry), as the published runs. */
  mode: s.optional(s.enum(verdictModes)),
});
export type RewardRequest = Infer<typeof rewardRequestSchema>;
export interface RewardResult {
  /** format ok AND Lean-valid: 1 or 0. */
  score: number;
  /** Lean-valid regardless of format: 1 or 0. */
  acc: number;
  formatError: FormatErrorName;
  /** The recipe's text for formatError (as in metric names), e.g. `No error.`. */
  formatErrorText: string;
  verdict: VerdictStatus | null;
  /** The checked code (trusted statement + proof), null when nothing could be extracted. */
  code: string | null;
  /** Fix-turn feedback for a Lean failure; null when valid or nothing could be extracted ('filtered proof.'). */
  feedback: string | null;
}
export interface RewardResponse {
  results: RewardResult[];
}

const metricKinds = ['train', 'eval'] as const;
/** `POST /v1/training/runs/:id/metrics` from the trainer. */
export const metricsReportSchema = s.object({
  step: s.integer({ min: 0, max: 1e9 }),
  kind: s.enum(metricKinds),
  metrics: s.record(s.number(), { maxKeys: trainingLimits.metricsPerReport, keyMax: 200 }),
});
export type MetricsReport = Infer<typeof metricsReportSchema>;

const step = s.integer({ min: 0, max: 1e9 });
/** `POST /v1/training/runs/:id/events` from the trainer. */
export const trainerEventSchema = s.variant('kind', {
  started: s.object({ kind: s.enum(['started']), step, maxSteps: s.integer({ min: 1, max: 1e9 }) }),
  checkpoint: s.object({
    kind: s.enum(['checkpoint']),
    step,
    path: s.string({ min: 1, max: trainingLimits.pathChars }),
  }),
  log: s.object({ kind: s.enum(['log']), message: text(trainingLimits.logChars) }),
  stopped: s.object({ kind: s.enum(['stopped']), step }),
  finished: s.object({
    kind: s.enum(['finished']),
    step,
    finalDir: s.nullable(s.string({ min: 1, max: trainingLimits.pathChars })),
  }),
});
export type TrainerEvent = Infer<typeof trainerEventSchema>;

export interface TrainingLogLine {
  at: string;
  message: string;
}

/** Server-sent events on `GET /v1/training/events` (SSE `event:` name = `type`). */
export type TrainingStreamEvent =
  | { type: 'run'; run: TrainingRun }
  | { type: 'metrics'; runId: string; step: number; kind: MetricKind; metrics: Record<string, number> }
  | { type: 'rollouts'; runId: string; rollouts: RolloutSample[] }
  | { type: 'log'; runId: string; line: TrainingLogLine };

export interface TrainingRunsResponse {
  runs: TrainingRun[];
}
export interface TrainingMetricsResponse {
  runId: string;
  steps: StepMetrics[];
}
export interface TrainingRolloutsResponse {
  runId: string;
  rollouts: RolloutSample[];
}
export interface TrainingLogResponse {
  runId: string;
  lines: TrainingLogLine[];
}

/** `POST /v1/training/runs/:id/export`: convert the final weights to ONNX for the in-process engine. */
export const exportModelRequestSchema = s.object({ quantize: s.optional(s.enum(['q4', 'none'])) }, { optional: true });
export interface ExportModelResponse {
  onnxDir: string;
}

export interface VerlExportResult {
  outDir: string;
  files: string[];
  submitCommand: string[];
  /** The verl release the job is written for, where that choice came from, and how its reward is called. */
  verl: { version: string; from: 'flag' | 'trainer environment' | 'default'; wiring: 'batch' | 'reward-loop' };
}
