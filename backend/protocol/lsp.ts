// Custom LSP requests and notifications between the extension and the backend's language-server face.
// Each is declared once here: its method name and its parameter and result types.
import type { ProveEvent, ProveRequest, ProveResult } from './prove';
import type { RouteResponse } from './routes';
import type { ExportModelRequest, StartTrainingRequest, TrainingStreamEvent } from './training';
import type { LspPosition, Verdict } from './verify';

/** An editor range; positions are 0-based lines and 0-based characters in UTF-16 code units (LSP). */
export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

/** `theorem`: prove the whole declaration at the position; `goal`: prove the goal of the `sorry` at the position. */
export type ProveMode = 'theorem' | 'goal';

export interface ProveParams extends ProveRequest {
  /** The document the theorem comes from, for code lenses and gutter marks. */
  uri?: string;
  /** An id chosen by the client so that it can cancel and match events. */
  id: string;
  /** Where the cursor is; with `code` holding the whole document, the backend finds the declaration or `sorry` there. */
  position?: LspPosition;
  mode?: ProveMode;
}

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

/** Events of the `kimina/proveEvent` notification: the prover's events plus editor-side stages. */
export type LspProveEvent =
  | ProveEvent
  | { type: 'stage'; id: string; message: string }
  /** The declaration being proved and its first line in the document (0-based), for file line numbers. */
  | { type: 'target'; id: string; name: string; kind: string; line: number }
  /** The goal Lean reported at the sorry being proved (goal mode), from the REPL; `line` in the document (0-based). */
  | { type: 'goal'; id: string; goals: string[]; line: number };

export interface CancelParams {
  id: string;
}

/** A token the client chose for `$/progress` notifications about one request (LSP's WorkDoneProgressParams). */
export type ProgressToken = string | number;

/** Download a model from the hub into the store (converting it when needed), as `kimina model pull` does. */
export interface PullModelParams {
  model: string;
  workDoneToken?: ProgressToken;
}
/** Build the Lean REPL for a project's toolchain, as `kimina lean setup` does. */
export interface SetupLeanParams {
  project: string;
  workDoneToken?: ProgressToken;
}
/** Either outcome of a setup request; the backend's services are restarted after a success. */
export interface SetupResult {
  ok: boolean;
  message: string;
  cancelled?: boolean;
}
export interface BackendStatus {
  state: 'starting' | 'ready' | 'proving' | 'training' | 'error';
  detail?: string;
  engine?: string;
  model?: string;
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

/** One training run, by id. */
export interface TrainingRunParams {
  id: string;
}
/** The latest entries of one run's rollouts or log. */
export interface TrainingPageParams {
  id: string;
  limit?: number;
}
export interface TrainingMetricsParams {
  id: string;
  kind?: 'train' | 'eval';
  since?: number;
}
export interface TrainingExportParams extends NonNullable<ExportModelRequest> {
  id: string;
}
/** Start or stop forwarding the attached server's training events as `kimina/training/event`. */
export interface TrainingFollowParams {
  follow: boolean;
}
/** How the face's link to the training events stands; `no-backend`: no `kimina serve` is attached. */
export type TrainingConnectionStatus = 'connecting' | 'connected' | 'disconnected' | 'no-backend';
export interface TrainingConnection {
  status: TrainingConnectionStatus;
  message?: string;
}

export const lspMethods = {
  /** Request: prove a theorem; answers with the final result, streams `proveEvent` meanwhile. */
  prove: 'kimina/prove',
  /** Request: cancel a proof by id. */
  cancel: 'kimina/cancel',
  /** Request: the backend's state for the status bar. */
  status: 'kimina/status',
  /** Request: pull a model (progress as `$/progress` on the request's workDoneToken; cancellable). */
  pullModel: 'kimina/setup/pullModel',
  /** Request: build the Lean REPL for a project (progress as `$/progress`; cancellable). */
  setupLean: 'kimina/setup/lean',
  // Training: relayed to the attached `kimina serve` (training outlives an editor window); each answers as its
  // HTTP route does (routes.ts), and fails with a sentence naming `kimina serve` when none is attached.
  /** Request: the hyperparameter presets. */
  trainingPresets: 'kimina/training/presets',
  /** Request: every run, newest first. */
  trainingRuns: 'kimina/training/runs',
  /** Request: one run. */
  trainingRun: 'kimina/training/run',
  /** Request: start a run. */
  trainingStart: 'kimina/training/start',
  /** Requests: pause, resume or cancel a run; each answers with the run as it is now. */
  trainingPause: 'kimina/training/pause',
  trainingResume: 'kimina/training/resume',
  trainingCancel: 'kimina/training/cancel',
  /** Request: a run's per-step metrics. */
  trainingMetrics: 'kimina/training/metrics',
  /** Request: a run's latest sampled rollouts. */
  trainingRollouts: 'kimina/training/rollouts',
  /** Request: a run's latest log lines. */
  trainingLog: 'kimina/training/log',
  /** Request: convert a finished run's weights to ONNX. */
  trainingExport: 'kimina/training/export',
  /** Request: the GPUs the server sees. */
  trainingGpus: 'kimina/training/gpus',
  /** Request: start or stop following the training events; answers with the connection as it stands. */
  trainingFollow: 'kimina/training/follow',
  /** Notification (server → client): one training event (a run changed, a step's metrics, rollouts, a log line). */
  trainingEvent: 'kimina/training/event',
  /** Notification (server → client): the link to the training events changed. */
  trainingConnection: 'kimina/training/connection',
  /** Notification (server → client): one event of a running proof. */
  proveEvent: 'kimina/proveEvent',
  /** Notification (server → client): the backend's state changed. */
  statusChanged: 'kimina/statusChanged',
} as const;

/** Client-side commands the backend names in code lenses and code actions (arguments: uri, LspPosition). */
export const editorCommands = {
  proveTheorem: 'kimina.proveTheorem',
  proveGoal: 'kimina.proveGoal',
} as const;

export interface LspRequestTypes {
  'kimina/prove': { params: ProveParams; result: EditorProveResult };
  'kimina/cancel': { params: CancelParams; result: { cancelled: boolean } };
  'kimina/status': { params: Record<string, never>; result: BackendStatus };
  'kimina/setup/pullModel': { params: PullModelParams; result: SetupResult };
  'kimina/setup/lean': { params: SetupLeanParams; result: SetupResult };
  'kimina/training/presets': { params: Record<string, never>; result: RouteResponse<'trainingPresets'> };
  'kimina/training/runs': { params: Record<string, never>; result: RouteResponse<'trainingRuns'> };
  'kimina/training/run': { params: TrainingRunParams; result: RouteResponse<'trainingRun'> };
  'kimina/training/start': { params: StartTrainingRequest; result: RouteResponse<'trainingStart'> };
  'kimina/training/pause': { params: TrainingRunParams; result: RouteResponse<'trainingPause'> };
  'kimina/training/resume': { params: TrainingRunParams; result: RouteResponse<'trainingResume'> };
  'kimina/training/cancel': { params: TrainingRunParams; result: RouteResponse<'trainingCancel'> };
  'kimina/training/metrics': { params: TrainingMetricsParams; result: RouteResponse<'trainingMetrics'> };
  'kimina/training/rollouts': { params: TrainingPageParams; result: RouteResponse<'trainingRollouts'> };
  'kimina/training/log': { params: TrainingPageParams; result: RouteResponse<'trainingLog'> };
  'kimina/training/export': { params: TrainingExportParams; result: RouteResponse<'trainingExport'> };
  'kimina/training/gpus': { params: Record<string, never>; result: RouteResponse<'trainingGpus'> };
  'kimina/training/follow': { params: TrainingFollowParams; result: TrainingConnection };
}
export interface LspNotificationTypes {
  'kimina/proveEvent': LspProveEvent;
  'kimina/statusChanged': BackendStatus;
  'kimina/training/event': TrainingStreamEvent;
  'kimina/training/connection': TrainingConnection;
}
