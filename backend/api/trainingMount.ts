// Mounting the training service in `kimina serve`: the service over the server's store, verifier and engine,
// and its router. The trainer reaches the server at ctx.backendUrl() when the server provides it, else at the
// address the first request came in on, else KIMINA_TRAINER_BACKEND_URL, else http://127.0.0.1:<KIMINA_PORT>.
// Runs that were running resume a moment after the server starts.
import express, { type Router } from 'express';
import { openTrainingService, type TrainingService } from '../training/service';
import type { ApiContext } from './server';
import { createTrainingRouter } from './trainingRoutes';

/** The HTTP routes of a training service. */
export function trainingRouterOf(service: TrainingService): Router {
  return createTrainingRouter({ jobs: service.jobs, store: service.store, gpuProbe: service.gpuProbe });
}

export async function trainingRouterFactory(ctx: ApiContext): Promise<Router> {
  const settings = ctx.settings;
  let learned: string | undefined;
  const service = await openTrainingService({
    store: ctx.trainingRuns,
    attempts: ctx.attempts,
    verifier: ctx.verifier,
    token: () => ctx.token,
    deferRecover: true,
    settings,
    // the configured prover model, shared with the prove routes, used by win-rate estimation
    jobs: { engine: ctx.engine },
    backendUrl: () => ctx.backendUrl() ?? learned ?? settings.trainerBackendUrl ?? `http://127.0.0.1:${settings.port}`,
  });
  const router = express.Router();
  router.use((req, _res, next) => {
    learned ??= req.socket.localPort ? `http://127.0.0.1:${req.socket.localPort}` : undefined;
    next();
  });
  router.use(trainingRouterOf(service));
  const resume = setTimeout(() => {
    service.jobs.recover().catch((err: unknown) => console.error(`training: could not resume runs: ${String(err)}`));
  }, 1500);
  resume.unref();
  ctx.onClose(async () => {
    clearTimeout(resume);
    service.detach();
  });
  return router;
}
