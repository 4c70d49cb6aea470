// What the rest of the backend needs from the Lean verifier: one snippet in, a strict verdict out.
import type { CommandResponse, InfotreeKind, Verdict } from '../protocol';

export interface CheckOptions {
  /** Seconds for the body (the header import gets its own budget). */
  timeout?: number;
  infotree?: InfotreeKind | null;
  /** Declaration names whose axioms to audit; default: every theorem/lemma/example in the snippet. */
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
  /** Which REPL ran it and how much memory its process tree held afterwards (for `debug`). */
  run?: { replId?: string; memoryBytes?: number };
}

export interface LeanVerifier {
  check(code: string, options?: CheckOptions): Promise<CheckOutcome>;
  close(): Promise<void>;
}
