// Proving messages: `POST /v1/prove`, its server-sent events, and the LSP `kimina/prove` request.
import { s, type Infer } from './schema';
import type { Verdict } from './verify';
import type { ErrorKind } from './errors';

/** The format reward's error names, in the recipe's order; NONE when every check passes. */
export type FormatErrorName =
  | 'NONE'
  | 'NO_VALID_LEAN4_CODE_BLOCK'
  | 'NO_VALID_THINK_BLOCK'
  | 'INVALID_THINK_BLOCK_COUNT'
  | 'INVALID_LEAN4_CODE_BLOCK_COUNT'
  | 'GENERATION_REPEATS'
  | 'INSUFFICIENT_TACTICS_BLOCKS'
  | 'TACTIC_CODE_TOO_MANY_LINES'
  | 'TACTIC_BLOCK_FORMATTING_ERROR'
  | 'TACTICS_LEAN4_NOT_MATCH'
  | 'LEAN4_CODE_NOT_START_WITH_STATEMENT';

/** Each format error in words, for the people who read them in the editor (kimina-format.md §4 has the rules). */
export const formatWords: Record<FormatErrorName, string> = {
  NONE: 'the answer follows the Kimina format',
  NO_VALID_LEAN4_CODE_BLOCK: 'the answer has no complete lean4 code block with the proof',
  NO_VALID_THINK_BLOCK: 'the answer has no complete thinking block (<think> … </think>)',
  INVALID_THINK_BLOCK_COUNT: 'the answer has more than one thinking block',
  INVALID_LEAN4_CODE_BLOCK_COUNT: 'the answer has more than one final lean4 code block',
  GENERATION_REPEATS: 'the model repeated the same lines over and over while thinking',
  INSUFFICIENT_TACTICS_BLOCKS: 'the thinking sketches fewer than two tactics blocks',
  TACTIC_CODE_TOO_MANY_LINES: 'a tactics sketch in the thinking is longer than the final proof',
  TACTIC_BLOCK_FORMATTING_ERROR: 'a tactics sketch in the thinking is not closed properly',
  TACTICS_LEAN4_NOT_MATCH: 'the final proof does not match the tactics sketched while thinking',
  LEAN4_CODE_NOT_START_WITH_STATEMENT: "the final code block does not start with the theorem's statement",
};

export interface FormatResult {
  ok: boolean;
  error: FormatErrorName;
  message?: string;
  /** Not checked: the answer was stopped before it ended (cancelled, or another sample was verified first). */
  stopped?: boolean;
}

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** Bounds on a prove request's settings (the recipe's defaults lie inside). */
export const proveLimits = {
  samples: [1, 64],
  fixTurns: [0, 4],
  temperature: [0, 2],
  topP: [0, 1],
  maxTokens: [1, 131072],
  codeChars: 1_000_000,
} as const;

const [samplesMin, samplesMax] = proveLimits.samples;
/**
 * `POST /v1/prove` (and `kimina prove`): unknown fields are refused, `null` counts as absent.
 * id: optional caller-chosen id, so a JSON request can be cancelled with `DELETE /v1/prove/:id`;
 * code: the Lean file text, or a header plus the theorem; theorem: which one when `code` holds several;
 * informal: the problem in words (default: the theorem's doc comment);
 * repair: the theorem's own proof in `code` is broken: run the recipe's fix turn seeded with it (Lean's errors on
 * the user's proof) instead of proving from the statement (docs/prover.md, "Repairing a proof").
 */
export const proveRequestSchema = s.object(
  {
    id: s.nullable(
      s.string({ max: 100, pattern: /^[A-Za-z0-9_.:-]{1,100}$/, patternText: '1-100 letters, digits or _.:-' }),
    ),
    code: s.string({ notBlank: true, max: proveLimits.codeChars }),
    theorem: s.nullable(s.string({ max: 1000 })),
    informal: s.nullable(s.string({ max: 100_000 })),
    samples: s.nullable(s.integer({ min: samplesMin, max: samplesMax })),
    fixTurns: s.nullable(s.integer({ min: proveLimits.fixTurns[0], max: proveLimits.fixTurns[1] })),
    temperature: s.nullable(s.number({ min: proveLimits.temperature[0], max: proveLimits.temperature[1] })),
    topP: s.nullable(s.number({ above: proveLimits.topP[0], max: proveLimits.topP[1] })),
    maxTokens: s.nullable(s.integer({ min: proveLimits.maxTokens[0], max: proveLimits.maxTokens[1] })),
    repair: s.nullable(s.boolean()),
  },
  { extra: 'forbid' },
);
/** What a client may send (null allowed where a field may be absent). */
export type ProveRequestBody = Infer<typeof proveRequestSchema>;
/** A checked request with absent fields left out (`parseProveRequest` in backend/prover/request.ts). */
export type ProveRequest = { [K in keyof ProveRequestBody]?: Exclude<ProveRequestBody[K], null> } & { code: string };

/**
 * Where an in-process prove request's code comes from (not on the wire: the editor face derives it from a `file:`
 * document URI, an agent job from its file). `file`: the user's file, checked in its own Lean project
 * (App.verifierForFile) with the file's prefix elaborated once; `untrustedPrefix`: an agent edited the file since its
 * last commit, so its text is not the user's code: no trusted session, the whole snippet is checked strictly.
 */
export interface ProveOrigin {
  file?: string;
  untrustedPrefix?: boolean;
}

export interface Attempt {
  /** A repair's turn 1: the user's own proof (not a model answer), with Lean's verdict on it. */
  user?: boolean;
  sample: number;
  /** 1 for the first answer, 2 for the error-fix turn. */
  turn: number;
  response: string;
  think: string;
  /** The checked code: trusted statement plus the model's proof, or null when nothing could be extracted. */
  code: string | null;
  format: FormatResult;
  verdict: Verdict | null;
  tokens?: number;
  /** Milliseconds: generation and Lean check. */
  timings?: { generateMs: number; verifyMs: number };
  /** Why generation stopped: end of answer, token limit, or cancellation. */
  finishReason?: 'stop' | 'length' | 'cancelled';
  /**
   * The goals Lean had just before the first error (from the REPL's infotree, asked for when a fix turn may
   * follow); `line` is that error's line in `code` (1-based).
   */
  errorGoal?: { line: number; goals: string[] };
  /**
   * Present when the answer was cut short (finishReason 'length'): why, in words — the token limit, or the model
   * server's context filling up. A cut answer is never shown as a whole one.
   */
  cut?: string;
  /** The error-fix message built from this attempt's verdict (sent as the next turn when one follows). */
  feedback?: string | null;
  /**
   * Why no fix turn followed this attempt, when none did: the recipe's filter names, or `proved` (another
   * sample was verified) and `cancelled` (the request or its check was stopped).
   */
  fixSkipped?:
    | 'valid'
    | 'filtered'
    | 'feedback_too_long'
    | 'exceed_max_turn'
    | 'max_prompt_token_len_exceeded'
    | 'proved'
    | 'cancelled'
    | 'verifier_failed';
}

export type ProveStatus = 'proved' | 'not_proved' | 'cancelled';

export interface ProveResult {
  id: string;
  status: ProveStatus;
  /** The verified code (statement and proof) when proved. */
  proof: string | null;
  /**
   * The proof text after `:= by` when proved: exactly the body the editor's splice rule would write (CR and CRLF
   * stored as LF, cut before the first command that follows the proof), and `proof` is the statement with this
   * body, as Lean accepted it. When the verified answer held more (a trailing `variable`, `include`, `open`,
   * `namespace` …) and the body alone does not check, the result is `not_proved` and `problem` says why.
   */
  tactics?: string | null;
  /** Why a verified answer was not published as proved (see `tactics`). */
  problem?: string;
  attempts: Attempt[];
  /**
   * The Lean verifier itself failed (it could not start, or crashed): the proof stopped at once, since no
   * answer could be judged, and no fix turn was spent on it. `leanMissing`: Lean could not be started at all.
   */
  verifierFailure?: { reason: string; leanMissing: boolean };
  /** A repair request's seed: Lean's verdict on the user's proof and the fix turn sent, or why none was. */
  repair?: RepairInfo;
}

export interface RepairInfo {
  /** Lean's verdict on the user's proof as written. */
  before: Verdict;
  /** The fix turn's user message (Lean's errors and deprecation warnings), null when none was sent. */
  feedback: string | null;
  /** The conversation every sample answered: [system, user, assistant(the user's proof), user(feedback)]. */
  conversation: ChatMessage[] | null;
  /** Lean messages the feedback carries (errors first, then deprecation warnings naming a replacement). */
  messagesShown: number;
  /** Why nothing was sent to the model (the proof already checks, the prompt is too long, …), when so. */
  skipped?: string;
  /** Rounds of fresh samples of the one fix turn that ran. */
  rounds: number;
}

/**
 * How a proof's samples decode: in waves of `rows` at once, from the engine's calibrated cost model of the
 * device, the kimina.rowsAtOnce setting, or (an engine without a schedule) all of a round at once.
 */
export interface ProveSchedule {
  /** The engine's name and, when it says, how it runs (decoding path, cache, threads). */
  engine: string;
  engineDetail?: string;
  samples: number;
  rows: number;
  /** Waves of the first round: ceil(samples / rows). */
  waves: number;
  from: 'calibration' | 'setting' | 'engine';
  /** The calibrated step cost: a + m·(rows − 1) + b·cached, in ms (b per cached token); `now`: measured for this proof. */
  calibration?: { a: number; m: number; b: number; now: boolean };
  /** Expected seconds to the first verified proof at these rows, over the recipe's answers (the cost model). */
  expectedFirstProofSeconds?: number;
  /** The longest the decoding can take under the cost model: every answer of every turn at the token limit. */
  worstCaseSeconds?: number;
  /** All of it in one line, for logs and terminals. */
  text: string;
}

/** The wave a progress event belongs to (1-based) and how many rows decode in it. */
export interface ProveWave {
  index: number;
  of: number;
  rows: number;
}

/** Events streamed while proving (SSE `event:` names = `type`). */
export type ProveEvent =
  | {
      type: 'started';
      id: string;
      samples: number;
      fixTurns: number;
      theorem?: string;
      statement?: string;
      /** How the samples decode (waves of rows at once) and the cost model's estimate. */
      schedule?: ProveSchedule;
    }
  | { type: 'think'; id: string; sample: number; turn: number; delta: string }
  | { type: 'text'; id: string; sample: number; turn: number; delta: string }
  | { type: 'attempt'; id: string; attempt: Attempt }
  | { type: 'verdict'; id: string; sample: number; turn: number; verdict: Verdict }
  /**
   * A sample's turn was stopped before Lean judged it: `proved` when another sample's proof (bySample)
   * was verified first and the rest were cancelled, `cancelled` when the request was cancelled.
   */
  | { type: 'stopped'; id: string; sample: number; turn: number; reason: 'proved' | 'cancelled'; bySample?: number }
  | { type: 'progress'; id: string; tokens: number; tokensPerSecond: number; wave?: ProveWave }
  /** The proof failed as a whole; `kind` says what is missing (a model, Lean), for the caller's remedy. */
  | { type: 'error'; id: string; message: string; kind?: ErrorKind }
  | { type: 'done'; id: string; result: ProveResult };
