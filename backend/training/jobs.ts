// The job manager: creates, schedules (one run per GPU set, optionally only when the GPUs are idle),
// launches and supervises trainer processes, pauses, resumes, cancels, and restarts a crashed trainer from its
// last checkpoint. State lives in SQLite (TrainingStore), so runs survive a restart of the backend.
import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, realpathSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type {
  MetricsReport,
  RewardRequest,
  RewardResponse,
  StartTrainingRequest,
  TrainerEvent,
  TrainingPrompt,
  TrainingRun,
  TrainingStreamEvent,
} from '../protocol';
import type { TrainingStore } from '../store/training';
import { mkdirInside } from '../store/safePaths';
import { nvidiaSmiProbe, gpuSetsOverlap, gpusIdle, type GpuProbe } from './gpu';
import { dedupe, type FixSeed, type Harvest } from './harvest';
import { trainerSourceDir, TrainerMissing } from './paths';
import { presetHyper } from './presets';
import { estimateWinRates, filterByWinRate, splitHeldOut, trainerRows } from './promptSet';
import type { Engine } from '../model/engine';
import { DEFAULT_VERDICT_MODE, isVerdictMode, VERDICT_MODES } from '../lean/verdictModes';
import { MAX_REWARD_ITEMS, rewardMetrics, type RewardScorer, type ScoredItem } from './rewardService';
import {
  isOurTrainer,
  logTail,
  runFiles,
  killTrainerTree,
  spawnTrainer,
  trainerConfig,
  writeTrainerConfig,
  type TrainerExit,
  type TrainerHandle,
  type TrainerLauncher,
} from './trainerProcess';

export interface TrainingJobsOptions {
  store: TrainingStore;
  /** Folder holding one sub-folder per run. */
  runsRoot: string;
  /** How the trainer reaches this backend (http://127.0.0.1:PORT). */
  backendUrl: () => string;
  token?: () => string | undefined;
  scorer: RewardScorer;
  /** The interpreter that runs the trainer (training/paths.ts trainerPython over the settings). */
  python: () => string;
  sourceDir?: () => string;
  /** PYTHONPATH to keep for the trainer after its own sources (the PYTHONPATH setting). */
  pythonPath?: string;
  /** The base environment the trainer starts from, handed down by the root (Settings.childEnv). */
  childEnv: NodeJS.ProcessEnv;
  launcher?: TrainerLauncher;
  gpuProbe?: GpuProbe;
  /** Harvests personal proofs from a workspace folder. */
  harvest?: (workspace: string) => Promise<Harvest> | Harvest;
  /** Crash restarts before a run is marked failed. */
  maxRestarts?: number;
  restartDelayMs?: number;
  /** How often queued `when-idle` runs re-check the GPUs. */
  pollMs?: number;
  /** Rollouts kept per reward call for the monitor. */
  rolloutsPerBatch?: number;
  /** ONNX conversion of the final weights (backend/model/onnx/convert.ts), when available. */
  convert?: (srcDir: string, outDir: string, options: { quantize: boolean }) => Promise<unknown>;
  /** The current prover model, for win-rate estimation (StartTrainingRequest.winRate). */
  engine?: () => Promise<Pick<Engine, 'generate'>>;
}

type Intent = 'pause' | 'cancel' | 'shutdown' | null;
interface Active {
  handle: TrainerHandle;
  intent: Intent;
  finished: boolean;
  launchId: string;
}

export class TrainingError extends Error {
  constructor(
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

export class TrainingJobs extends EventEmitter {
  private readonly active = new Map<string, Active>();
  private timer: NodeJS.Timeout | null = null;
  private closed = false;
  private scheduling: Promise<void> = Promise.resolve();
  /** Reward batches of recent steps, per run/step/purpose (only aggregates are kept). */
  private readonly batches = new Map<
    string,
    { items: RewardRequest['items']; results: Pick<ScoredItem, 'acc' | 'score' | 'formatError'>[] }
  >();

  constructor(private readonly o: TrainingJobsOptions) {
    super();
    this.setMaxListeners(100); // one listener per connected monitor (SSE)
    mkdirSync(o.runsRoot, { recursive: true, mode: 0o700 });
    this.timer = setInterval(() => void this.schedule(), o.pollMs ?? 30_000);
    this.timer.unref();
  }

  private emitEvent(event: TrainingStreamEvent): void {
    this.emit('event', event);
  }

  private publish(run: TrainingRun): TrainingRun {
    this.emitEvent({ type: 'run', run });
    return run;
  }

  private log(runId: string, message: string): void {
    this.emitEvent({ type: 'log', runId, line: this.o.store.log(runId, message) });
  }

  list(): TrainingRun[] {
    return this.o.store.listRuns();
  }

  get(id: string): TrainingRun {
    const run = this.o.store.getRun(id);
    if (!run) throw new TrainingError(`no training run '${id}'`, 404);
    return run;
  }

  /** Creates a run: gathers prompts (given and harvested), splits held-out, writes the run folder, queues it. */
  async start(req: StartTrainingRequest): Promise<TrainingRun> {
    if (!req || typeof req.model !== 'string' || req.model.trim() === '')
      throw new TrainingError('model is required (a Hugging Face id or a local folder)');
    let hyper;
    try {
      hyper = presetHyper(req.preset, req.overrides);
    } catch (err) {
      throw new TrainingError((err as Error).message);
    }
    if (req.preset === 'recipe-8gpu')
      throw new TrainingError('the recipe-8gpu preset runs on a Ray cluster: use `kimina train export-verl`');
    const schedule = req.schedule ?? 'now';
    if (schedule !== 'now' && schedule !== 'when-idle')
      throw new TrainingError(`schedule must be now or when-idle, got '${schedule}'`);
    let prompts: TrainingPrompt[] = [...(req.prompts ?? [])];
    let fixSeeds: FixSeed[] = [];
    let harvestNote = '';
    if (req.workspace) {
      if (!this.o.harvest) throw new TrainingError('harvesting a workspace is not available here');
      if (!existsSync(req.workspace)) throw new TrainingError(`workspace not found: ${req.workspace}`);
      const real = realpathSync(req.workspace);
      if (real === '/' || real === realpathSync(homedir())) {
        throw new TrainingError(
          `the workspace must be a project folder, not ${real === '/' ? 'the filesystem root' : 'your home folder'}: its .lean files become training prompts`,
        );
      }
      const h = await this.o.harvest(req.workspace);
      prompts.push(...h.prompts);
      fixSeeds = h.fixSeeds;
      if (h.truncated) harvestNote = `; the workspace walk stopped early (${h.truncated}) after ${h.files} files`;
    }
    for (const p of prompts) {
      if (!p || typeof p.id !== 'string' || !Array.isArray(p.prompt) || typeof p.formalStatement !== 'string') {
        throw new TrainingError('each prompt needs id, prompt (chat messages) and formalStatement');
      }
    }
    prompts = dedupe(prompts);
    const split = req.heldOut
      ? { train: prompts, heldOut: req.heldOut }
      : splitHeldOut(prompts, hyper.heldOutShare, hyper.seed);
    if (!req.heldOut && split.heldOut.length > hyper.evalPrompts)
      split.train.push(...split.heldOut.splice(hyper.evalPrompts));
    if (split.train.length === 0)
      throw new TrainingError('no training prompts: give prompts or a workspace with theorems');
    if (req.winRate) {
      if (!Number.isInteger(req.winRate.samples) || req.winRate.samples < 1)
        throw new TrainingError('winRate.samples must be a positive integer');
      if (!this.o.engine)
        throw new TrainingError('win-rate filtering needs the prover engine, which this backend does not have');
    }
    const gpus = req.gpus ?? (await this.defaultGpus());
    const id = `run-${new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14)}-${randomUUID().slice(0, 6)}`;
    const dir = join(this.o.runsRoot, id);
    const files = runFiles(dir);
    mkdirInside(this.o.runsRoot, files.output, 0o700);
    writeFileSync(files.train, trainerRows(split.train), { mode: 0o600 });
    writeFileSync(files.heldOut, trainerRows(split.heldOut), { mode: 0o600 });
    if (fixSeeds.length)
      writeFileSync(
        join(dir, 'fix_seed.jsonl'),
        fixSeeds
          .map((s) => JSON.stringify({ prompt_id: s.id, prompt: s.prompt, formal_statement: s.formalStatement }))
          .join('\n') + '\n',
        { mode: 0o600 },
      );
    const run = this.o.store.createRun({
      id,
      name: req.name?.trim() || `${req.preset} on ${req.model.split('/').pop()}`,
      preset: req.preset,
      model: req.model,
      gpus,
      schedule,
      hyper,
      outputDir: files.output,
      trainPrompts: split.train.length,
      heldOutPrompts: split.heldOut.length,
    });
    this.log(
      id,
      `created: ${split.train.length} training prompts, ${split.heldOut.length} held out, GPUs ${gpus}, ${schedule}${harvestNote}`,
    );
    this.publish(run);
    if (req.winRate) {
      this.publish(this.o.store.updateRun(id, { state: 'preparing' }));
      void this.filterPrompts(id, split.train, req.winRate, files.train);
      return this.get(id);
    }
    await this.schedule();
    return this.get(id);
  }

  /** In the background: win rates with the current model, the recipe's filter, then the run is queued. */
  private async filterPrompts(
    id: string,
    train: TrainingPrompt[],
    options: NonNullable<StartTrainingRequest['winRate']>,
    file: string,
  ): Promise<void> {
    try {
      const run = this.get(id);
      this.log(id, `estimating win rates: ${options.samples} samples for each of ${train.length} prompts`);
      const engine = await this.o.engine!();
      const rates = await estimateWinRates(train, {
        engine,
        scorer: this.o.scorer,
        samples: options.samples,
        sampling: {
          maxTokens: run.hyper.maxCompletionLength,
          temperature: run.hyper.temperature,
          topP: run.hyper.topP,
        },
      });
      const kept = filterByWinRate(train, rates, {
        maxWinRate: options.maxWinRate ?? 0.5,
        hardCopies: options.hardCopies ?? 2,
      });
      if (this.get(id).state !== 'preparing') return; // cancelled meanwhile
      if (kept.length === 0) {
        this.publish(
          this.o.store.updateRun(id, {
            state: 'failed',
            error: 'every prompt is already won more often than the win-rate limit: nothing left to train on',
          }),
        );
        return;
      }
      writeFileSync(file, trainerRows(kept), { mode: 0o600 });
      const dropped = rates.filter((r) => r > (options.maxWinRate ?? 0.5)).length;
      this.log(
        id,
        `win-rate filter: ${dropped} easy prompts dropped, ${kept.length} training prompts (never-won ones repeated)`,
      );
      this.publish(this.o.store.updateRun(id, { state: 'queued', trainPrompts: kept.length }));
      await this.schedule();
    } catch (err) {
      this.publish(
        this.o.store.updateRun(id, { state: 'failed', error: `win-rate estimation failed: ${(err as Error).message}` }),
      );
    }
  }

  private async defaultGpus(): Promise<string> {
    const report = await (this.o.gpuProbe ?? nvidiaSmiProbe(this.o.childEnv))();
    return report.available && report.gpus.length ? report.gpus.map((g) => g.index).join(',') : 'cpu';
  }

  /** Starts queued runs whose GPU set is free (and idle, for `when-idle`). Serialized. */
  schedule(): Promise<void> {
    this.scheduling = this.scheduling
      .then(() => this.scheduleOnce())
      .catch((err: unknown) => {
        console.error(`training: scheduling failed: ${err instanceof Error ? err.message : String(err)}`);
      });
    return this.scheduling;
  }

  private async scheduleOnce(): Promise<void> {
    if (this.closed) return;
    const queued = this.o.store.listRuns(['queued']).reverse(); // oldest first
    let report: Awaited<ReturnType<GpuProbe>> | null = null;
    for (const run of queued) {
      const busy = [...this.active.keys()]
        .map((id) => this.o.store.getRun(id))
        .some((r) => r && gpuSetsOverlap(r.gpus, run.gpus));
      if (busy) continue;
      if (run.schedule === 'when-idle') {
        report ??= await (this.o.gpuProbe ?? nvidiaSmiProbe(this.o.childEnv))();
        if (!gpusIdle(report, run.gpus)) continue;
      }
      this.launch(run);
    }
  }

  private launch(run: TrainingRun): void {
    const dir = join(this.o.runsRoot, run.id);
    const files = runFiles(dir);
    const launchId = randomUUID(); // posts from any other process for this run (a stale trainer) are refused
    let handle: TrainerHandle;
    try {
      if (!existsSync(files.train)) throw new Error(`the run folder ${dir} lost its prompts (train.jsonl)`);
      const config = trainerConfig({
        runId: run.id,
        backendUrl: this.o.backendUrl(),
        token: this.o.token?.(),
        model: run.model,
        outputDir: files.output,
        trainFile: files.train,
        heldOutFile: run.heldOutPrompts > 0 ? files.heldOut : null,
        hyper: run.hyper,
        cpu: run.gpus === 'cpu',
        launchId,
      });
      if (existsSync(join(dir, 'fix_seed.jsonl'))) config.fix_seed_file = join(dir, 'fix_seed.jsonl');
      mkdirInside(this.o.runsRoot, files.output, 0o700);
      writeTrainerConfig(files.config, config);
      const python = this.o.python();
      if (/[\\/]/.test(python) && !existsSync(python))
        throw new TrainerMissing(
          `${python} does not exist: run \`kimina trainer setup\` (or set KIMINA_TRAINER_PYTHON)`,
        );
      handle = (this.o.launcher ?? spawnTrainer)({
        python,
        sourceDir: (this.o.sourceDir ?? trainerSourceDir)(),
        configPath: files.config,
        logPath: files.log,
        gpus: run.gpus,
        ...(this.o.pythonPath ? { pythonPath: this.o.pythonPath } : {}),
        env: this.o.childEnv,
      });
    } catch (err) {
      this.publish(
        this.o.store.updateRun(run.id, {
          state: 'failed',
          pid: null,
          error: `could not start the trainer: ${(err as Error).message}`,
        }),
      );
      return;
    }
    const entry: Active = { handle, intent: null, finished: false, launchId };
    this.active.set(run.id, entry);
    this.publish(this.o.store.updateRun(run.id, { state: 'running', pid: handle.pid, error: null }));
    this.log(
      run.id,
      `trainer started (pid ${handle.pid}${run.checkpointStep ? `, resuming from step ${run.checkpointStep}` : ''})`,
    );
    void handle.exited.then((exit) => this.onExit(run.id, entry, exit));
  }

  private onExit(id: string, entry: Active, exit: TrainerExit): void {
    this.active.delete(id);
    const run = this.o.store.getRun(id);
    if (!run) return;
    const how = exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
    if (entry.intent === 'shutdown') {
      this.o.store.updateRun(id, { pid: null });
      return; // stays 'running': recover() resumes it when the backend starts again
    }
    if (entry.intent === 'cancel') {
      this.log(id, `cancelled (trainer ${how})`);
      this.publish(this.o.store.updateRun(id, { state: 'cancelled', pid: null }));
    } else if (entry.finished && exit.code === 0) {
      this.log(id, 'finished');
      this.publish(this.o.store.updateRun(id, { state: 'completed', pid: null }));
    } else if (exit.code === 0 || entry.intent === 'pause') {
      this.log(id, `paused at step ${run.checkpointStep}`);
      this.publish(this.o.store.updateRun(id, { state: 'paused', pid: null }));
    } else if (exit.code === 2) {
      const tail = logTail(runFiles(join(this.o.runsRoot, id)).log, 5);
      this.publish(
        this.o.store.updateRun(id, {
          state: 'failed',
          pid: null,
          error: `the trainer refused its configuration:\n${tail}`,
        }),
      );
    } else if (run.restarts < (this.o.maxRestarts ?? 3)) {
      this.log(id, `trainer exited (${how}); restarting from the checkpoint at step ${run.checkpointStep}`);
      this.publish(this.o.store.updateRun(id, { state: 'queued', pid: null, restarts: run.restarts + 1 }));
      const t = setTimeout(() => void this.schedule(), this.o.restartDelayMs ?? 2000);
      t.unref();
      return;
    } else {
      const tail = logTail(runFiles(join(this.o.runsRoot, id)).log);
      this.log(id, `failed after ${run.restarts} restarts (${how})`);
      this.publish(
        this.o.store.updateRun(id, { state: 'failed', pid: null, error: `trainer exited (${how}):\n${tail}` }),
      );
    }
    void this.schedule();
  }

  pause(id: string): TrainingRun {
    const run = this.get(id);
    const a = this.active.get(id);
    if (a) {
      a.intent = 'pause';
      a.handle.kill('SIGTERM'); // the step in flight finishes, a checkpoint is written, then it exits
      this.log(id, 'pausing: finishing the current step and saving a checkpoint');
      return this.publish(this.o.store.updateRun(id, { state: 'pausing' }));
    }
    if (run.state !== 'queued')
      throw new TrainingError(`run is ${run.state}; only queued or running runs can be paused`, 409);
    return this.publish(this.o.store.updateRun(id, { state: 'paused' }));
  }

  async resume(id: string): Promise<TrainingRun> {
    const run = this.get(id);
    if (!['paused', 'failed'].includes(run.state))
      throw new TrainingError(`run is ${run.state}; only paused or failed runs can be resumed`, 409);
    this.publish(this.o.store.updateRun(id, { state: 'queued', restarts: 0, error: null }));
    this.log(id, `resuming from the checkpoint at step ${run.checkpointStep}`);
    await this.schedule();
    return this.get(id);
  }

  cancel(id: string): TrainingRun {
    const run = this.get(id);
    const a = this.active.get(id);
    if (a) {
      a.intent = 'cancel';
      a.handle.kill('SIGKILL');
      return this.publish(this.o.store.updateRun(id, { state: 'cancelled' }));
    }
    if (['completed', 'cancelled'].includes(run.state)) throw new TrainingError(`run is already ${run.state}`, 409);
    // a preparing run: the background filter sees the state change and stops there
    this.log(id, 'cancelled');
    return this.publish(this.o.store.updateRun(id, { state: 'cancelled' }));
  }

  /** After a backend restart: stops orphaned trainers of this store and re-queues runs that were running. */
  async recover(): Promise<void> {
    for (const run of this.o.store.listRuns(['running', 'pausing'])) {
      if (this.active.has(run.id)) continue;
      const pid = this.o.store.pidOf(run.id);
      const config = runFiles(join(this.o.runsRoot, run.id)).config;
      const env = this.o.childEnv;
      if (pid && (await isOurTrainer(pid, config, env))) {
        killTrainerTree(pid, env); // normally gone already: a trainer dies with its backend
        for (let i = 0; i < 50 && (await isOurTrainer(pid, config, env)); i++)
          await new Promise((r) => setTimeout(r, 100));
      }
      const state = run.state === 'pausing' ? 'paused' : 'queued';
      this.log(
        run.id,
        state === 'queued'
          ? `backend restarted: resuming from the checkpoint at step ${run.checkpointStep}`
          : 'backend restarted while pausing: paused',
      );
      this.publish(this.o.store.updateRun(run.id, { state, pid: null }));
    }
    await this.schedule();
  }

  /** The reward service for a run's trainer: scores, stores the batch metrics and a sample of rollouts. */
  async reward(id: string, req: RewardRequest, launch?: string): Promise<RewardResponse> {
    this.get(id);
    this.assertCurrentLaunch(id, launch);
    validateReward(req);
    const purpose = req.purpose === 'eval' ? 'eval' : 'train';
    const scored = await this.o.scorer(req.items, { client: `trainer:${id}` }); // each run is its own client
    // The trainer sends a step's batch in chunks (body size limit): metrics cover every chunk of the step so far.
    const acc = this.accumulate(`${id}\u0000${req.step}\u0000${purpose}`, req.items, scored);
    const metrics = rewardMetrics(acc.items, acc.results);
    const kind = purpose;
    const prefixed =
      kind === 'eval' ? Object.fromEntries(Object.entries(metrics).map(([k, v]) => [`eval/${k}`, v])) : metrics;
    this.o.store.putMetrics(id, req.step, kind, prefixed);
    this.emitEvent({ type: 'metrics', runId: id, step: req.step, kind, metrics: prefixed });
    const sample = pickSample(scored, this.o.rolloutsPerBatch ?? 4);
    const rollouts = this.o.store.addRollouts(
      id,
      sample.map((i) => ({
        step: req.step,
        purpose,
        promptId: String(req.items[i].promptId),
        turn: req.items[i].turn,
        think: scored[i].think,
        code: scored[i].code,
        response: req.items[i].response.slice(0, 20_000),
        formatError: scored[i].formatError,
        verdict: scored[i].verdict,
        score: scored[i].score,
      })),
    );
    if (rollouts.length) this.emitEvent({ type: 'rollouts', runId: id, rollouts });
    return { results: scored.map(({ think: _think, ...result }) => result) };
  }

  /** Scoring only, stored nowhere: the reward service for clusters (verl's reward module). */
  async scoreOnly(req: RewardRequest, client?: string): Promise<RewardResponse> {
    validateReward(req);
    const scored = await this.o.scorer(req.items, { client, mode: req.mode ?? DEFAULT_VERDICT_MODE });
    return { results: scored.map(({ think: _think, ...result }) => result) };
  }

  private accumulate(key: string, items: RewardRequest['items'], scored: ScoredItem[]) {
    let entry = this.batches.get(key);
    if (!entry) {
      entry = { items: [], results: [] };
      this.batches.set(key, entry);
      while (this.batches.size > 8) this.batches.delete(this.batches.keys().next().value as string);
    }
    entry.items.push(...items);
    entry.results.push(...scored.map(({ acc, score, formatError }) => ({ acc, score, formatError })));
    return entry;
  }

  /** Per-step metrics from the trainer. A resumed run re-reports redone steps, replacing their values. */
  report(id: string, m: MetricsReport, launch?: string): void {
    const run = this.get(id);
    this.assertCurrentLaunch(id, launch);
    if (!m || !Number.isInteger(m.step) || m.step < 0 || typeof m.metrics !== 'object')
      throw new TrainingError('metrics need step and metrics');
    const kind = m.kind === 'eval' ? 'eval' : 'train';
    const clean = Object.fromEntries(
      Object.entries(m.metrics).filter(([, v]) => typeof v === 'number' && Number.isFinite(v)),
    );
    this.o.store.putMetrics(id, m.step, kind, clean);
    this.emitEvent({ type: 'metrics', runId: id, step: m.step, kind, metrics: clean });
    if (kind === 'train') {
      this.publish(this.o.store.updateRun(id, { step: m.step }));
    } else {
      const all = Object.fromEntries(
        this.o.store
          .metrics(id, { kind: 'eval', sinceStep: m.step })
          .filter((s) => s.step === m.step)
          .flatMap((s) => Object.entries(s.metrics)),
      );
      const summary = { step: m.step, metrics: all };
      this.publish(
        this.o.store.updateRun(
          id,
          m.step === 0 || !run.baseEval ? { baseEval: summary, latestEval: summary } : { latestEval: summary },
        ),
      );
    }
  }

  trainerEvent(id: string, e: TrainerEvent, launch?: string): void {
    this.get(id);
    this.assertCurrentLaunch(id, launch);
    switch (e?.kind) {
      case 'started':
        this.log(id, `training from step ${e.step} to ${e.maxSteps}`);
        break;
      case 'checkpoint':
        this.publish(this.o.store.updateRun(id, { checkpointStep: e.step }));
        this.log(id, `checkpoint at step ${e.step}`);
        break;
      case 'log':
        this.log(id, String(e.message).slice(0, 2000));
        break;
      case 'stopped':
        this.log(id, `trainer stopped at step ${e.step}`);
        break;
      case 'finished': {
        const a = this.active.get(id);
        if (a) a.finished = true;
        this.publish(this.o.store.updateRun(id, { finalDir: e.finalDir ?? null, step: e.step }));
        break;
      }
      default:
        throw new TrainingError(`unknown trainer event '${(e as { kind?: string })?.kind}'`);
    }
  }

  /** Converts a finished run's merged weights to ONNX for the in-process engine. */
  async exportOnnx(id: string, quantize: boolean): Promise<TrainingRun> {
    const run = this.get(id);
    if (!run.finalDir || !existsSync(run.finalDir))
      throw new TrainingError('the run has no final weights yet (it must finish first)', 409);
    const convert =
      this.o.convert ??
      (async (src: string, dst: string, opts: { quantize: boolean }) => {
        const { convertCheckpoint } = await import('../model/onnx/convert');
        return convertCheckpoint(src, dst, { quantize: opts.quantize ? 'q4' : 'fp32' });
      });
    const out = join(this.o.runsRoot, id, quantize ? 'onnx-q4' : 'onnx');
    this.log(id, `exporting ${run.finalDir} to ONNX (${quantize ? 'q4' : 'fp32'})`);
    try {
      await convert(run.finalDir, out, { quantize });
    } catch (err) {
      throw new TrainingError(`ONNX export failed: ${(err as Error).message}`, 500);
    }
    return this.publish(this.o.store.updateRun(id, { onnxDir: out }));
  }

  /** Stops the timer; running trainers get SIGTERM (they checkpoint) and stay 'running' for recover(). */
  async close(graceMs = 30_000): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const waits = [...this.active.values()].map((a) => {
      a.intent = 'shutdown';
      a.handle.kill('SIGTERM');
      const kill = setTimeout(() => a.handle.kill('SIGKILL'), graceMs);
      return a.handle.exited.finally(() => clearTimeout(kill));
    });
    await Promise.all(waits);
  }

  isActive(id: string): boolean {
    return this.active.has(id);
  }

  /**
   * A trainer names its launch (X-Kimina-Launch); one that is not the run's current trainer of this backend (left
   * from before a restart, or replaced) is refused with 409 so that it stops and posts nothing stale.
   */
  private assertCurrentLaunch(id: string, launch: string | undefined): void {
    if (launch === undefined) return;
    if (this.active.get(id)?.launchId !== launch) {
      throw new TrainingError(
        `this trainer is not the current one of run '${id}' (left from an earlier launch): stop`,
        409,
      );
    }
  }
}

function validateReward(req: RewardRequest): void {
  if (!req || !Array.isArray(req.items) || !Number.isInteger(req.step))
    throw new TrainingError('reward needs step and items');
  if (req.mode !== undefined && !isVerdictMode(req.mode))
    throw new TrainingError(`mode must be ${VERDICT_MODES.join(' or ')}, got ${JSON.stringify(req.mode)}`);
  if (req.items.length > MAX_REWARD_ITEMS) {
    throw new TrainingError(
      `at most ${MAX_REWARD_ITEMS} answers per reward request, got ${req.items.length}: send them in several requests`,
      413,
    );
  }
  for (const it of req.items) {
    if (
      !it ||
      typeof it.response !== 'string' ||
      typeof it.formalStatement !== 'string' ||
      !Array.isArray(it.previous) ||
      !it.previous.every((p) => typeof p === 'string') ||
      !Number.isInteger(it.turn) ||
      it.turn < 1
    ) {
      throw new TrainingError(
        'each reward item needs promptId, turn (1 or 2), formalStatement, previous[] and response',
      );
    }
  }
}

/** Up to n rollouts spread over the batch (one per group when groups are larger than the batch / n). */
function pickSample(scored: ScoredItem[], n: number): number[] {
  if (scored.length <= n) return scored.map((_, i) => i);
  const step = scored.length / n;
  return Array.from({ length: n }, (_, k) => Math.floor(k * step));
}
