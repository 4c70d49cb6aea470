// What the rest of the backend needs from the Lean verifier: one snippet in, a strict verdict out.
import type { CommandResponse, InfotreeKind, ReplPos, Verdict } from '../protocol';

export interface CheckOptions {
  /** Seconds for the body (the header import gets its own budget). */
  timeout?: number;
  infotree?: InfotreeKind | null;
  /** Full names of the trusted declarations: always audited, besides every declaration the snippet adds. */
  theorems?: string[];
  signal?: AbortSignal;
  /** Who asks, for fair sharing (lean/admission.ts); checks without one share the client `local`. */
  client?: string;
}

export interface CheckOutcome {
  verdict: Verdict;
  /** The REPL's raw answer (positions already relative to the full snippet), when Lean answered. */
  response?: CommandResponse;
  /** The REPL's own error text (`{"message": …}`), for repl_error. */
  replMessage?: string;
  /** Where the declaration stands whose audit found `sorryAx` when Lean gave no sorry warning (e.g. `warn.sorry false`). */
  sorryAt?: ReplPos;
  /** Which REPL ran it and how much memory its process tree held afterwards (for `debug`). */
  run?: { replId?: string; memoryBytes?: number };
  /** Lines above the checked text the infotree's positions leave out (a file session's candidate: its prefix). */
  infotreeLineOffset?: number;
}

export interface LeanVerifier {
  check(code: string, options?: CheckOptions): Promise<CheckOutcome>;
  close(): Promise<void>;
}
