// Verification messages: the kimina-lean-server compatible bodies and our stricter verdict.
import { s } from './schema';

/** A position as the Lean REPL reports it: 1-based line, 0-based column counted in Unicode codepoints. */
export interface ReplPos {
  line: number;
  column: number;
}

export interface ReplMessage {
  pos: ReplPos;
  endPos: ReplPos | null;
  severity: 'info' | 'warning' | 'error';
  data: string;
}

export interface ReplSorry {
  goal: string;
  proofState?: number | null;
  pos?: ReplPos;
  endPos?: ReplPos;
}

/** The REPL's answer to a command (env, messages, sorries; empty lists omitted). */
export interface CommandResponse {
  env?: number;
  messages?: ReplMessage[];
  sorries?: ReplSorry[];
  tactics?: unknown[];
  infotree?: unknown;
}

/** A REPL-level failure (`{"message": …}`), e.g. `Unknown environment.` */
export interface ReplErrorResponse {
  message: string;
}

const infotreeKinds = ['full', 'tactics', 'original', 'substantive'] as const;
export type InfotreeKind = (typeof infotreeKinds)[number];

/** Bounds on one verification request (a longer batch is split by the client). */
export const verifyLimits = {
  snippetChars: 1_000_000,
  snippetsPerRequest: 1000,
  idChars: 1000,
  timeoutS: 3600,
  theorems: 100,
} as const;

const code = s.string({
  max: verifyLimits.snippetChars,
  messages: { string_too_long: `Code should have at most ${verifyLimits.snippetChars} characters` },
});
const timeout = s.nullable(
  s.number({ min: 0, max: verifyLimits.timeoutS, messages: { float_type: 'Input should be a number of seconds' } }),
);
const infotree = s.nullable(s.enum(infotreeKinds));
const snippet = s.object(
  {
    id: s.string({
      min: 1,
      max: verifyLimits.idChars,
      messages: { string_type: 'id should be a non-empty string', string_too_short: 'id should be a non-empty string' },
    }),
    code,
  },
  { messages: { dict_type: 'Input should be an object with id and code' } },
);
const snippets = s.array(snippet, {
  min: 1,
  max: verifyLimits.snippetsPerRequest,
  uniqueBy: 'id',
  messages: {
    too_short: 'Value error, `snippets` must be non empty',
    value_error: 'Value error, `snippets` must have unique ids',
  },
});

/** `POST /api/check` (kimina-lean-server): unknown fields are ignored, as pydantic does. */
export const checkRequestSchema = s.object({
  snippets,
  timeout,
  debug: s.nullable(s.boolean()),
  reuse: s.nullable(s.boolean()),
  infotree,
});
export interface ReplDiagnostics {
  repl_uuid?: string;
  cpu_max?: number;
  memory_max?: number;
}
export interface ReplResponse {
  id: string;
  time: number;
  error?: string;
  response?: CommandResponse | ReplErrorResponse;
  diagnostics?: ReplDiagnostics;
}
export interface CheckResponse {
  results: ReplResponse[];
}

const verifyEntry = s.object(
  {
    custom_id: s.oneOf([s.string({ min: 1, max: verifyLimits.idChars }), s.integer()], {
      messages: { '*': 'custom_id should be a non-empty string or an integer' },
    }),
    proof: s.nullable(code),
    code: s.nullable(code),
  },
  {
    messages: { dict_type: 'Input should be an object with custom_id and proof or code' },
    refine: (e) =>
      e.proof == null && e.code == null
        ? [
            {
              loc: [],
              type: 'missing',
              msg: `Snippet ${JSON.stringify(e.custom_id).slice(0, 100)} has no proof/code content`,
            },
          ]
        : [],
  },
);
/** `POST /verify` (kimina-lean-server's backward-compatible route). */
export const verifyRequestSchema = s.object({
  codes: s.array(verifyEntry, { max: verifyLimits.snippetsPerRequest, uniqueBy: 'custom_id' }),
  timeout,
  infotree_type: infotree,
  disable_cache: s.nullable(s.boolean()),
});
export interface VerifyResponse {
  results: {
    custom_id: string | number;
    error?: string;
    response?: (CommandResponse | ReplErrorResponse) & { time: number };
  }[];
}

/**
 * Status names as kimina-client's `analyze()`, plus `rejected`: code refused before it reaches Lean
 * (untrusted-code filter) or a proof that depends on an axiom outside the allow-list.
 */
export type VerdictStatus =
  'valid' | 'sorry' | 'lean_error' | 'repl_error' | 'timeout_error' | 'server_error' | 'rejected';

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
  /** server_error only: Lean or its REPL could not be started at all (not installed, not executable). */
  leanMissing?: boolean;
}

/** `strict` (default): our verdict; `recipe`: kimina-client's rule on the same Lean answer (backend/lean/verdictModes.ts). */
export const verdictModes = ['strict', 'recipe'] as const;
export type VerdictMode = (typeof verdictModes)[number];

/** `POST /v1/check`: our richer API. `theorems`: declaration names whose axioms to audit (default: every theorem/lemma in the snippet). */
export const v1CheckRequestSchema = s.object({
  snippets,
  timeout,
  infotree,
  theorems: s.nullable(
    s.array(s.string({ min: 1, max: 1000, pattern: /^\S+$/, patternText: 'a declaration name (no spaces)' }), {
      max: verifyLimits.theorems,
      messages: { '*': 'theorems should be a list of declaration names' },
    }),
  ),
  mode: s.nullable(s.enum(verdictModes)),
});
export interface V1CheckResult extends Verdict {
  id: string;
  /** The rule that produced `status` and `reason`. */
  mode: VerdictMode;
  /** In `recipe` mode, when the strict verdict differs: what it was (e.g. `sorry` for an explicit `sorryAx`). */
  strictStatus?: VerdictStatus;
  response?: CommandResponse;
}
export interface V1CheckResponse {
  results: V1CheckResult[];
}

export interface HealthResponse {
  status: 'ok';
  version?: string;
  repls?: { total: number; busy: number; queued: number };
  /** The largest JSON request body the server reads (413 above it); clients size their batches below it. */
  bodyLimitBytes?: number;
}

/**
 * `GET /v1/load` (token required): what a client spreading checks over several servers balances on (the verl
 * reward module). Kept off the public `/health`, which says only status, version and REPL counts.
 */
export interface LoadResponse {
  /** Checks admitted now (running or waiting in the admission queue). */
  inFlight: number;
  /** Checks the server admits at once; more is answered 429. */
  capacity: number;
  /** Checks waiting for a REPL. */
  waiting: number;
  repls: { total: number; busy: number };
}

/** An LSP position: 0-based line, 0-based character in UTF-16 code units. */
export interface LspPosition {
  line: number;
  character: number;
}

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
