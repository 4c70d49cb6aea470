// Evaluation runs in SQLite: a run's settings, its problems, and every attempt, written per sample
// so that a killed run resumes exactly where it stopped.
import type { BenchmarkProblem, EvalAttemptRecord, EvalConfig, EvalRunSummary } from '../protocol';
import { migrate, type Db } from './db';

export const evalMigrations = [
  `CREATE TABLE eval_runs (
     name TEXT PRIMARY KEY,
     config TEXT NOT NULL,
     created_at TEXT NOT NULL,
     wall_ms REAL NOT NULL DEFAULT 0
   );
   CREATE TABLE eval_problems (
     run TEXT NOT NULL REFERENCES eval_runs(name) ON DELETE CASCADE,
     problem TEXT NOT NULL,
     position INTEGER NOT NULL,
     split TEXT,
     source TEXT NOT NULL,
     theorem TEXT NOT NULL,
     code TEXT NOT NULL,
     informal TEXT,
     origin TEXT NOT NULL,
     PRIMARY KEY (run, problem)
   );
   CREATE TABLE eval_samples (
     run TEXT NOT NULL,
     problem TEXT NOT NULL,
     sample INTEGER NOT NULL,
     finished_at TEXT NOT NULL,
     PRIMARY KEY (run, problem, sample),
     FOREIGN KEY (run, problem) REFERENCES eval_problems(run, problem) ON DELETE CASCADE
   );
   CREATE TABLE eval_attempts (
     run TEXT NOT NULL,
     problem TEXT NOT NULL,
     sample INTEGER NOT NULL,
     turn INTEGER NOT NULL,
     format_error TEXT NOT NULL,
     status TEXT NOT NULL,
     valid INTEGER NOT NULL,
     tokens INTEGER NOT NULL,
     chars INTEGER NOT NULL,
     generate_ms REAL NOT NULL,
     verify_ms REAL NOT NULL,
     lean_seconds REAL,
     code TEXT,
     response TEXT,
     PRIMARY KEY (run, problem, sample, turn),
     FOREIGN KEY (run, problem, sample) REFERENCES eval_samples(run, problem, sample) ON DELETE CASCADE
   );`,
  // kimina-client's rule on the same Lean answer (NULL: unknown, or stored before this column existed).
  `ALTER TABLE eval_attempts ADD COLUMN recipe_valid INTEGER;
   ALTER TABLE eval_attempts ADD COLUMN recipe_reason TEXT;`,
  // Every verdict mode's judgement (EvalAttemptRecord.modes, JSON keyed by mode; NULL: none recorded), so a new
  // mode needs no column. The two recipe columns above are read into it once and no longer written.
  `ALTER TABLE eval_attempts ADD COLUMN modes TEXT;
   UPDATE eval_attempts SET modes = json_object('recipe', json_object(
       'valid', CASE recipe_valid WHEN 1 THEN json('true') WHEN 0 THEN json('false') END,
       'reason', recipe_reason))
     WHERE recipe_valid IS NOT NULL OR recipe_reason IS NOT NULL;`,
];

function migrateEval(db: Db): void {
  migrate(db, 'eval', evalMigrations);
}

/** Settings that change what is measured; a run can only be resumed with the same ones. */
const fixedSettings: (keyof EvalConfig)[] = [
  'model',
  'engine',
  'fixTurns',
  'temperature',
  'topP',
  'maxTokens',
  'leanTimeout',
];

export interface RunRow {
  name: string;
  config: EvalConfig;
  createdAt: string;
  wallMs: number;
}

export interface StoredAttempt extends EvalAttemptRecord {
  response: string | null;
}

export class EvalStore {
  constructor(private readonly db: Db) {
    migrateEval(db);
  }

  getRun(name: string): RunRow | null {
    const row = this.db.prepare('SELECT name, config, created_at, wall_ms FROM eval_runs WHERE name = ?').get(name) as
      { name: string; config: string; created_at: string; wall_ms: number } | undefined;
    return row
      ? { name: row.name, config: JSON.parse(row.config) as EvalConfig, createdAt: row.created_at, wallMs: row.wall_ms }
      : null;
  }

  listRuns(): RunRow[] {
    const rows = this.db.prepare('SELECT name FROM eval_runs ORDER BY created_at, name').all() as { name: string }[];
    return rows.map((r) => this.getRun(r.name)!);
  }

  /**
   * Creates the run, or reopens it when it exists with the same settings (more samples or more
   * problems extend it). Different settings are refused: they would mix two measurements.
   */
  openRun(name: string, config: EvalConfig, problems: BenchmarkProblem[]): RunRow {
    if (!/^[\w.@+-]+$/.test(name)) throw new Error(`run name '${name}' may hold only letters, digits and . _ - + @`);
    return this.db.transaction(() => {
      const existing = this.getRun(name);
      if (existing) {
        const changed = fixedSettings.filter((k) => existing.config[k] !== config[k]);
        if (changed.length > 0) {
          const detail = changed
            .map((k) => `${k} ${JSON.stringify(existing.config[k])} → ${JSON.stringify(config[k])}`)
            .join(', ');
          throw new Error(
            `run '${name}' was started with other settings (${detail}); choose another --run name or keep its settings`,
          );
        }
        if (config.samples > existing.config.samples) {
          this.db
            .prepare('UPDATE eval_runs SET config = ? WHERE name = ?')
            .run(JSON.stringify({ ...existing.config, samples: config.samples }), name);
        }
      } else {
        this.db
          .prepare('INSERT INTO eval_runs (name, config, created_at) VALUES (?, ?, ?)')
          .run(name, JSON.stringify(config), new Date().toISOString());
      }
      const next = (
        this.db.prepare('SELECT COALESCE(MAX(position) + 1, 0) AS p FROM eval_problems WHERE run = ?').get(name) as {
          p: number;
        }
      ).p;
      const insert = this.db
        .prepare(`INSERT OR IGNORE INTO eval_problems (run, problem, position, split, source, theorem, code, informal, origin)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`);
      const sameCode = this.db.prepare('SELECT code FROM eval_problems WHERE run = ? AND problem = ?');
      let position = next;
      for (const p of problems) {
        const stored = sameCode.get(name, p.id) as { code: string } | undefined;
        if (stored && stored.code !== p.code)
          throw new Error(
            `problem '${p.id}' changed since run '${name}' started (${p.origin}); use another --run name`,
          );
        if (!stored)
          insert.run(name, p.id, position++, p.split, p.source, p.theorem, p.code, p.informal ?? null, p.origin);
      }
      return this.getRun(name)!;
    })();
  }

  problems(run: string): BenchmarkProblem[] {
    const rows = this.db
      .prepare(
        'SELECT problem, split, source, theorem, code, informal, origin FROM eval_problems WHERE run = ? ORDER BY position',
      )
      .all(run) as {
      problem: string;
      split: string | null;
      source: string;
      theorem: string;
      code: string;
      informal: string | null;
      origin: string;
    }[];
    return rows.map((r) => ({
      id: r.problem,
      split: r.split,
      source: r.source,
      theorem: r.theorem,
      code: r.code,
      origin: r.origin,
      ...(r.informal ? { informal: r.informal } : {}),
    }));
  }

  /** Finished sample indices per problem. */
  finishedSamples(run: string): Map<string, Set<number>> {
    const out = new Map<string, Set<number>>();
    for (const r of this.db.prepare('SELECT problem, sample FROM eval_samples WHERE run = ?').all(run) as {
      problem: string;
      sample: number;
    }[]) {
      let s = out.get(r.problem);
      if (!s) out.set(r.problem, (s = new Set()));
      s.add(r.sample);
    }
    return out;
  }

  /** Records finished samples (each with all its turns) in one transaction: all or nothing. */
  recordSamples(run: string, problem: string, samples: number[], attempts: StoredAttempt[]): void {
    const markSample = this.db.prepare(
      'INSERT INTO eval_samples (run, problem, sample, finished_at) VALUES (?, ?, ?, ?)',
    );
    const insert = this.db
      .prepare(`INSERT INTO eval_attempts (run, problem, sample, turn, format_error, status, valid, tokens, chars,
      generate_ms, verify_ms, lean_seconds, code, response, modes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
    this.db.transaction(() => {
      const now = new Date().toISOString();
      for (const s of samples) markSample.run(run, problem, s, now);
      for (const a of attempts) {
        insert.run(
          run,
          problem,
          a.sample,
          a.turn,
          a.formatError,
          a.status,
          a.valid ? 1 : 0,
          a.tokens,
          a.chars,
          a.generateMs,
          a.verifyMs,
          a.leanSeconds,
          a.code,
          a.response,
          a.modes ? JSON.stringify(a.modes) : null,
        );
      }
    })();
  }

  /** Every attempt of a run, in problem order; whole responses only when asked (they can be large). */
  attempts(run: string, withResponses = false): StoredAttempt[] {
    const columns = `a.problem, a.sample, a.turn, a.format_error, a.status, a.valid, a.tokens, a.chars, a.generate_ms, a.verify_ms,
      a.lean_seconds, a.code, a.modes${withResponses ? ', a.response' : ''}`;
    const rows = this.db
      .prepare(
        `SELECT ${columns} FROM eval_attempts a JOIN eval_problems p ON p.run = a.run AND p.problem = a.problem
      WHERE a.run = ? ORDER BY p.position, a.sample, a.turn`,
      )
      .all(run) as Record<string, unknown>[];
    return rows.map((r) => ({
      problem: r.problem as string,
      sample: r.sample as number,
      turn: r.turn as number,
      formatError: r.format_error as StoredAttempt['formatError'],
      status: r.status as StoredAttempt['status'],
      valid: r.valid === 1,
      tokens: r.tokens as number,
      chars: r.chars as number,
      generateMs: r.generate_ms as number,
      verifyMs: r.verify_ms as number,
      leanSeconds: r.lean_seconds as number | null,
      code: r.code as string | null,
      response: (r.response as string | undefined) ?? null,
      ...(typeof r.modes === 'string' ? { modes: JSON.parse(r.modes) as StoredAttempt['modes'] } : {}),
    }));
  }

  /** Problems with at least one valid answer. */
  solvedProblems(run: string): Set<string> {
    const rows = this.db.prepare('SELECT DISTINCT problem FROM eval_attempts WHERE run = ? AND valid = 1').all(run) as {
      problem: string;
    }[];
    return new Set(rows.map((r) => r.problem));
  }

  addWallTime(run: string, ms: number): void {
    this.db.prepare('UPDATE eval_runs SET wall_ms = wall_ms + ? WHERE name = ?').run(ms, run);
  }

  deleteRun(run: string): boolean {
    return this.db.prepare('DELETE FROM eval_runs WHERE name = ?').run(run).changes > 0;
  }

  summary(run: string): EvalRunSummary {
    const row = this.getRun(run);
    if (!row) throw new Error(`no evaluation run named '${run}'`);
    const problems = (
      this.db.prepare('SELECT COUNT(*) AS n FROM eval_problems WHERE run = ?').get(run) as { n: number }
    ).n;
    const complete = (
      this.db
        .prepare(
          `SELECT COUNT(*) AS n FROM (SELECT problem FROM eval_samples WHERE run = ? GROUP BY problem HAVING COUNT(*) >= ?)`,
        )
        .get(run, row.config.samples) as { n: number }
    ).n;
    return {
      name: row.name,
      config: row.config,
      createdAt: row.createdAt,
      problems,
      complete,
      wallSeconds: row.wallMs / 1000,
    };
  }
}
