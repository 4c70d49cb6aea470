// Wiring training into `kimina serve`: store, reward scorer over the server's verifier, job manager, router.
import { join, resolve } from 'node:path';
import express, { type Router } from 'express';
import { apiTokenFromEnv } from '../api/auth';
import type { RouterFactory } from '../api/server';
import { env } from '../config';
import { openDb } from '../store/db';
import { createEngine, engineConfigFromEnv } from '../model/index';
import { kiminaHome } from '../config';
import type { LeanVerifier } from '../lean/types';
import type { Db } from '../store/db';
import { AttemptStore } from '../store/attempts';
import { TrainingStore } from '../store/training';
import { createTrainingRouter } from '../api/trainingRoutes';
import { harvestAttempts, harvestWorkspace, type Harvest } from './harvest';
import { TrainingJobs, type TrainingJobsOptions } from './jobs';
import { spawnTrainer, type TrainerLauncher } from './trainerProcess';
import { leanRewardScorer, type RewardScorer } from './rewardService';

export interface TrainingServiceOptions {
  db: Db;
  verifier: LeanVerifier;
  /** How the trainer reaches this server, e.g. http://127.0.0.1:8000. */
  backendUrl: () => string;
  token?: () => string | undefined;
  runsRoot?: string;
  /** Replaces the Lean-backed scorer (test doubles only). */
  scorer?: RewardScorer;
  jobs?: Partial<TrainingJobsOptions>;
  /** Leave recover() to the caller (the server calls it once it listens). */
  deferRecover?: boolean;
}

export interface TrainingService {
  jobs: TrainingJobs; store: TrainingStore; router: Router;
  /** Stops the trainers (SIGTERM, they checkpoint); their runs stay 'running' for the next recover(). */
  close(): Promise<void>;
  /**
   * Stops supervising without touching the trainers (the server is shutting down): no more scheduling,
   * running trainers are neither signalled nor cancelled. Their runs stay 'running' with their pid, and the
   * next backend's recover() takes them over (stops the orphan, resumes from its checkpoint).
   */
  detach(): void;
}

/** The backend's database (the same file the prover's attempts live in: KIMINA_DB, else <KIMINA_HOME>/kimina.db). */
export function databasePath(): string {
  return resolve(process.env.KIMINA_DB || join(kiminaHome(), 'kimina.db'));
}

export function trainingRunsRoot(): string {
  return process.env.KIMINA_TRAINING_DIR || join(kiminaHome(), 'training');
}

/** Personal proofs: the workspace's Lean files plus the prover's attempt history in the same database. */
export function harvester(db: Db): (workspace: string) => Harvest {
  return (workspace) => {
    const files = harvestWorkspace(workspace);
    const history = harvestAttempts(new AttemptStore(db));
    return { prompts: [...files.prompts, ...history.prompts], fixSeeds: history.fixSeeds, files: files.files, skipped: files.skipped };
  };
}

/** Builds the service and resumes runs that were running when the backend stopped. */
export async function openTrainingService(o: TrainingServiceOptions): Promise<TrainingService> {
  const store = new TrainingStore(o.db);
  let detached = false;
  const launch = o.jobs?.launcher ?? spawnTrainer;
  // Once detached, the job manager's signals no longer reach the trainers it launched.
  const launcher: TrainerLauncher = (spec) => {
    const handle = launch(spec);
    return { pid: handle.pid, exited: handle.exited, kill: (signal) => { if (!detached) handle.kill(signal); } };
  };
  const jobs = new TrainingJobs({
    store, runsRoot: o.runsRoot ?? trainingRunsRoot(), backendUrl: o.backendUrl, token: o.token,
    scorer: o.scorer ?? leanRewardScorer({ verifier: o.verifier }), harvest: harvester(o.db), ...o.jobs, launcher,
  });
  if (!o.deferRecover) await jobs.recover();
  return {
    jobs, store, router: createTrainingRouter({ jobs, store, gpuProbe: o.jobs?.gpuProbe }),
    close: () => jobs.close(5000),
    detach: () => {
      detached = true;
      // close() stops the scheduler at once; its signals are dropped and the exits it waits for are not awaited.
      void jobs.close(0);
    },
  };
}

/**
 * The router `kimina serve` mounts (backend/api/mounts.ts). The trainer reaches the server at ctx.backendUrl()
 * when the server provides it, else at the address the first request came in on, else KIMINA_TRAINER_BACKEND_URL,
 * else http://127.0.0.1:$KIMINA_PORT. Runs that were running resume a moment after the server starts.
 */
export const trainingRouterFactory: RouterFactory = async (ctx) => {
  const db = openDb(databasePath());
  let learned: string | undefined;
  const fromCtx = typeof ctx.backendUrl === 'function' ? (ctx.backendUrl as () => string | undefined) : () => undefined;
  let engine: ReturnType<typeof createEngine> | null = null;
  const service = await openTrainingService({
    db, verifier: ctx.verifier, token: () => ctx.token ?? apiTokenFromEnv(), deferRecover: true,
    // the configured prover model (KIMINA_ENGINE / KIMINA_MODEL), loaded on the first win-rate estimation
    jobs: { engine: () => (engine ??= createEngine(engineConfigFromEnv())) },
    backendUrl: () => fromCtx() ?? learned ?? process.env.KIMINA_TRAINER_BACKEND_URL ?? `http://127.0.0.1:${env.num('KIMINA_PORT', 8000)}`,
  });
  const router = express.Router();
  router.use((req, _res, next) => {
    learned ??= req.socket.localPort ? `http://127.0.0.1:${req.socket.localPort}` : undefined;
    next();
  });
  router.use(service.router);
  const resume = setTimeout(() => { service.jobs.recover().catch((err: unknown) => console.error(`training: could not resume runs: ${String(err)}`)); }, 1500);
  resume.unref();
  ctx.onClose?.(async () => {
    clearTimeout(resume);
    service.detach();
    const made = await engine?.catch(() => null);
    await made?.close();
  });
  return router;
};
