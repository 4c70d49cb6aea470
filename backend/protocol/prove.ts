// Proving messages: `POST /v1/prove`, its server-sent events, and the LSP `kimina/prove` request.
import type { Verdict } from './verify';

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

export interface FormatResult { ok: boolean; error: FormatErrorName; message?: string }

export interface ChatMessage { role: 'system' | 'user' | 'assistant'; content: string }

export interface ProveRequest {
  /** Optional caller-chosen id (letters, digits, `_.:-`), so a JSON request can be cancelled with `DELETE /v1/prove/:id`. */
  id?: string;
  /** The Lean file text, or a header plus the theorem. */
  code: string;
  /** Name of the theorem to prove when `code` holds several declarations. */
  theorem?: string;
  /** Informal problem text; defaults to the theorem's doc comment. */
  informal?: string;
  samples?: number;
  fixTurns?: number;
  temperature?: number;
  topP?: number;
  maxTokens?: number;
}

export interface Attempt {
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
  /** The error-fix message built from this attempt's verdict (sent as the next turn when one follows). */
  feedback?: string | null;
  /**
   * Why no fix turn followed this attempt, when none did: the recipe's filter names, or `proved` (another
   * sample was verified) and `cancelled` (the request or its check was stopped).
   */
  fixSkipped?: 'valid' | 'filtered' | 'feedback_too_long' | 'exceed_max_turn' | 'max_prompt_token_len_exceeded' | 'proved' | 'cancelled';
}

export type ProveStatus = 'proved' | 'not_proved' | 'cancelled';

export interface ProveResult {
  id: string;
  status: ProveStatus;
  /** The verified code (statement and proof) when proved. */
  proof: string | null;
  /** The proof text after `:= by`, ready to splice into the user's file. */
  tactics?: string | null;
  attempts: Attempt[];
}

/** Events streamed while proving (SSE `event:` names = `type`). */
export type ProveEvent =
  | { type: 'started'; id: string; samples: number; fixTurns: number; theorem?: string; statement?: string }
  | { type: 'think'; id: string; sample: number; turn: number; delta: string }
  | { type: 'text'; id: string; sample: number; turn: number; delta: string }
  | { type: 'attempt'; id: string; attempt: Attempt }
  | { type: 'verdict'; id: string; sample: number; turn: number; verdict: Verdict }
  /**
   * A sample's turn was stopped before Lean judged it: `proved` when another sample's proof (bySample)
   * was verified first and the rest were cancelled, `cancelled` when the request was cancelled.
   */
  | { type: 'stopped'; id: string; sample: number; turn: number; reason: 'proved' | 'cancelled'; bySample?: number }
  | { type: 'progress'; id: string; tokens: number; tokensPerSecond: number }
  | { type: 'error'; id: string; message: string }
  | { type: 'done'; id: string; result: ProveResult };
