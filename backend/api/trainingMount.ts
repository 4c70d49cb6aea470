// Mounting the training service in `kimina serve`: the app's service (backend/app/app.ts builds it over the
// app's stores, verifier and engine; the trainer reaches the server at its URL once it listens, else
// KIMINA_TRAINER_BACKEND_URL, else http://127.0.0.1:<KIMINA_PORT>) and its router.
// Runs that were running resume a moment after the server starts.
import type { Router } from 'express';
import type { TrainingService } from '../training/service';
import type { ApiContext } from './server';
import { createTrainingRouter } from './trainingRoutes';

/** The HTTP routes of a training service. */
export function trainingRouterOf(service: TrainingService): Router {
  return createTrainingRouter({ jobs: service.jobs, store: service.store, gpuProbe: service.gpuProbe });
}

export async function trainingRouterFactory(ctx: ApiContext): Promise<Router> {
  const service = await ctx.training();
  const router = trainingRouterOf(service);
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
