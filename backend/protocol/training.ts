// Training messages: runs, their controls, per-step metrics, sampled rollouts, the reward service, SSE events.
import type { ChatMessage, FormatErrorName } from './prove';
import type { VerdictStatus } from './verify';

/**
 * preparing: estimating win rates to filter the prompt set; queued: waiting for its GPUs (or for them to go
 * idle); running includes restarting after a crash.
 */
export type TrainingRunState = 'preparing' | 'queued' | 'running' | 'pausing' | 'paused' | 'completed' | 'failed' | 'cancelled';

export type TrainingPresetName = 'tiny-cpu' | 'single-gpu-lora' | 'single-gpu-full' | 'recipe-8gpu';

/** Only start when the GPUs are idle (nobody else computing on them), or at once. */
export type TrainingSchedule = 'now' | 'when-idle';

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

/** One training prompt: the Kimina prompt messages plus the trusted statement the reward checks against. */
export interface TrainingPrompt {
  id: string;
  prompt: ChatMessage[];
  formalStatement: string;
  /** Where it came from, e.g. `Foo.lean:12 bar` or `attempt 42`. */
  source?: string;
  /** The current model's estimated win rate, when measured. */
  winRate?: number;
}

export interface StartTrainingRequest {
  name?: string;
  preset: TrainingPresetName;
  /** Hugging Face model id or local folder with safetensors weights. */
  model: string;
  /** Lean workspace to harvest personal proofs from (files with `sorry`, proven theorems, failed attempts). */
  workspace?: string;
  /** Prompts given directly (tests, scripts); used together with any harvested ones. */
  prompts?: TrainingPrompt[];
  heldOut?: TrainingPrompt[];
  /** GPU ids, e.g. "0" or "0,1"; "cpu" for the CPU. Default: every visible GPU, else "cpu". */
  gpus?: string;
  schedule?: TrainingSchedule;
  overrides?: Partial<TrainingHyperparameters>;
  /**
   * The recipe's prompt-set filter: sample `samples` answers per training prompt with the current prover model,
   * drop prompts won more often than `maxWinRate` (default 0.5), repeat never-won ones `hardCopies` times (default 2).
   */
  winRate?: { samples: number; maxWinRate?: number; hardCopies?: number };
}

export interface TrainingEvalSummary { step: number; metrics: Record<string, number> }

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
export interface StepMetrics { step: number; kind: MetricKind; metrics: Record<string, number> }

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
export interface GpuReport { available: boolean; gpus: GpuStatus[]; note?: string }

/** `POST /v1/training/runs/:id/reward` (the trainer's reward service). */
export interface RewardItem {
  promptId: string;
  /** 1 for a first answer, 2 for an answer to the error-fix prompt. */
  turn: number;
  formalStatement: string;
  /** Earlier assistant answers in the conversation (turn 2: the turn-1 answer); each must pass the format checks too. */
  previous: string[];
  response: string;
}
export interface RewardRequest {
  step: number; purpose: 'train' | 'eval'; items: RewardItem[];
  /** `strict` (default): our verdict; `recipe`: kimina-client's rule (no Lean error, no sorries entry), as the published runs. */
  mode?: 'strict' | 'recipe';
}
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
export interface RewardResponse { results: RewardResult[] }

/** `POST /v1/training/reward`: the same scoring without a run (verl's reward module on a Ray cluster). */
export type StatelessRewardRequest = RewardRequest;

/** `POST /v1/training/runs/:id/metrics` from the trainer. */
export interface MetricsReport { step: number; kind: MetricKind; metrics: Record<string, number> }

/** `POST /v1/training/runs/:id/events` from the trainer. */
export type TrainerEvent =
  | { kind: 'started'; step: number; maxSteps: number }
  | { kind: 'checkpoint'; step: number; path: string }
  | { kind: 'log'; message: string }
  | { kind: 'stopped'; step: number }
  | { kind: 'finished'; step: number; finalDir: string | null };

export interface TrainingLogLine { at: string; message: string }

/** Server-sent events on `GET /v1/training/events` (SSE `event:` name = `type`). */
export type TrainingStreamEvent =
  | { type: 'run'; run: TrainingRun }
  | { type: 'metrics'; runId: string; step: number; kind: MetricKind; metrics: Record<string, number> }
  | { type: 'rollouts'; runId: string; rollouts: RolloutSample[] }
  | { type: 'log'; runId: string; line: TrainingLogLine };

export interface TrainingRunsResponse { runs: TrainingRun[] }
export interface TrainingMetricsResponse { runId: string; steps: StepMetrics[] }
export interface TrainingRolloutsResponse { runId: string; rollouts: RolloutSample[] }
export interface TrainingLogResponse { runId: string; lines: TrainingLogLine[] }

/** `POST /v1/training/runs/:id/export`: convert the final weights to ONNX for the in-process engine. */
export interface ExportModelRequest { quantize?: 'q4' | 'none' }
export interface ExportModelResponse { onnxDir: string }

export interface VerlExportRequest {
  outDir: string;
  /** URL the cluster's workers use to reach this backend's reward service. */
  rewardUrl: string;
  nodes?: number;
  gpusPerNode?: number;
}
export interface VerlExportResult { outDir: string; files: string[]; submitCommand: string[] }
