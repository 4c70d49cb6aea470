// Every HTTP route of `kimina serve`, declared once: method, path, request body and query schemas, the answer's
// type, and the events of a route that streams. The server registers exactly these (backend/api/contract.ts)
// and the one client (./client.ts) calls them by name.
import type { EvalComparison, EvalReport, EvalRunSummary } from './evaluation';
import type { ProveEvent, ProveResult } from './prove';
import { proveRequestSchema } from './prove';
import { s, type Infer, type Schema } from './schema';
import type {
  ExportModelResponse,
  GpuReport,
  RewardResponse,
  TrainingLogResponse,
  TrainingMetricsResponse,
  TrainingPresetName,
  TrainingRolloutsResponse,
  TrainingRun,
  TrainingRunsResponse,
  TrainingStreamEvent,
} from './training';
import {
  exportModelRequestSchema,
  metricsReportSchema,
  rewardRequestSchema,
  startTrainingRequestSchema,
  trainerEventSchema,
} from './training';
import type { CheckResponse, HealthResponse, LoadResponse, V1CheckResponse, VerifyResponse } from './verify';
import { checkRequestSchema, v1CheckRequestSchema, verifyRequestSchema } from './verify';
import { astCodeRequestSchema, astRequestSchema, type AstNotSupportedResponse } from './ast';

/**
 * How a route answers a bad request: `fastapi`: 422 `{"detail": [{type, loc, msg}]}` as kimina-lean-server does;
 * `error`: 422 `{"error": "<sentence>"}`; `detail`: 400 `{"detail": "<sentence>"}`.
 */
export type ErrorStyle = 'fastapi' | 'error' | 'detail';

/** A type carried by a declaration for the client; no value at run time. */
export interface Carries<T> {
  readonly __carries?: T;
}
const answer = <T>(): Carries<T> => ({});

export interface RouteSpec {
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** Other paths served by the same handler (kimina-lean-server's trailing slashes and old names). */
  aliases?: readonly string[];
  body?: Schema<unknown>;
  query?: Schema<unknown>;
  response: Carries<unknown>;
  /** `always`: the answer is a server-sent event stream; `on-request`: with `Accept: text/event-stream`. */
  events?: Carries<unknown> & { stream: 'always' | 'on-request' };
  /** The answer's media type when it is not JSON. */
  produces?: 'image/svg+xml';
  errors: ErrorStyle;
  /** Open without the API token (health checks, as kimina-lean-server). */
  public?: boolean;
  summary: string;
}

const events = <T>(stream: 'always' | 'on-request'): Carries<T> & { stream: 'always' | 'on-request' } => ({ stream });
const limitQuery = (max: number) => s.object({ limit: s.optional(s.integer({ min: 1, max })) });
const countQuery = s.object({ limit: s.optional(s.integer({ min: 0, max: 1_000_000 })) });

export const routes = {
  health: {
    method: 'GET',
    path: '/health',
    aliases: ['/', '/health/'],
    response: answer<HealthResponse>(),
    errors: 'fastapi',
    public: true,
    summary: 'liveness and REPL counts (no token needed)',
  },
  load: {
    method: 'GET',
    path: '/v1/load',
    response: answer<LoadResponse>(),
    errors: 'detail',
    summary: 'checks admitted, capacity and REPLs, for clients that spread work over several servers',
  },
  apiCheck: {
    method: 'POST',
    path: '/api/check',
    aliases: ['/api/check/'],
    body: checkRequestSchema,
    response: answer<CheckResponse>(),
    errors: 'fastapi',
    summary: 'kimina-lean-server: check snippets',
  },
  apiAst: {
    method: 'POST',
    path: '/api/ast',
    body: astRequestSchema,
    response: answer<AstNotSupportedResponse>(),
    errors: 'fastapi',
    summary: 'kimina-ast-server: module ASTs; not supported here (501 with a JSON body saying so)',
  },
  apiAstCode: {
    method: 'POST',
    path: '/api/ast_code',
    body: astCodeRequestSchema,
    response: answer<AstNotSupportedResponse>(),
    errors: 'fastapi',
    summary: 'kimina-ast-server: the AST of a snippet; not supported here (501 with a JSON body saying so)',
  },
  verify: {
    method: 'POST',
    path: '/verify',
    aliases: ['/one_pass_verify_batch'],
    body: verifyRequestSchema,
    response: answer<VerifyResponse>(),
    errors: 'fastapi',
    summary: 'kimina-lean-server: the backward-compatible batch route',
  },
  check: {
    method: 'POST',
    path: '/v1/check',
    body: v1CheckRequestSchema,
    response: answer<V1CheckResponse>(),
    errors: 'fastapi',
    summary: 'our strict verdict per snippet',
  },

  prove: {
    method: 'POST',
    path: '/v1/prove',
    body: proveRequestSchema,
    response: answer<ProveResult>(),
    events: events<ProveEvent>('on-request'),
    errors: 'error',
    summary: 'prove a theorem (JSON, or server-sent events with Accept: text/event-stream)',
  },
  proveCancel: {
    method: 'DELETE',
    path: '/v1/prove/:id',
    response: answer<{ id: string; cancelled: true }>(),
    errors: 'error',
    summary: 'cancel a running prove request',
  },
  proveRuns: {
    method: 'GET',
    path: '/v1/prove',
    query: limitQuery(500),
    response: answer<{ runs: unknown[] }>(),
    errors: 'error',
    summary: 'the most recent stored prove runs',
  },
  proveRun: {
    method: 'GET',
    path: '/v1/prove/:id',
    response: answer<unknown>(),
    errors: 'error',
    summary: 'one stored prove run with its attempts',
  },

  evalRuns: {
    method: 'GET',
    path: '/v1/eval/runs',
    response: answer<{ runs: EvalRunSummary[] }>(),
    errors: 'detail',
    summary: 'stored evaluation runs',
  },
  evalReport: {
    method: 'GET',
    path: '/v1/eval/runs/:name',
    response: answer<EvalReport>(),
    errors: 'detail',
    summary: "one run's report",
  },
  evalPassAtKSvg: {
    method: 'GET',
    path: '/v1/eval/runs/:name/pass-at-k.svg',
    response: answer<string>(),
    produces: 'image/svg+xml',
    errors: 'detail',
    summary: 'pass@k plot',
  },
  evalBySourceSvg: {
    method: 'GET',
    path: '/v1/eval/runs/:name/by-source.svg',
    response: answer<string>(),
    produces: 'image/svg+xml',
    errors: 'detail',
    summary: 'solved per source plot',
  },
  evalCompare: {
    method: 'GET',
    path: '/v1/eval/runs/:name/compare/:other',
    response: answer<EvalComparison>(),
    errors: 'detail',
    summary: 'two runs compared',
  },
  evalComparePassAtKSvg: {
    method: 'GET',
    path: '/v1/eval/runs/:name/compare/:other/pass-at-k.svg',
    response: answer<string>(),
    produces: 'image/svg+xml',
    errors: 'detail',
    summary: "two runs' pass@k plot",
  },

  trainingPresets: {
    method: 'GET',
    path: '/v1/training/presets',
    response: answer<{ presets: Record<TrainingPresetName, { summary: string }> }>(),
    errors: 'detail',
    summary: 'hyperparameter presets',
  },
  trainingGpus: {
    method: 'GET',
    path: '/v1/training/gpus',
    response: answer<GpuReport>(),
    errors: 'detail',
    summary: 'GPU status',
  },
  trainingRuns: {
    method: 'GET',
    path: '/v1/training/runs',
    response: answer<TrainingRunsResponse>(),
    errors: 'detail',
    summary: 'all runs',
  },
  trainingStart: {
    method: 'POST',
    path: '/v1/training/runs',
    body: startTrainingRequestSchema,
    response: answer<TrainingRun>(),
    errors: 'detail',
    summary: 'start a run (201)',
  },
  trainingRun: {
    method: 'GET',
    path: '/v1/training/runs/:id',
    response: answer<TrainingRun>(),
    errors: 'detail',
    summary: 'one run',
  },
  trainingPause: {
    method: 'POST',
    path: '/v1/training/runs/:id/pause',
    response: answer<TrainingRun>(),
    errors: 'detail',
    summary: 'pause a run',
  },
  trainingResume: {
    method: 'POST',
    path: '/v1/training/runs/:id/resume',
    response: answer<TrainingRun>(),
    errors: 'detail',
    summary: 'resume a run',
  },
  trainingCancel: {
    method: 'POST',
    path: '/v1/training/runs/:id/cancel',
    response: answer<TrainingRun>(),
    errors: 'detail',
    summary: 'cancel a run',
  },
  trainingExport: {
    method: 'POST',
    path: '/v1/training/runs/:id/export',
    body: exportModelRequestSchema,
    response: answer<ExportModelResponse>(),
    errors: 'detail',
    summary: 'convert the final weights to ONNX',
  },
  trainingMetrics: {
    method: 'GET',
    path: '/v1/training/runs/:id/metrics',
    query: s.object({
      kind: s.optional(s.enum(['train', 'eval'])),
      since: s.optional(s.integer({ min: 0, max: 1e9 })),
    }),
    response: answer<TrainingMetricsResponse>(),
    errors: 'detail',
    summary: 'per-step metrics',
  },
  trainingRollouts: {
    method: 'GET',
    path: '/v1/training/runs/:id/rollouts',
    query: countQuery,
    response: answer<TrainingRolloutsResponse>(),
    errors: 'detail',
    summary: 'sampled rollouts (at most 200)',
  },
  trainingLog: {
    method: 'GET',
    path: '/v1/training/runs/:id/log',
    query: countQuery,
    response: answer<TrainingLogResponse>(),
    errors: 'detail',
    summary: "the run's log (at most 500 lines)",
  },
  trainingEvents: {
    method: 'GET',
    path: '/v1/training/events',
    response: answer<never>(),
    events: events<TrainingStreamEvent>('always'),
    errors: 'detail',
    summary: 'every run, then changes as they happen (server-sent events)',
  },
  // the trainer's side
  trainingReward: {
    method: 'POST',
    path: '/v1/training/reward',
    body: rewardRequestSchema,
    response: answer<RewardResponse>(),
    errors: 'detail',
    summary: "score answers without a run (verl's reward module)",
  },
  trainingRunReward: {
    method: 'POST',
    path: '/v1/training/runs/:id/reward',
    body: rewardRequestSchema,
    response: answer<RewardResponse>(),
    errors: 'detail',
    summary: "score a run's answers, storing metrics and rollouts",
  },
  trainingReport: {
    method: 'POST',
    path: '/v1/training/runs/:id/metrics',
    body: metricsReportSchema,
    response: answer<{ ok: true }>(),
    errors: 'detail',
    summary: "the trainer reports a step's metrics",
  },
  trainingTrainerEvent: {
    method: 'POST',
    path: '/v1/training/runs/:id/events',
    body: trainerEventSchema,
    response: answer<{ ok: true }>(),
    errors: 'detail',
    summary: 'the trainer reports started, checkpoint, log, stopped, finished',
  },
  mcp: {
    method: 'POST',
    path: '/mcp',
    // one JSON-RPC message (MCP 2025-06-18 has no batches); its params are the MCP SDK's to check
    body: s.object({
      jsonrpc: s.enum(['2.0']),
      method: s.optional(s.string({ min: 1, max: 200 })),
      id: s.optional(s.oneOf([s.string({ max: 200 }), s.integer()], { nullable: true })),
    }),
    response: answer<unknown>(),
    errors: 'error',
    summary: 'MCP over streamable HTTP (the agent tools of agentTools.ts): JSON-RPC in, JSON-RPC out, no session',
  },
  mcpStream: {
    method: 'GET',
    path: '/mcp',
    response: answer<unknown>(),
    errors: 'error',
    summary: 'MCP server-to-client stream: 405, the server sends nothing unasked (polling `job` answers at once)',
  },
  mcpSessionEnd: {
    method: 'DELETE',
    path: '/mcp',
    response: answer<unknown>(),
    errors: 'error',
    summary: 'MCP session end: 405, the server keeps no session',
  },
} as const satisfies Record<string, RouteSpec>;

type Routes = typeof routes;
export type RouteName = keyof Routes;

type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;
/** The path parameters of a route, e.g. `{ id: string }` for `/v1/training/runs/:id`. */
export type RouteParams<N extends RouteName> = { [K in ParamNames<Routes[N]['path']>]: string };
export type RouteBody<N extends RouteName> = Routes[N] extends { body: infer B } ? Infer<B> : undefined;
export type RouteQuery<N extends RouteName> = Routes[N] extends { query: infer Q } ? Infer<Q> : undefined;
export type RouteResponse<N extends RouteName> = Routes[N]['response'] extends Carries<infer R> ? R : never;
export type RouteEvent<N extends RouteName> = Routes[N] extends { events: Carries<infer E> } ? E : never;
export type StreamingRoute = { [N in RouteName]: Routes[N] extends { events: unknown } ? N : never }[RouteName];

/** Fills a route's path parameters (each URL-encoded). */
export function routePath(path: string, params: Record<string, string> = {}): string {
  return path.replace(/:([A-Za-z]+)/g, (_m, key: string) => {
    const value = params[key];
    if (value === undefined) throw new Error(`missing path parameter '${key}' for ${path}`);
    return encodeURIComponent(value);
  });
}
