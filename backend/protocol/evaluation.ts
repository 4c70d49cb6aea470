// Evaluation messages: benchmark problems, per-attempt records, metrics (pass@k, best@k), reports and comparisons.
// Shared by `kimina eval`, the HTTP face and the Training Monitor.
import type { FormatErrorName } from './prove';
import type { VerdictMode, VerdictStatus } from './verify';

/** One benchmark problem: a Lean statement (header included) ending in `:= by sorry` or `:= by`. */
export interface BenchmarkProblem {
  /** Unique within the benchmark: the theorem name for miniF2F. */
  id: string;
  /** `test`, `valid`, or null when the benchmark has no splits. */
  split: string | null;
  /** Competition family from the name: AIME, AMC, IMO, MATHD, ALGEBRA, NUMBER THEORY, INDUCTION or OTHER. */
  source: string;
  /** The Lean text the prover gets (header and theorem). */
  code: string;
  /** Name of the theorem to prove inside `code`. */
  theorem: string;
  informal?: string;
  /** Where it was read from (file path, or `file.jsonl:line`). */
  origin: string;
}

/** What a run measures; fixed when the run is created, so a resumed run keeps its settings. */
export interface EvalConfig {
  /** The folder or JSONL the problems came from. */
  benchmark: string;
  split: string | null;
  model: string;
  engine: string;
  /** Samples per problem (n, the largest k). */
  samples: number;
  /** 0: first answers only; 1: one error-fix turn for each failed sample. */
  fixTurns: number;
  temperature: number;
  topP: number;
  maxTokens: number;
  /** Lean timeout per check, seconds. */
  leanTimeout: number;
  /** The verdict mode of the headline figures (default: the verifier's own). Every mode is always measured. */
  verdictMode?: VerdictMode;
  /** The benchmark's name (e.g. AI-MO/minif2f_test), when known. */
  benchmarkName?: string;
  /** The Lean toolchain the proofs were checked on, when known. */
  lean?: string | null;
  /** Goal states (infotree) in fix-turn feedback; the recipe had none. */
  goals?: boolean;
}

/** `filtered`: nothing could be extracted, so nothing reached Lean. */
type EvalVerdictStatus = VerdictStatus | 'filtered';

/** One generated answer and its check, as stored per attempt. */
export interface EvalAttemptRecord {
  problem: string;
  sample: number;
  /** 1 for the first answer, 2 for the error-fix turn. */
  turn: number;
  formatError: FormatErrorName;
  status: EvalVerdictStatus;
  /** Lean accepted the proof (format not required, like verl's `acc`). */
  valid: boolean;
  tokens: number;
  chars: number;
  generateMs: number;
  verifyMs: number;
  /** Seconds Lean spent on the body, when Lean ran. */
  leanSeconds: number | null;
  /** The checked code (statement plus proof), when extraction succeeded. */
  code: string | null;
  /**
   * Each verdict mode's judgement of the same Lean answer (backend/lean/verdictModes.ts). A mode may be absent in
   * runs stored before it existed; `valid` above is the default mode's judgement, always present.
   */
  modes?: Partial<Record<VerdictMode, ModeJudgement>>;
}

/** One verdict mode's judgement of one answer. */
export interface ModeJudgement {
  /** null: this mode cannot tell (Lean never ran the code: our filter refused it before Lean). */
  valid: boolean | null;
  /** Why the default mode's verdict differs, when it does (or why Lean never ran it). */
  reason: string | null;
}

/** The headline figures under one verdict mode. */
export interface ModeMetrics {
  passAtK: KValue[];
  passAtKWithFix: KValue[] | null;
  solved: number;
  solvedWithFix: number | null;
  /** Answers this mode cannot judge (Lean never ran them), counted as not valid. */
  unknown: number;
}

export interface KValue {
  k: number;
  value: number;
}

/** pass@k and best@k curves plus the throughput and format figures of one run. */
export interface EvalMetrics {
  problems: number;
  /** Samples per problem actually present (the minimum over problems). */
  samples: number;
  /** Unbiased pass@k (Chen et al.) over first answers, k = 1..samples. */
  passAtK: KValue[];
  /** A sample counts when its first answer or its fix turn is valid (budget up to 2k generations). */
  passAtKWithFix: KValue[] | null;
  /** Equal budget: k generations spent as k/2 first answers plus k/2 fixes (even k only). */
  passAtKFixEqualBudget: KValue[] | null;
  /** verl's bootstrapped best@n (n = 2, 4, …, N and N; 1000 resamples, seed 42), first answers. */
  bestAtK: KValue[];
  /** The same over verl's `acc_turn_2` (fix-turn value replaces a failed first answer). */
  bestAtKWithFix: KValue[] | null;
  /** Share of problems with at least one valid sample. */
  solved: number;
  solvedWithFix: number | null;
  /** Share of answers per format error (NONE included), first turn and fix turn separately. */
  formatErrors: { turn1: Record<string, number>; turn2: Record<string, number> | null };
  /** Share of answers per verdict status. */
  verdicts: Record<string, number>;
  meanResponseTokens: number;
  meanResponseChars: number;
  /** Generated tokens over the run's wall time (all concurrent work together). */
  tokensPerSecond: number | null;
  /** Mean over answers of tokens over that answer's generation time. */
  tokensPerSecondPerSequence: number | null;
  /** Seconds Lean spent per check (mean and median), and the checker's wall time per check. */
  leanSecondsPerCheck: { mean: number; median: number } | null;
  verifySecondsPerCheck: number | null;
  /** Solved problems per source, first answers and with the fix turn. */
  bySource: { source: string; problems: number; solved: number; solvedWithFix: number | null }[];
  /**
   * The same figures under each verdict mode its answers were judged by (the default mode's equal the ones above).
   * A mode is absent when no answer of the run has its judgement (runs stored before it existed).
   */
  modes?: Partial<Record<VerdictMode, ModeMetrics>>;
}

/** An answer only one verdict mode accepts (not the default mode), and why the default mode's verdict refused it. */
export interface ModeOnlyProof {
  problem: string;
  sample: number;
  turn: number;
  status: string;
  reason: string;
  code: string | null;
}

/** Whether the headline figure may be set beside the published Kimina-Prover-RL table, and why (not). */
export interface Comparability {
  comparable: boolean;
  why: string;
}

export interface ProblemOutcome {
  id: string;
  source: string;
  split: string | null;
  samples: number;
  /** Valid first answers. */
  correct: number;
  /** Samples valid after at most one fix turn. */
  correctWithFix: number | null;
  /** One verified proof, when there is one. */
  proof: string | null;
}

export interface EvalRunSummary {
  name: string;
  config: EvalConfig;
  createdAt: string;
  /** Problems in the run and how many have all their samples. */
  problems: number;
  complete: number;
  wallSeconds: number;
}

export interface EvalReport {
  run: EvalRunSummary;
  metrics: EvalMetrics;
  problems: ProblemOutcome[];
  /** Per mode other than the default: the answers it accepts and the default mode refuses. */
  onlyAcceptedBy?: Partial<Record<VerdictMode, ModeOnlyProof[]>>;
  comparability?: Comparability;
}

export interface ProblemDifference {
  id: string;
  source: string;
  a: { correct: number; samples: number };
  b: { correct: number; samples: number };
  /** pass@k(b) − pass@k(a) at the common k. */
  delta: number;
}

/** Two runs on the same problems. */
export interface EvalComparison {
  a: EvalRunSummary;
  b: EvalRunSummary;
  /** The k both runs can estimate (the smaller sample count). */
  k: number;
  common: number;
  passAtK: { k: number; a: number; b: number }[];
  onlyA: string[];
  onlyB: string[];
  both: number;
  neither: number;
  /** Problems whose pass@k changed, largest change first. */
  changed: ProblemDifference[];
}

/** Progress of a running evaluation (CLI bar, HTTP SSE, Training Monitor). */
export interface EvalProgress {
  run: string;
  done: number;
  total: number;
  solved: number;
  /** Seconds left, estimated from the pace so far; null before the first problem ends. */
  etaSeconds: number | null;
}
