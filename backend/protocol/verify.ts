// Verification messages: the kimina-lean-server compatible bodies and our stricter verdict.

/** A position as the Lean REPL reports it: 1-based line, 0-based column counted in Unicode codepoints. */
export interface ReplPos { line: number; column: number }

export interface ReplMessage {
  pos: ReplPos;
  endPos: ReplPos | null;
  severity: 'info' | 'warning' | 'error';
  data: string;
}

export interface ReplSorry { goal: string; proofState?: number | null; pos?: ReplPos; endPos?: ReplPos }

/** The REPL's answer to a command (env, messages, sorries; empty lists omitted). */
export interface CommandResponse {
  env?: number;
  messages?: ReplMessage[];
  sorries?: ReplSorry[];
  tactics?: unknown[];
  infotree?: unknown;
}

/** A REPL-level failure (`{"message": …}`), e.g. `Unknown environment.` */
export interface ReplErrorResponse { message: string }

export type InfotreeKind = 'full' | 'tactics' | 'original' | 'substantive';

/** `POST /api/check` (kimina-lean-server). */
export interface Snippet { id: string; code: string }
export interface CheckRequest {
  snippets: Snippet[];
  timeout?: number;
  debug?: boolean;
  reuse?: boolean;
  infotree?: InfotreeKind | null;
}
export interface ReplDiagnostics { repl_uuid?: string; cpu_max?: number; memory_max?: number }
export interface ReplResponse {
  id: string;
  time: number;
  error?: string;
  response?: CommandResponse | ReplErrorResponse;
  diagnostics?: ReplDiagnostics;
}
export interface CheckResponse { results: ReplResponse[] }

/** `POST /verify` (kimina-lean-server's backward-compatible route). */
export interface VerifyRequest {
  codes: { custom_id: string | number; proof?: string; code?: string }[];
  timeout?: number;
  infotree_type?: InfotreeKind | null;
  disable_cache?: boolean;
}
export interface VerifyResponse {
  results: { custom_id: string | number; error?: string; response?: (CommandResponse | ReplErrorResponse) & { time: number } }[];
}

/**
 * Status names as kimina-client's `analyze()`, plus `rejected`: code refused before it reaches Lean
 * (untrusted-code filter) or a proof that depends on an axiom outside the allow-list.
 */
export type VerdictStatus = 'valid' | 'sorry' | 'lean_error' | 'repl_error' | 'timeout_error' | 'server_error' | 'rejected';

/** Our strict verdict: valid only with no errors, no sorry (also admit/sorryAx) and only allowed axioms. */
export interface Verdict {
  status: VerdictStatus;
  /** One sentence a person can read: why this status. */
  reason: string;
  /** Axioms the checked declarations depend on, when they were audited. */
  axioms?: string[];
  /** Axioms outside the allow-list. */
  forbiddenAxioms?: string[];
  /** Per audited declaration (full name): the axioms `#print axioms` listed. */
  axiomsByDeclaration?: Record<string, string[]>;
  /** Messages with positions relative to the full snippet the caller sent. */
  messages: ReplMessage[];
  sorries: ReplSorry[];
  /** Seconds spent in Lean on the body (header import excluded). */
  time: number;
}

/** `POST /v1/check`: our richer API. */
export interface V1CheckRequest {
  snippets: Snippet[];
  timeout?: number;
  infotree?: InfotreeKind | null;
  /** Declaration names whose axioms to audit; default: every theorem/lemma in the snippet. */
  theorems?: string[];
}
export interface V1CheckResult extends Verdict { id: string; response?: CommandResponse }
export interface V1CheckResponse { results: V1CheckResult[] }

export interface HealthResponse { status: 'ok'; version?: string; repls?: { total: number; busy: number; queued: number } }

/** An LSP position: 0-based line, 0-based character in UTF-16 code units. */
export interface LspPosition { line: number; character: number }

/** Converts a codepoint column on `lineText` (as Lean counts) to UTF-16 code units (as LSP counts). */
export function codepointColumnToUtf16(lineText: string, column: number): number {
  let units = 0;
  let seen = 0;
  for (const ch of lineText) {
    if (seen >= column) break;
    units += ch.length;
    seen++;
  }
  return units + Math.max(0, column - seen);
}

/** Converts a REPL position (1-based line, codepoint column) in `text` to an LSP position. */
export function replPosToLsp(text: string, pos: ReplPos): LspPosition {
  const lines = text.split('\n');
  const line = Math.max(0, pos.line - 1);
  return { line, character: codepointColumnToUtf16(lines[line] ?? '', pos.column) };
}
