// Training tables: runs (state survives restarts), per-step metrics, a bounded sample of rollouts, a run log.
import { migrate, type Db } from './db';
import type {
  MetricKind,
  RolloutSample,
  StepMetrics,
  TrainingEvalSummary,
  TrainingHyperparameters,
  TrainingLogLine,
  TrainingPresetName,
  TrainingRun,
  TrainingRunState,
  TrainingSchedule,
} from '../protocol';

const STEPS = [
  `CREATE TABLE training_runs (
     id TEXT PRIMARY KEY, name TEXT NOT NULL, state TEXT NOT NULL, preset TEXT NOT NULL, model TEXT NOT NULL,
     gpus TEXT NOT NULL, schedule TEXT NOT NULL, hyper TEXT NOT NULL, created_at TEXT NOT NULL, updated_at TEXT NOT NULL,
     step INTEGER NOT NULL DEFAULT 0, checkpoint_step INTEGER NOT NULL DEFAULT 0, restarts INTEGER NOT NULL DEFAULT 0,
     train_prompts INTEGER NOT NULL DEFAULT 0, held_out_prompts INTEGER NOT NULL DEFAULT 0, output_dir TEXT NOT NULL,
     final_dir TEXT, base_eval TEXT, latest_eval TEXT, onnx_dir TEXT, error TEXT, pid INTEGER);
   CREATE TABLE training_metrics (
     run_id TEXT NOT NULL REFERENCES training_runs(id) ON DELETE CASCADE, step INTEGER NOT NULL, kind TEXT NOT NULL,
     key TEXT NOT NULL, value REAL NOT NULL, PRIMARY KEY (run_id, step, kind, key));
   CREATE TABLE training_rollouts (
     id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES training_runs(id) ON DELETE CASCADE,
     step INTEGER NOT NULL, purpose TEXT NOT NULL, prompt_id TEXT NOT NULL, turn INTEGER NOT NULL, think TEXT NOT NULL,
     code TEXT, response TEXT NOT NULL, format_error TEXT NOT NULL, verdict TEXT, score REAL NOT NULL, created_at TEXT NOT NULL);
   CREATE INDEX training_rollouts_run ON training_rollouts(run_id, id);
   CREATE TABLE training_log (
     id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL REFERENCES training_runs(id) ON DELETE CASCADE,
     at TEXT NOT NULL, message TEXT NOT NULL);
   CREATE INDEX training_log_run ON training_log(run_id, id);`,
];

/** Rollouts and log lines kept per run (oldest dropped first). */
const MAX_ROLLOUTS_PER_RUN = 200;
const MAX_LOG_LINES_PER_RUN = 500;

interface RunRow {
  id: string;
  name: string;
  state: string;
  preset: string;
  model: string;
  gpus: string;
  schedule: string;
  hyper: string;
  created_at: string;
  updated_at: string;
  step: number;
  checkpoint_step: number;
  restarts: number;
  train_prompts: number;
  held_out_prompts: number;
  output_dir: string;
  final_dir: string | null;
  base_eval: string | null;
  latest_eval: string | null;
  onnx_dir: string | null;
  error: string | null;
  pid: number | null;
}

export type NewRun = Pick<
  TrainingRun,
  'id' | 'name' | 'preset' | 'model' | 'gpus' | 'schedule' | 'hyper' | 'outputDir' | 'trainPrompts' | 'heldOutPrompts'
>;

export type RunPatch = Partial<
  Pick<
    TrainingRun,
    | 'state'
    | 'trainPrompts'
    | 'step'
    | 'checkpointStep'
    | 'restarts'
    | 'finalDir'
    | 'baseEval'
    | 'latestEval'
    | 'onnxDir'
    | 'error'
  >
> & { pid?: number | null };

export class TrainingStore {
  constructor(
    private readonly db: Db,
    private readonly now: () => Date = () => new Date(),
  ) {
    migrate(db, 'training', STEPS);
  }

  createRun(run: NewRun): TrainingRun {
    const at = this.now().toISOString();
    this.db
      .prepare(
        `INSERT INTO training_runs (id, name, state, preset, model, gpus, schedule, hyper, created_at, updated_at,
      train_prompts, held_out_prompts, output_dir) VALUES (?, ?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        run.id,
        run.name,
        run.preset,
        run.model,
        run.gpus,
        run.schedule,
        JSON.stringify(run.hyper),
        at,
        at,
        run.trainPrompts,
        run.heldOutPrompts,
        run.outputDir,
      );
    return this.getRun(run.id)!;
  }

  getRun(id: string): TrainingRun | undefined {
    const row = this.db.prepare('SELECT * FROM training_runs WHERE id = ?').get(id) as RunRow | undefined;
    return row && toRun(row);
  }

  pidOf(id: string): number | null {
    const row = this.db.prepare('SELECT pid FROM training_runs WHERE id = ?').get(id) as
      { pid: number | null } | undefined;
    return row?.pid ?? null;
  }

  listRuns(states?: TrainingRunState[]): TrainingRun[] {
    const rows = this.db.prepare('SELECT * FROM training_runs ORDER BY created_at DESC, id DESC').all() as RunRow[];
    return rows.map(toRun).filter((r) => !states || states.includes(r.state));
  }

  updateRun(id: string, patch: RunPatch): TrainingRun {
    const columns: Record<string, unknown> = {};
    if (patch.state !== undefined) columns.state = patch.state;
    if (patch.step !== undefined) columns.step = patch.step;
    if (patch.trainPrompts !== undefined) columns.train_prompts = patch.trainPrompts;
    if (patch.checkpointStep !== undefined) columns.checkpoint_step = patch.checkpointStep;
    if (patch.restarts !== undefined) columns.restarts = patch.restarts;
    if (patch.finalDir !== undefined) columns.final_dir = patch.finalDir;
    if (patch.baseEval !== undefined) columns.base_eval = patch.baseEval && JSON.stringify(patch.baseEval);
    if (patch.latestEval !== undefined) columns.latest_eval = patch.latestEval && JSON.stringify(patch.latestEval);
    if (patch.onnxDir !== undefined) columns.onnx_dir = patch.onnxDir;
    if (patch.error !== undefined) columns.error = patch.error;
    if (patch.pid !== undefined) columns.pid = patch.pid;
    columns.updated_at = this.now().toISOString();
    const keys = Object.keys(columns);
    const info = this.db
      .prepare(`UPDATE training_runs SET ${keys.map((k) => `${k} = ?`).join(', ')} WHERE id = ?`)
      .run(...keys.map((k) => columns[k] as string | number | null), id);
    if (info.changes === 0) throw new Error(`no training run '${id}'`);
    return this.getRun(id)!;
  }

  /** Upserts one step's metrics (a resumed run re-reporting a step replaces its values). */
  putMetrics(runId: string, step: number, kind: MetricKind, metrics: Record<string, number>): void {
    const put = this.db.prepare(`INSERT INTO training_metrics (run_id, step, kind, key, value) VALUES (?, ?, ?, ?, ?)
      ON CONFLICT(run_id, step, kind, key) DO UPDATE SET value = excluded.value`);
    this.db.transaction(() => {
      for (const [key, value] of Object.entries(metrics))
        if (Number.isFinite(value)) put.run(runId, step, kind, key, value);
    })();
  }

  metrics(runId: string, options: { kind?: MetricKind; sinceStep?: number } = {}): StepMetrics[] {
    const rows = this.db
      .prepare(
        `SELECT step, kind, key, value FROM training_metrics WHERE run_id = ? AND (? IS NULL OR kind = ?)
      AND step >= ? ORDER BY kind, step`,
      )
      .all(runId, options.kind ?? null, options.kind ?? null, options.sinceStep ?? 0) as {
      step: number;
      kind: MetricKind;
      key: string;
      value: number;
    }[];
    const out: StepMetrics[] = [];
    for (const r of rows) {
      let last = out[out.length - 1];
      if (!last || last.step !== r.step || last.kind !== r.kind) {
        last = { step: r.step, kind: r.kind, metrics: {} };
        out.push(last);
      }
      last.metrics[r.key] = r.value;
    }
    return out;
  }

  addRollouts(runId: string, rollouts: Omit<RolloutSample, 'id' | 'runId' | 'createdAt'>[]): RolloutSample[] {
    const at = this.now().toISOString();
    const insert = this.db
      .prepare(`INSERT INTO training_rollouts (run_id, step, purpose, prompt_id, turn, think, code, response,
      format_error, verdict, score, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    const ids: number[] = [];
    this.db.transaction(() => {
      for (const r of rollouts) {
        ids.push(
          Number(
            insert.run(
              runId,
              r.step,
              r.purpose,
              r.promptId,
              r.turn,
              r.think,
              r.code,
              r.response,
              r.formatError,
              r.verdict,
              r.score,
              at,
            ).lastInsertRowid,
          ),
        );
      }
      this.db
        .prepare(
          `DELETE FROM training_rollouts WHERE run_id = ? AND id NOT IN
        (SELECT id FROM training_rollouts WHERE run_id = ? ORDER BY id DESC LIMIT ?)`,
        )
        .run(runId, runId, MAX_ROLLOUTS_PER_RUN);
    })();
    return rollouts.map((r, i) => ({ ...r, id: ids[i], runId, createdAt: at }));
  }

  rollouts(runId: string, limit = 50): RolloutSample[] {
    const rows = this.db
      .prepare(`SELECT * FROM training_rollouts WHERE run_id = ? ORDER BY id DESC LIMIT ?`)
      .all(runId, limit) as {
      id: number;
      run_id: string;
      step: number;
      purpose: 'train' | 'eval';
      prompt_id: string;
      turn: number;
      think: string;
      code: string | null;
      response: string;
      format_error: string;
      verdict: string | null;
      score: number;
      created_at: string;
    }[];
    return rows.map((r) => ({
      id: r.id,
      runId: r.run_id,
      step: r.step,
      purpose: r.purpose,
      promptId: r.prompt_id,
      turn: r.turn,
      think: r.think,
      code: r.code,
      response: r.response,
      formatError: r.format_error as RolloutSample['formatError'],
      verdict: r.verdict as RolloutSample['verdict'],
      score: r.score,
      createdAt: r.created_at,
    }));
  }

  log(runId: string, message: string): TrainingLogLine {
    const at = this.now().toISOString();
    this.db.transaction(() => {
      this.db.prepare('INSERT INTO training_log (run_id, at, message) VALUES (?, ?, ?)').run(runId, at, message);
      this.db
        .prepare(
          `DELETE FROM training_log WHERE run_id = ? AND id NOT IN
        (SELECT id FROM training_log WHERE run_id = ? ORDER BY id DESC LIMIT ?)`,
        )
        .run(runId, runId, MAX_LOG_LINES_PER_RUN);
    })();
    return { at, message };
  }

  logLines(runId: string, limit = 100): TrainingLogLine[] {
    const rows = this.db
      .prepare('SELECT at, message FROM training_log WHERE run_id = ? ORDER BY id DESC LIMIT ?')
      .all(runId, limit) as TrainingLogLine[];
    return rows.reverse();
  }
}

function parse<T>(s: string | null): T | null {
  return s === null ? null : (JSON.parse(s) as T);
}

function toRun(r: RunRow): TrainingRun {
  const baseEval = parse<TrainingEvalSummary>(r.base_eval);
  const latestEval = parse<TrainingEvalSummary>(r.latest_eval);
  return {
    id: r.id,
    name: r.name,
    state: r.state as TrainingRunState,
    preset: r.preset as TrainingPresetName,
    model: r.model,
    gpus: r.gpus,
    schedule: r.schedule as TrainingSchedule,
    hyper: JSON.parse(r.hyper) as TrainingHyperparameters,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    step: r.step,
    checkpointStep: r.checkpoint_step,
    restarts: r.restarts,
    trainPrompts: r.train_prompts,
    heldOutPrompts: r.held_out_prompts,
    outputDir: r.output_dir,
    finalDir: r.final_dir,
    baseEval,
    latestEval,
    improved: improvedOver(baseEval, latestEval),
    onnxDir: r.onnx_dir,
    error: r.error,
  };
}

/** Compares the held-out pass@k after the fix turn (else before it) of the newest eval with the base model's. */
function improvedOver(base: TrainingEvalSummary | null, latest: TrainingEvalSummary | null): boolean | null {
  if (!base || !latest || latest.step <= base.step) return null;
  const key = headlineKey(latest.metrics) ?? headlineKey(base.metrics);
  if (!key || base.metrics[key] === undefined || latest.metrics[key] === undefined) return null;
  return latest.metrics[key] > base.metrics[key];
}

function headlineKey(metrics: Record<string, number>): string | undefined {
  const keys = Object.keys(metrics);
  return (
    keys.find((k) => k.startsWith('eval/acc_turn_2/pass@')) ?? keys.find((k) => k.startsWith('eval/acc_turn_1/pass@'))
  );
}
