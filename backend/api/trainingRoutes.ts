// HTTP face of training: runs and their controls, metrics, rollouts, GPU status and a live SSE stream for
// clients; the reward service, metrics and events routes for the Python trainer.
import express, { type NextFunction, type Request, type Response, type Router } from 'express';
import type {
  ExportModelRequest, MetricsReport, RewardRequest, StartTrainingRequest, TrainerEvent, TrainingStreamEvent,
} from '../protocol';
import type { TrainingStore } from '../store/training';
import { TrainingError, type TrainingJobs } from '../training/jobs';
import { nvidiaSmiProbe, type GpuProbe } from '../training/gpu';
import { PRESETS } from '../training/presets';
import { openSse } from './sse';
import { clientKey } from '../lean/admission';

export interface TrainingRouterDeps {
  jobs: TrainingJobs;
  store: TrainingStore;
  gpuProbe?: GpuProbe;
}

type Handler = (req: Request, res: Response) => Promise<unknown> | unknown;

/** Wraps a handler: TrainingError -> its status with `{detail}`, anything else to the app's error handler. */
function route(fn: Handler) {
  return async (req: Request, res: Response, next: NextFunction) => {
    try {
      const out = await fn(req, res);
      if (out !== undefined && !res.headersSent) res.json(out);
    } catch (err) {
      if (err instanceof TrainingError) { res.status(err.status).json({ detail: err.message }); return; }
      next(err);
    }
  };
}

function intParam(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new TrainingError(`${name} must be a non-negative integer`);
  return n;
}

function body<T>(req: Request): T {
  if (req.body === undefined || req.body === null || typeof req.body !== 'object') throw new TrainingError('a JSON object body is required');
  return req.body as T;
}

export function createTrainingRouter(deps: TrainingRouterDeps): Router {
  const { jobs, store } = deps;
  const r = express.Router();
  const id = (req: Request) => String(req.params.id);

  r.get('/v1/training/presets', route(() => ({ presets: PRESETS })));
  r.get('/v1/training/gpus', route(() => (deps.gpuProbe ?? nvidiaSmiProbe)()));
  r.get('/v1/training/runs', route(() => ({ runs: jobs.list() })));
  r.post('/v1/training/runs', route(async (req, res) => {
    const run = await jobs.start(body<StartTrainingRequest>(req));
    res.status(201).json(run);
  }));
  r.get('/v1/training/runs/:id', route((req) => jobs.get(id(req))));
  r.post('/v1/training/runs/:id/pause', route((req) => jobs.pause(id(req))));
  r.post('/v1/training/runs/:id/resume', route((req) => jobs.resume(id(req))));
  r.post('/v1/training/runs/:id/cancel', route((req) => jobs.cancel(id(req))));
  r.post('/v1/training/runs/:id/export', route(async (req) => {
    const b = (req.body ?? {}) as ExportModelRequest;
    const run = await jobs.exportOnnx(id(req), b.quantize !== 'none');
    return { onnxDir: run.onnxDir };
  }));
  r.get('/v1/training/runs/:id/metrics', route((req) => {
    jobs.get(id(req));
    const kind = req.query.kind === 'train' || req.query.kind === 'eval' ? req.query.kind : undefined;
    return { runId: id(req), steps: store.metrics(id(req), { kind, sinceStep: intParam(req.query.since, 'since', 0) }) };
  }));
  r.get('/v1/training/runs/:id/rollouts', route((req) => {
    jobs.get(id(req));
    return { runId: id(req), rollouts: store.rollouts(id(req), Math.min(200, intParam(req.query.limit, 'limit', 20))) };
  }));
  r.get('/v1/training/runs/:id/log', route((req) => {
    jobs.get(id(req));
    return { runId: id(req), lines: store.logLines(id(req), Math.min(500, intParam(req.query.limit, 'limit', 100))) };
  }));

  // The trainer's side.
  r.post('/v1/training/reward', route((req) => jobs.scoreOnly(body<RewardRequest>(req), clientKey('reward', req.headers['x-kimina-client'], req.socket.remoteAddress))));
  const launch = (req: Request) => (typeof req.headers['x-kimina-launch'] === 'string' ? req.headers['x-kimina-launch'] : undefined);
  r.post('/v1/training/runs/:id/reward', route((req) => jobs.reward(id(req), body<RewardRequest>(req), launch(req))));
  r.post('/v1/training/runs/:id/metrics', route((req) => { jobs.report(id(req), body<MetricsReport>(req), launch(req)); return { ok: true }; }));
  r.post('/v1/training/runs/:id/events', route((req) => { jobs.trainerEvent(id(req), body<TrainerEvent>(req), launch(req)); return { ok: true }; }));

  // Live stream: every run first, then changes as they happen.
  r.get('/v1/training/events', (req, res) => {
    const stream = openSse(req, res);
    for (const run of jobs.list()) stream.send('run', { type: 'run', run } satisfies TrainingStreamEvent);
    const listener = (event: TrainingStreamEvent) => stream.send(event.type, event);
    jobs.on('event', listener);
    stream.signal.addEventListener('abort', () => jobs.off('event', listener));
  });
  return r;
}
