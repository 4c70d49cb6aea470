// The tools an agent calls (MCP: `kimina mcp` over stdio, `/mcp` over HTTP; VS Code's language-model tools),
// declared once: name, what it does, the schema of its arguments and the type of its answer. The names and
// the answers are a published contract (docs/agents.md). The MCP face (backend/api/mcpServer.ts) lists exactly
// these and checks every call's arguments against the schema before a handler runs.
import { s, type Infer, type ObjectNode, type Schema } from './schema';
import type { LspPosition, VerdictStatus } from './verify';

const agentLimits = {
  /** Lean text given inline (`check {code}`, `reference`). */
  codeChars: 1_000_000,
  pathChars: 4096,
  nameChars: 1000,
  idChars: 100,
};

const path = s.string({ min: 1, max: agentLimits.pathChars, notBlank: true });
const theorem = s.string({ min: 1, max: agentLimits.nameChars, notBlank: true });
const line = s.integer({ min: 1, max: 10_000_000 });
const jobId = s.string({ min: 1, max: agentLimits.idChars, notBlank: true });

const exactlyOne =
  (...keys: string[]) =>
  (v: Record<string, unknown>) =>
    keys.filter((k) => v[k] !== undefined).length === 1
      ? []
      : [{ loc: [], msg: `give exactly one of ${keys.map((k) => `'${k}'`).join(', ')}` }];

export interface AgentToolSpec {
  title: string;
  description: string;
  input: ObjectNode & Schema<unknown>;
  /** Reads only (MCP's readOnlyHint); `apply` is the one tool that writes the user's files. */
  readOnly: boolean;
}

export const agentTools = {
  check: {
    title: 'Check Lean (strict verdict)',
    description:
      "Lean's strict verdict on each declaration: valid only when Lean accepted exactly this text with no error, no sorry in any spelling, only standard axioms, no native_decide and no hidden commands. Give `code` (untrusted text) or `path` (a file of the project: text that differs from the file's last git commit is checked as untrusted, and each statement is compared with the committed one). `reference` (Lean text) names the statements to hold the declarations to. Call it after every edit and before saying a proof is done.",
    input: s.object(
      {
        code: s.optional(s.string({ max: agentLimits.codeChars })),
        path: s.optional(path),
        reference: s.optional(s.string({ min: 1, max: agentLimits.codeChars })),
      },
      { extra: 'forbid', refine: exactlyOne('code', 'path') },
    ),
    readOnly: true,
  },
  sorries: {
    title: 'List sorries',
    description:
      'The proof targets in a Lean file or a folder of them: each declaration holding a sorry, each sorry with its line, and the goal Lean states there where Lean gives one.',
    input: s.object({ path }, { extra: 'forbid' }),
    readOnly: true,
  },
  prove: {
    title: 'Prove with Kimina (starts a job)',
    description:
      'Starts a proof job on a theorem of a file (`theorem`: its name; or `line`: a line of the declaration, or a line holding a sorry to prove that goal). Answers at once with { jobId }; poll `job`. Proving takes minutes. The file is not written: a proved job holds the verified body and the edit; `apply` writes it.',
    input: s.object(
      { path, theorem: s.optional(theorem), line: s.optional(line) },
      {
        extra: 'forbid',
        refine: exactlyOne('theorem', 'line'),
      },
    ),
    readOnly: true,
  },
  repair: {
    title: 'Repair a broken proof (starts a job)',
    description:
      "Starts a job that repairs a proof Lean now rejects (after a toolchain or Mathlib bump), from the user's proof and Lean's errors. `theorem` omitted: the first declaration Lean rejects. Answers at once with { jobId }.",
    input: s.object({ path, theorem: s.optional(theorem) }, { extra: 'forbid' }),
    readOnly: true,
  },
  job: {
    title: 'Proof job state',
    description:
      'The state of a job (queued, running, proved, not_proved, cancelled, failed), its attempts with their verdicts, and when proved the verified body and the edit the splice rule would make. Answers at once.',
    input: s.object({ id: jobId }, { extra: 'forbid' }),
    readOnly: true,
  },
  cancel: {
    title: 'Cancel a proof job',
    description: 'Stops a queued or running job.',
    input: s.object({ id: jobId }, { extra: 'forbid' }),
    readOnly: true,
  },
  apply: {
    title: 'Apply a verified proof',
    description:
      "Writes a proved job's proof into its file through the splice rule, after the same re-checks as the editor's Accept: the text it replaces must still be there, and Lean re-checks the declaration exactly as it will be written. The only tool that writes files.",
    input: s.object({ id: jobId }, { extra: 'forbid' }),
    readOnly: false,
  },
} satisfies Record<string, AgentToolSpec>;

export type AgentToolName = keyof typeof agentTools;
export type AgentToolArgs<N extends AgentToolName> = Infer<(typeof agentTools)[N]['input']>;

/** One Lean message, 1-based lines and 0-based columns (Unicode code points), as the REPL gives them. */
export interface AgentMessage {
  severity: 'error' | 'warning' | 'info';
  line: number;
  column: number;
  endLine?: number;
  endColumn?: number;
  text: string;
}

export interface DeclarationCheck {
  kind: string;
  /** Full name as written (`example` when unnamed). */
  name: string;
  line: number;
  /** The strict verdict on this declaration as written. */
  status: VerdictStatus;
  reason: string;
  axioms?: string[];
  /** Lean's messages inside this declaration. */
  messages: AgentMessage[];
  /** The statement as written (from the keyword to `:=`). */
  statement: string;
  /**
   * Section `variable`s the declaration's statement gained (`include`d, or named in the statement), and the
   * statement with them as binders, as Lean elaborates it. With an `include`d hypothesis the declaration proves a
   * weaker statement than the one written: never `valid`.
   */
  elaborated?: { statement: string; gained: string[] };
  /** `path` only: the declaration's text is the same as in the last commit (else it was checked as untrusted). */
  unchangedSinceCommit?: boolean;
  /** `path` only, with a commit: `same`, `changed` (the statement differs from the committed one) or `new`. */
  statementVsCommit?: 'same' | 'changed' | 'new';
  committedStatement?: string;
  /** With `reference`: whether the statement is the reference's one of the same name. */
  statementVsReference?: 'same' | 'changed' | 'absent';
  referenceStatement?: string;
}

export interface CheckToolAnswer {
  /** True only when every declaration is valid, no statement differs from the committed or reference one and the file has no error. */
  ok: boolean;
  /** Lean's verdict on the whole text. */
  status: VerdictStatus;
  reason: string;
  declarations: DeclarationCheck[];
  /** Errors before the first declaration (imports, header). */
  fileMessages: AgentMessage[];
  /** Why `ok` is false, one sentence each. */
  problems: string[];
  path?: string;
  /** `path`: the commit compared with (`git rev-parse HEAD`), null when the file has none. */
  commit?: string | null;
  /** Reference declarations with no declaration of that name in the checked text. */
  missingFromReference?: string[];
  /**
   * `path`: how the file was checked. `user_file`: it is exactly its last commit, so it is the user's code (its own
   * commands unfiltered, in its own project; every declaration audited); `untrusted`: it differs from the last
   * commit or git knows no commit of it, so an agent may have written it (the strict rules).
   */
  checkedAs?: 'user_file' | 'untrusted';
}

export interface SorryTarget {
  path: string;
  declaration: string;
  kind: string;
  /** 1-based line and 0-based column of the `sorry`. */
  line: number;
  column: number;
  /** The goal Lean states at the sorry, where Lean gave one. */
  goal?: string;
}

interface SorriesToolAnswer {
  targets: SorryTarget[];
  files: number;
  /** Files that could not be read or checked, with why. */
  problems: string[];
}

export type AgentJobState = 'queued' | 'running' | 'proved' | 'not_proved' | 'cancelled' | 'failed';
export const finishedJobStates: readonly AgentJobState[] = ['proved', 'not_proved', 'cancelled', 'failed'];

/** An edit of the file (0-based lines, UTF-16 characters: LSP's ProofEdit). */
interface AgentEdit {
  range: { start: LspPosition; end: LspPosition };
  newText: string;
}

/** Where the backend's MCP server for agents listens (`kimina lsp`: loopback, its own random token). */
export interface AgentEndpoint {
  url: string;
  token: string;
}

export interface AgentAttemptSummary {
  sample: number;
  turn: number;
  status: VerdictStatus | 'no_proof';
  reason: string;
}

export interface AgentJob {
  id: string;
  kind: 'prove' | 'repair';
  /** Who started it: `editor`, or the agent (`mcp:…`). */
  client: string;
  /** The file, relative to its project folder (for display). */
  path: string;
  /** The file's absolute path: what `apply` reads and writes (absent on jobs from before it was kept). */
  file?: string;
  theorem?: string;
  line?: number;
  state: AgentJobState;
  createdAt: string;
  finishedAt?: string;
  attempts: AgentAttemptSummary[];
  /**
   * Proved: the verified proof body, the declaration it goes into, the edit the splice rule makes (0-based LSP
   * range of the file as it was when the job ran), the text that edit replaces, and what it replaces: the whole
   * proof (`theorem`, `repair`) or one sorry (`goal`).
   */
  proof?: { declaration: string; body: string; edit: AgentEdit; replaced: string; mode: 'theorem' | 'goal' | 'repair' };
  /** Why the job did not prove, failed or was refused. */
  problem?: string;
  /** When `apply` wrote the proof. */
  appliedAt?: string;
}

export interface JobStarted {
  jobId: string;
  /** The declaration the job works on. */
  theorem: string;
}

export interface ApplyToolAnswer {
  applied: boolean;
  path: string;
  declaration?: string;
  /** Why it was not written. */
  problem?: string;
}

/** What each tool answers (MCP structured content). */
export interface AgentToolAnswers {
  check: CheckToolAnswer;
  sorries: SorriesToolAnswer;
  prove: JobStarted;
  repair: JobStarted;
  job: AgentJob;
  cancel: { cancelled: boolean; state: AgentJobState };
  apply: ApplyToolAnswer;
}
