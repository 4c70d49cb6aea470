// HTTP face of training: runs and their controls, metrics, rollouts, GPU status and a live SSE stream for
// clients; the reward service, metrics and events routes for the Python trainer.
import type { Request, Router } from 'express';
import type { TrainingStreamEvent } from '../protocol';
import type { TrainingStore } from '../store/training';
import { TrainingError, type TrainingJobs } from '../training/jobs';
import type { GpuProbe } from '../training/gpu';
import { PRESETS } from '../training/presets';
import { serveRoutes } from './contract';
import { openSse } from './sseWriter';
import { clientKey } from '../lean/admission';

export interface TrainingRouterDeps {
  jobs: TrainingJobs;
  store: TrainingStore;
  /** The training service's (nvidia-smi with the base environment, or a test's double). */
  gpuProbe: GpuProbe;
}

function launchOf(req: Request): string | undefined {
  const launch = req.headers['x-kimina-launch'];
  return typeof launch === 'string' ? launch : undefined;
}

export function createTrainingRouter(deps: TrainingRouterDeps): Router {
  const { jobs, store } = deps;
  return serveRoutes(
    {
      trainingPresets: () => ({ presets: PRESETS }),
      trainingGpus: () => deps.gpuProbe(),
      trainingRuns: () => ({ runs: jobs.list() }),
      trainingStart: async ({ body }, _req, res) => {
        res.status(201).json(await jobs.start(body));
      },
      trainingRun: ({ params }) => jobs.get(params.id),
      trainingPause: ({ params }) => jobs.pause(params.id),
      trainingResume: ({ params }) => jobs.resume(params.id),
      trainingCancel: ({ params }) => jobs.cancel(params.id),
      trainingExport: async ({ params, body }) => ({
        onnxDir: (await jobs.exportOnnx(params.id, body?.quantize !== 'none')).onnxDir,
      }),
      trainingMetrics: ({ params, query }) => {
        jobs.get(params.id);
        return { runId: params.id, steps: store.metrics(params.id, { kind: query.kind, sinceStep: query.since ?? 0 }) };
      },
      trainingRollouts: ({ params, query }) => {
        jobs.get(params.id);
        return { runId: params.id, rollouts: store.rollouts(params.id, Math.min(200, query.limit ?? 20)) };
      },
      trainingLog: ({ params, query }) => {
        jobs.get(params.id);
        return { runId: params.id, lines: store.logLines(params.id, Math.min(500, query.limit ?? 100)) };
      },

      // The trainer's side.
      // A trainer names the launch it belongs to (x-kimina-launch): a trainer of an earlier launch is refused.
      trainingReward: ({ body }, req) =>
        jobs.scoreOnly(body, clientKey('reward', req.headers['x-kimina-client'], req.socket.remoteAddress)),
      trainingRunReward: ({ params, body }, req) => jobs.reward(params.id, body, launchOf(req)),
      trainingReport: ({ params, body }, req) => {
        jobs.report(params.id, body, launchOf(req));
        return { ok: true };
      },
      trainingTrainerEvent: ({ params, body }, req) => {
        jobs.trainerEvent(params.id, body, launchOf(req));
        return { ok: true };
      },

      // Live stream: every run first, then changes as they happen.
      trainingEvents: (_input, req, res) => {
        const stream = openSse(req, res);
        for (const run of jobs.list()) stream.send('run', { type: 'run', run } satisfies TrainingStreamEvent);
        const listener = (event: TrainingStreamEvent) => stream.send(event.type, event);
        jobs.on('event', listener);
        stream.signal.addEventListener('abort', () => jobs.off('event', listener));
      },
    },
    { mapError: (err) => (err instanceof TrainingError ? { status: err.status, message: err.message } : undefined) },
  );
}
