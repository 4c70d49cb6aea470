// The training service: store, reward scorer over the server's verifier, job manager. The HTTP face
// (backend/api/trainingMount.ts) mounts it in `kimina serve`; nothing here knows about HTTP.
import type { Settings } from '../settings/settings';
import { nvidiaSmiProbe, type GpuProbe } from './gpu';
import type { LeanVerifier } from '../lean/types';
import type { AttemptStore } from '../store/attempts';
import type { TrainingStore } from '../store/training';
import { harvestAttempts, harvestWorkspace, type Harvest } from './harvest';
import { TrainingJobs, type TrainingJobsOptions } from './jobs';
import { trainerPython } from './paths';
import { spawnTrainer, type TrainerLauncher } from './trainerProcess';
import { leanRewardScorer, type RewardScorer } from './rewardService';

export interface TrainingServiceOptions {
  /** The app's stores (backend/app/app.ts builds them): the runs, and the attempts personal proofs are harvested from. */
  store: TrainingStore;
  attempts: AttemptStore;
  verifier: LeanVerifier;
  /** How the trainer reaches this server, e.g. http://127.0.0.1:8000. */
  backendUrl: () => string;
  token?: () => string | undefined;
  /** The settings the service reads, handed down by the composition root. */
  settings: Pick<Settings, 'trainingDir' | 'trainerPython' | 'trainerVenv' | 'pythonPath' | 'childEnv'>;
  /** Default: settings.trainingDir. */
  runsRoot?: string;
  /** Replaces the Lean-backed scorer (test doubles only). */
  scorer?: RewardScorer;
  jobs?: Partial<TrainingJobsOptions>;
  /** Leave recover() to the caller (the server calls it once it listens). */
  deferRecover?: boolean;
}

export interface TrainingService {
  jobs: TrainingJobs;
  store: TrainingStore;
  /** How GPUs are found (the HTTP face's GPU route asks it too). */
  gpuProbe: GpuProbe;
  /** Stops the trainers (SIGTERM, they checkpoint); their runs stay 'running' for the next recover(). */
  close(): Promise<void>;
  /**
   * Stops supervising without signalling the trainers (the server is shutting down): no more scheduling, nothing
   * cancelled. The trainers end when this process exits (their lifeline: trainerProcess.ts), their runs stay
   * 'running', and the next backend's recover() resumes them from their last checkpoint.
   */
  detach(): void;
}

/** Personal proofs: the workspace's Lean files plus the prover's attempt history in the same database. */
function harvester(attempts: AttemptStore): (workspace: string) => Promise<Harvest> {
  return async (workspace) => {
    const files = await harvestWorkspace(workspace);
    const history = harvestAttempts(attempts);
    return {
      prompts: [...files.prompts, ...history.prompts],
      fixSeeds: history.fixSeeds,
      files: files.files,
      skipped: files.skipped,
      truncated: files.truncated,
    };
  };
}

/** Builds the service and resumes runs that were running when the backend stopped. */
export async function openTrainingService(o: TrainingServiceOptions): Promise<TrainingService> {
  const store = o.store;
  let detached = false;
  const launch = o.jobs?.launcher ?? spawnTrainer;
  const gpuProbe = o.jobs?.gpuProbe ?? nvidiaSmiProbe(o.settings.childEnv);
  // Once detached, the job manager's signals no longer reach the trainers it launched.
  const launcher: TrainerLauncher = (spec) => {
    const handle = launch(spec);
    return {
      pid: handle.pid,
      exited: handle.exited,
      kill: (signal) => {
        if (!detached) handle.kill(signal);
      },
    };
  };
  const jobs = new TrainingJobs({
    store,
    runsRoot: o.runsRoot ?? o.settings.trainingDir,
    python: () => trainerPython(o.settings),
    ...(o.settings.pythonPath ? { pythonPath: o.settings.pythonPath } : {}),
    childEnv: o.settings.childEnv,
    backendUrl: o.backendUrl,
    token: o.token,
    scorer: o.scorer ?? leanRewardScorer({ verifier: o.verifier }),
    harvest: harvester(o.attempts),
    ...o.jobs,
    gpuProbe,
    launcher,
  });
  if (!o.deferRecover) await jobs.recover();
  return {
    jobs,
    store,
    gpuProbe,
    close: () => jobs.close(5000),
    detach: () => {
      if (detached) return;
      detached = true;
      // close() stops the scheduler at once; its signals are dropped and the exits it waits for are not awaited.
      void jobs.close(0);
    },
  };
}
