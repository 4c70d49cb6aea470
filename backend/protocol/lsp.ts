// Custom LSP requests and notifications between the extension and the backend's language-server face, each
// declared once here, as routes.ts declares the HTTP routes: one table for requests (method name, parameter
// schema in schema.ts's vocabulary, result type; for training, the HTTP route it is relayed to) and one for
// notifications (method name, parameter type). The face serves exactly these through one function that checks
// parameters before a handler runs (backend/api/lspContract.ts); the extension calls them with types taken from
// the tables (LspRequestTypes, LspNotificationTypes); test/api/lspContract.test.ts holds the two together.
import { agentTools, type AgentEndpoint, type AgentJob, type AgentToolName } from './agentTools';
import type { ProveEvent, ProveResult } from './prove';
import { proveLimits, proveRequestSchema } from './prove';
import type { Carries, RouteName, RouteResponse } from './routes';
import { s, type Infer, type Schema } from './schema';
import type { TrainingStreamEvent } from './training';
import { exportModelRequestSchema, startTrainingRequestSchema } from './training';
import type { LspPosition, Verdict } from './verify';

/** An editor range; positions are 0-based lines and 0-based characters in UTF-16 code units (LSP). */
interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

/**
 * `theorem`: prove the whole declaration at the position; `goal`: prove the goal of the `sorry` at the position;
 * `repair`: repair the declaration's broken proof from Lean's errors on it (docs/prover.md, "Repairing a proof").
 */
export type ProveMode = 'theorem' | 'goal' | 'repair';

/**
 * `kimina/prove`: the HTTP prove request's settings (one schema, proveRequestSchema's fields) plus `id` (chosen by the
 * client so that it can cancel and match events), `uri` (the document, for code lenses and gutter marks), `position`
 * (with `code` holding the whole document, the backend finds the declaration or `sorry` there) and `mode`.
 */
export type ProveParams = ParamsOf<'prove'>;

/** A text edit in the document the request was made from (the `code` sent with it). */
export interface ProofEdit {
  range: LspRange;
  newText: string;
}

export interface EditorProveResult extends ProveResult {
  mode: ProveMode;
  /** The declaration that was worked on: its name ("example" when unnamed) and its range in the document. */
  declaration: { name: string; range: LspRange } | null;
  /** The edit that puts the verified proof into the document; null unless proved. */
  edit: ProofEdit | null;
  /** Goal mode: the goal as a standalone lemma, and Lean's verdict on the whole declaration once spliced. */
  goal?: { statement: string; recheck: Verdict | null };
  /** Why nothing was attempted (no declaration at the cursor, no goal, backend not set up), when so. */
  problem?: string;
}

/** An editor diagnostic as the client has it (vscode-lean4's, when installed), sent so the backend needs no check of its own. */
export interface ClientDiagnostic {
  range: LspRange;
  severity: 'error' | 'warning' | 'info';
  message: string;
  source?: string;
}

/** A pending proposal's edit (its range in `code`, the document as it is now; `declarationLine`: 0-based line its
 * declaration starts on), to be checked again before Accept writes it after the file changed. */
export type RecheckParams = ParamsOf<'recheckProposal'>;

export interface RecheckResult {
  ok: boolean;
  /** Why the edit cannot be written now, when not ok. */
  problem?: string;
}

/**
 * A document and its diagnostics from Lean (vscode-lean4): when some are errors, they say which declarations fail
 * and no check runs; when absent, the backend checks the document itself.
 */
export type BrokenDeclarationsParams = ParamsOf<'brokenDeclarations'>;

/** A provable declaration whose proof Lean rejects. */
export interface BrokenDeclaration {
  name: string;
  /** The declaration's range (its first line holds the lens). */
  range: LspRange;
  /** Lean's errors inside it, and the deprecation warnings that name a replacement. */
  errors: ClientDiagnostic[];
  renames: { from: string; to: string }[];
}

export interface BrokenDeclarationsResult {
  uri: string;
  /** `lean`: the diagnostics sent; `check`: the backend's own check of the document. */
  source: 'diagnostics' | 'check';
  declarations: BrokenDeclaration[];
  /** Every Lean message of the check, for the editor's own diagnostics (source `check` only). */
  diagnostics: ClientDiagnostic[];
  /** Why the document could not be judged (Lean missing, the header fails, …), when so. */
  problem?: string;
}

/** One declaration of a Repair All job and where it stands. */
export type RepairItemStatus = 'pending' | 'repaired' | 'broken' | 'skipped' | 'accepted' | 'rejected';
export interface RepairItem {
  id: number;
  uri: string;
  declaration: string;
  /** 0-based line of the declaration when the job was planned. */
  line: number;
  /** Lean's first error on the user's proof, one line. */
  error: string;
  status: RepairItemStatus;
  /** Why it is still broken or was skipped, or what was proposed. */
  reason?: string;
  /** A verified repair waiting for review: the edit and the text it replaces (accepting checks it is still there). */
  edit?: ProofEdit;
  replaced?: string;
}
/** `repair`: Repair All (broken proofs, repaired from Lean's errors); `sorries`: Prove All Sorries (each sorry's goal). */
export type RepairJobKind = 'repair' | 'sorries';
export interface RepairJob {
  id: string;
  kind: RepairJobKind;
  /** What was asked: a file, a folder or the workspace, in words. */
  scope: string;
  state: 'running' | 'done' | 'cancelled';
  createdAt: string;
  items: RepairItem[];
}
export interface RepairPlanResult {
  job: RepairJob;
  /** Files that could not be judged, with why. */
  problems: { uri: string; problem: string }[];
}
/** Where a Prove All Sorries job stands; `item`: the item that just ended (its proposal, when verified). */
export interface SorriesProgress {
  job: RepairJob;
  item?: RepairItem;
}

/** Events of the `kimina/proveEvent` notification: the prover's events plus editor-side stages. */
export type LspProveEvent =
  | ProveEvent
  | { type: 'stage'; id: string; message: string }
  /** The declaration being proved and its first line in the document (0-based), for file line numbers. */
  | { type: 'target'; id: string; name: string; kind: string; line: number }
  /** The goal Lean reported at the sorry being proved (goal mode), from the REPL; `line` in the document (0-based). */
  | { type: 'goal'; id: string; goals: string[]; line: number };

/** Build the Lean REPL for a project's toolchain, as `kimina lean setup` does. */
/** Either outcome of a setup request; the backend's services are restarted after a success. */
export interface SetupResult {
  ok: boolean;
  message: string;
  cancelled?: boolean;
  /** Lean setup only: the REPL is ready but the project is not built; this command (in the project) builds it. */
  buildCommand?: string;
}
export interface BackendStatus {
  /** `restricted`: the folder is not trusted (VS Code's Restricted Mode), so the extension starts no backend. */
  state: 'starting' | 'ready' | 'proving' | 'training' | 'error' | 'restricted';
  detail?: string;
  engine?: string;
  model?: string;
  /** How many samples the engine decodes at once and why (its calibration, or kimina.rowsAtOnce), when it has a schedule. */
  schedule?: string;
  lean?: string;
  /** Proofs running now. */
  running?: number;
  /** Where proofs run: in the language-server process, or forwarded to a running `kimina serve`. */
  backend?: 'in-process' | 'server';
  /** The attached `kimina serve` (training runs there; the face relays the Training Monitor's requests), when there is one. */
  server?: { url: string; token?: string };
  /** What a first-time user still has to set up; empty or absent when ready. */
  setup?: { model: boolean; lean: boolean; hints: string[] };
}

/** How the face's link to the training events stands; `no-backend`: no `kimina serve` is attached. */
export type TrainingConnectionStatus = 'connecting' | 'connected' | 'disconnected' | 'no-backend';
export interface TrainingConnection {
  status: TrainingConnectionStatus;
  message?: string;
}

/** What one custom request is: its method, the schema its parameters must match, the result's type. */
export interface LspRequestSpec {
  method: string;
  params: Schema<unknown>;
  result: Carries<unknown>;
  /** A training request: the HTTP route of the attached `kimina serve` it is relayed to (routes.ts). */
  relay?: RouteName;
  summary: string;
}
/** A notification, sent by the backend's face to the extension. */
export interface LspNotificationSpec {
  method: string;
  params: Carries<unknown>;
  summary: string;
}

const answer = <T>(): Carries<T> => ({});
const noParams = s.object({});
const progressToken = s.optional(s.oneOf([s.string({ max: 200 }), s.integer()]));
const runId = s.string({ min: 1, max: 200, messages: { '*': 'this training request needs a run id' } });
const position = s.object({
  line: s.integer({ min: 0, max: 10_000_000 }),
  character: s.integer({ min: 0, max: 10_000_000 }),
});
const range = s.object({ start: position, end: position });
const diagnostic = s.object({
  range,
  severity: s.enum(['error', 'warning', 'info']),
  message: s.string({ max: 100_000 }),
  source: s.optional(s.string({ max: 1000 })),
});
const count = (max: number) => s.optional(s.integer({ min: 0, max }));

/** `kimina/prove`: the settings of the HTTP prove request (proveRequestSchema's fields: one schema), plus the editor's. */
const http = proveRequestSchema.fields;
const proveParamsSchema = s.object({
  theorem: http.theorem,
  informal: http.informal,
  samples: http.samples,
  fixTurns: http.fixTurns,
  temperature: http.temperature,
  topP: http.topP,
  maxTokens: http.maxTokens,
  id: s.string({ min: 1, max: 200, messages: { '*': 'kimina/prove needs an id' } }),
  // the document's text; absent: the open document at `uri`
  code: s.optional(s.string({ max: proveLimits.codeChars })),
  uri: s.optional(s.string({ max: 10_000 })),
  position: s.optional(position),
  mode: s.optional(s.enum(['theorem', 'goal', 'repair'])),
});

export const lspRequests = {
  prove: {
    method: 'kimina/prove',
    params: proveParamsSchema,
    result: answer<EditorProveResult>(),
    summary: 'prove a theorem or a goal; answers with the final result, streams proveEvent meanwhile',
  },
  cancel: {
    method: 'kimina/cancel',
    params: s.object({ id: s.optional(s.string({ max: 200 })) }),
    result: answer<{ cancelled: boolean }>(),
    summary: 'cancel a proof by id',
  },
  status: {
    method: 'kimina/status',
    params: noParams,
    result: answer<BackendStatus>(),
    summary: "the backend's state for the status bar",
  },
  pullModel: {
    method: 'kimina/setup/pullModel',
    params: s.object({ model: s.optional(s.string({ max: 1000 })), workDoneToken: progressToken }),
    result: answer<SetupResult>(),
    summary: "pull a model (progress as $/progress on the request's workDoneToken; cancellable)",
  },
  setupLean: {
    method: 'kimina/setup/lean',
    params: s.object({
      project: s.optional(s.string({ max: 4096 })),
      build: s.optional(s.boolean()),
      workDoneToken: progressToken,
    }),
    result: answer<SetupResult>(),
    summary: 'build the Lean REPL for a project (progress as $/progress; cancellable)',
  },
  // Training: relayed to the attached `kimina serve` (training outlives an editor window); each answers as its
  // HTTP route does, and fails with a sentence naming `kimina serve` when none is attached.
  trainingPresets: {
    method: 'kimina/training/presets',
    params: noParams,
    result: answer<RouteResponse<'trainingPresets'>>(),
    relay: 'trainingPresets',
    summary: 'the hyperparameter presets',
  },
  trainingRuns: {
    method: 'kimina/training/runs',
    params: noParams,
    result: answer<RouteResponse<'trainingRuns'>>(),
    relay: 'trainingRuns',
    summary: 'every run, newest first',
  },
  trainingRun: {
    method: 'kimina/training/run',
    params: s.object({ id: runId }),
    result: answer<RouteResponse<'trainingRun'>>(),
    relay: 'trainingRun',
    summary: 'one run',
  },
  trainingStart: {
    method: 'kimina/training/start',
    params: startTrainingRequestSchema,
    result: answer<RouteResponse<'trainingStart'>>(),
    relay: 'trainingStart',
    summary: 'start a run',
  },
  trainingPause: {
    method: 'kimina/training/pause',
    params: s.object({ id: runId }),
    result: answer<RouteResponse<'trainingPause'>>(),
    relay: 'trainingPause',
    summary: 'pause a run; answers with the run as it is now',
  },
  trainingResume: {
    method: 'kimina/training/resume',
    params: s.object({ id: runId }),
    result: answer<RouteResponse<'trainingResume'>>(),
    relay: 'trainingResume',
    summary: 'resume a run; answers with the run as it is now',
  },
  trainingCancel: {
    method: 'kimina/training/cancel',
    params: s.object({ id: runId }),
    result: answer<RouteResponse<'trainingCancel'>>(),
    relay: 'trainingCancel',
    summary: 'cancel a run; answers with the run as it is now',
  },
  trainingMetrics: {
    method: 'kimina/training/metrics',
    params: s.object({
      id: runId,
      kind: s.optional(s.enum(['train', 'eval'])),
      since: s.optional(s.integer({ min: 0, max: 1e9 })),
    }),
    result: answer<RouteResponse<'trainingMetrics'>>(),
    relay: 'trainingMetrics',
    summary: "a run's per-step metrics",
  },
  trainingRollouts: {
    method: 'kimina/training/rollouts',
    params: s.object({ id: runId, limit: count(1_000_000) }),
    result: answer<RouteResponse<'trainingRollouts'>>(),
    relay: 'trainingRollouts',
    summary: "a run's latest sampled rollouts",
  },
  trainingLog: {
    method: 'kimina/training/log',
    params: s.object({ id: runId, limit: count(1_000_000) }),
    result: answer<RouteResponse<'trainingLog'>>(),
    relay: 'trainingLog',
    summary: "a run's latest log lines",
  },
  trainingExport: {
    method: 'kimina/training/export',
    params: s.object({ id: runId, quantize: exportModelRequestSchema.fields.quantize }),
    result: answer<RouteResponse<'trainingExport'>>(),
    relay: 'trainingExport',
    summary: "convert a finished run's weights to ONNX",
  },
  trainingGpus: {
    method: 'kimina/training/gpus',
    params: noParams,
    result: answer<RouteResponse<'trainingGpus'>>(),
    relay: 'trainingGpus',
    summary: 'the GPUs the server sees',
  },
  trainingFollow: {
    method: 'kimina/training/follow',
    params: s.object({ follow: s.optional(s.boolean()) }),
    result: answer<TrainingConnection>(),
    summary: 'start or stop following the training events; answers with the connection as it stands',
  },
  // Repair: which declarations Lean rejects, and the Repair All queue (api/lspRepair.ts).
  brokenDeclarations: {
    method: 'kimina/repair/broken',
    params: s.object({
      uri: s.string({ min: 1, max: 10_000, messages: { '*': 'uri is missing' } }),
      code: s.string({ max: proveLimits.codeChars, messages: { '*': 'code is missing' } }),
      diagnostics: s.optional(s.array(diagnostic, { max: 100_000 })),
    }),
    result: answer<BrokenDeclarationsResult>(),
    summary: "the declarations of a document whose proofs Lean rejects (from the client's diagnostics or a check)",
  },
  recheckProposal: {
    method: 'kimina/recheck',
    params: s.object({
      uri: s.string({ min: 1, max: 10_000, messages: { '*': 'uri is missing' } }),
      code: s.string({ max: proveLimits.codeChars, messages: { '*': 'code is missing' } }),
      edit: s.object({ range, newText: s.string({ max: proveLimits.codeChars }) }),
      declarationLine: s.integer({ min: 0, max: 10_000_000 }),
    }),
    result: answer<RecheckResult>(),
    summary: "checks a pending proposal's edit again on the document as it is now, before Accept writes it",
  },
  repairPlan: {
    method: 'kimina/repair/plan',
    params: s.object({
      scope: s.string({ min: 1, max: 10_000, messages: { '*': 'scope is missing' } }),
      files: s.array(
        s.object({
          uri: s.string({ max: 10_000 }),
          code: s.string({ max: proveLimits.codeChars }),
          diagnostics: s.optional(s.array(diagnostic, { max: 100_000 })),
        }),
        { max: 100_000, messages: { '*': 'files is missing' } },
      ),
    }),
    result: answer<RepairPlanResult>(),
    summary: 'plan a Repair All job over files (checks each, stores the queue in SQLite: resumable)',
  },
  // Prove All Sorries over files: every sorry becomes an item of a job kept in SQLite, and the backend proves them
  // one after another in the background (goal mode), resuming a job a restart interrupted; `code` is the text when
  // the client has it (else the file is read from disk when its turn comes).
  sorriesStart: {
    method: 'kimina/sorries/start',
    params: s.object({
      scope: s.string({ min: 1, max: 10_000, messages: { '*': 'scope is missing' } }),
      files: s.array(
        s.object({
          uri: s.string({ min: 1, max: 10_000 }),
          code: s.optional(s.string({ max: proveLimits.codeChars })),
        }),
        { max: 100_000, messages: { '*': 'files is missing' } },
      ),
      samples: s.optional(s.integer({ min: proveLimits.samples[0], max: proveLimits.samples[1] })),
      fixTurns: s.optional(s.integer({ min: proveLimits.fixTurns[0], max: proveLimits.fixTurns[1] })),
    }),
    result: answer<RepairPlanResult>(),
    summary: 'start Prove All Sorries over files: one item per sorry, kept in SQLite, proved in the background',
  },
  repairJobs: {
    method: 'kimina/repair/jobs',
    params: noParams,
    result: answer<{ jobs: RepairJob[] }>(),
    summary: 'the unfinished Repair All jobs (after a restart), newest first',
  },
  repairUpdate: {
    method: 'kimina/repair/update',
    params: s.object({
      jobId: s.string({ min: 1, max: 200, messages: { '*': 'jobId is missing' } }),
      itemId: s.integer({ min: 0, max: 1e12, messages: { '*': 'itemId is missing' } }),
      status: s.enum(['pending', 'repaired', 'broken', 'skipped', 'accepted', 'rejected']),
      reason: s.optional(s.string({ max: 100_000 })),
      edit: s.nullable(s.object({ range, newText: s.string({ max: proveLimits.codeChars }) })),
      replaced: s.nullable(s.string({ max: proveLimits.codeChars })),
    }),
    result: answer<RepairJob>(),
    summary: "record one item's outcome (repaired with its proposal, still broken, skipped, accepted, rejected)",
  },
  repairJob: {
    method: 'kimina/repair/job',
    params: s.object({
      jobId: s.string({ min: 1, max: 200, messages: { '*': 'jobId is missing' } }),
      state: s.optional(s.enum(['running', 'done', 'cancelled'])),
    }),
    result: answer<RepairJob>(),
    summary: 'one job; with `state`, end it (done, cancelled)',
  },
  agentEndpoint: {
    method: 'kimina/agent/endpoint',
    params: noParams,
    result: answer<AgentEndpoint | null>(),
    summary: "the backend's MCP server for agents (streamable HTTP on loopback, with its token), started on first ask",
  },
  agentTool: {
    method: 'kimina/agent/tool',
    params: s.object({
      name: s.enum(Object.keys(agentTools) as AgentToolName[]),
      // checked against the tool's own schema (agentTools.ts) by the handler
      arguments: s.object({}),
    }),
    result: answer<unknown>(),
    summary: "call one agent tool (the editor's language-model tools): the same handlers as MCP",
  },
  agentJobs: {
    method: 'kimina/agent/jobs',
    params: noParams,
    result: answer<{ jobs: AgentJob[] }>(),
    summary: "agents' proof jobs, newest first (the Proof view lists them)",
  },
} as const satisfies Record<string, LspRequestSpec>;

export const lspNotifications = {
  proveEvent: {
    method: 'kimina/proveEvent',
    params: answer<LspProveEvent>(),
    summary: 'one event of a running proof',
  },
  statusChanged: {
    method: 'kimina/statusChanged',
    params: answer<BackendStatus>(),
    summary: "the backend's state changed",
  },
  trainingEvent: {
    method: 'kimina/training/event',
    params: answer<TrainingStreamEvent>(),
    summary: 'one training event (a run changed, a step’s metrics, rollouts, a log line)',
  },
  sorriesProgress: {
    method: 'kimina/sorries/progress',
    params: answer<SorriesProgress>(),
    summary: 'a Prove All Sorries job moved on: an item ended (with its proposal when verified) or the job ended',
  },
  trainingConnection: {
    method: 'kimina/training/connection',
    params: answer<TrainingConnection>(),
    summary: 'the link to the training events changed',
  },
  agentJob: {
    method: 'kimina/agent/job',
    params: answer<AgentJob>(),
    summary: "an agent's proof job changed (queued, running, an attempt, finished, applied)",
  },
} as const satisfies Record<string, LspNotificationSpec>;

export type LspRequests = typeof lspRequests;
/** A request's parameters: the type its schema in lspRequests accepts (no hand-written copy to drift from it). */
type ParamsOf<N extends keyof LspRequests> = Infer<LspRequests[N]['params']>;
export type LspRequestName = keyof LspRequests;
export type LspNotifications = typeof lspNotifications;
export type LspNotificationName = keyof LspNotifications;

type Carried<C> = C extends Carries<infer T> ? T : never;
/** Each request's parameters and result, by method name (taken from the table). */
export type LspRequestTypes = {
  [N in LspRequestName as LspRequests[N]['method']]: {
    params: Infer<LspRequests[N]['params']>;
    result: Carried<LspRequests[N]['result']>;
  };
};
/** Each notification's parameters, by method name (taken from the table). */
export type LspNotificationTypes = {
  [N in LspNotificationName as LspNotifications[N]['method']]: Carried<LspNotifications[N]['params']>;
};

/** Every method name by its short name (`lspMethods.prove` is the method of `lspRequests.prove`), from the two tables. */
export const lspMethods = Object.fromEntries(
  [...Object.entries(lspRequests), ...Object.entries(lspNotifications)].map(([name, spec]) => [name, spec.method]),
) as { readonly [N in LspRequestName]: LspRequests[N]['method'] } & {
  readonly [N in LspNotificationName]: LspNotifications[N]['method'];
};

/** Client-side commands the backend names in code lenses and code actions (arguments: uri, LspPosition). */
export const editorCommands = {
  proveTheorem: 'kimina.proveTheorem',
  proveGoal: 'kimina.proveGoal',
  repairProof: 'kimina.repairProof',
} as const;
