// Every prove request (a run) and every attempt in it: messages, response, thinking, checked code,
// format result, verdict, fix-turn feedback, tokens and timings. Owned by the prover.
import type { Db } from './db';
import { migrate } from './db';
import type { Attempt, ChatMessage, ProveStatus, Verdict } from '../protocol';

const STEPS = [
  `CREATE TABLE prove_runs (
     id TEXT PRIMARY KEY,
     created_at TEXT NOT NULL,
     finished_at TEXT,
     theorem TEXT NOT NULL,
     statement TEXT NOT NULL,
     informal TEXT NOT NULL,
     engine TEXT NOT NULL,
     model TEXT NOT NULL,
     settings TEXT NOT NULL,
     status TEXT NOT NULL DEFAULT 'running',
     proof TEXT,
     error TEXT
   );
   CREATE TABLE prove_attempts (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     run_id TEXT NOT NULL REFERENCES prove_runs(id) ON DELETE CASCADE,
     sample INTEGER NOT NULL,
     turn INTEGER NOT NULL,
     messages TEXT NOT NULL,
     response TEXT NOT NULL,
     think TEXT NOT NULL,
     code TEXT,
     format_ok INTEGER NOT NULL,
     format_error TEXT NOT NULL,
     verdict_status TEXT,
     verdict TEXT,
     feedback TEXT,
     fix_skipped TEXT,
     tokens INTEGER,
     finish_reason TEXT,
     generate_ms REAL,
     verify_ms REAL,
     created_at TEXT NOT NULL
   );
   CREATE INDEX prove_attempts_run ON prove_attempts(run_id, sample, turn);
   CREATE INDEX prove_attempts_status ON prove_attempts(verdict_status);`,
];

export type RunStatus = ProveStatus | 'running' | 'error';

export interface RunStart {
  id: string;
  theorem: string;
  statement: string;
  informal: string;
  engine: string;
  model: string;
  settings: Record<string, unknown>;
}

export interface RunRow extends RunStart {
  createdAt: string;
  finishedAt: string | null;
  status: RunStatus;
  proof: string | null;
  error: string | null;
}

export interface StoredAttempt extends Attempt {
  runId: string;
  /** The conversation the answer replied to. */
  messages: ChatMessage[];
  createdAt: string;
}

interface AttemptRow {
  run_id: string;
  sample: number;
  turn: number;
  messages: string;
  response: string;
  think: string;
  code: string | null;
  format_ok: number;
  format_error: string;
  verdict: string | null;
  feedback: string | null;
  fix_skipped: string | null;
  tokens: number | null;
  finish_reason: string | null;
  generate_ms: number | null;
  verify_ms: number | null;
  created_at: string;
}

export class AttemptStore {
  constructor(private readonly db: Db) {
    migrate(db, 'attempts', STEPS);
  }

  startRun(run: RunStart): void {
    this.db
      .prepare(
        `INSERT INTO prove_runs (id, created_at, theorem, statement, informal, engine, model, settings)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        run.id,
        new Date().toISOString(),
        run.theorem,
        run.statement,
        run.informal,
        run.engine,
        run.model,
        JSON.stringify(run.settings),
      );
  }

  recordAttempt(runId: string, messages: ChatMessage[], a: Attempt): void {
    this.db
      .prepare(
        `INSERT INTO prove_attempts (run_id, sample, turn, messages, response, think, code, format_ok, format_error,
      verdict_status, verdict, feedback, fix_skipped, tokens, finish_reason, generate_ms, verify_ms, created_at)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        runId,
        a.sample,
        a.turn,
        JSON.stringify(messages),
        a.response,
        a.think,
        a.code,
        a.format.ok ? 1 : 0,
        a.format.error,
        a.verdict?.status ?? null,
        a.verdict ? JSON.stringify(a.verdict) : null,
        a.feedback ?? null,
        a.fixSkipped ?? null,
        a.tokens ?? null,
        a.finishReason ?? null,
        a.timings?.generateMs ?? null,
        a.timings?.verifyMs ?? null,
        new Date().toISOString(),
      );
  }

  finishRun(id: string, status: RunStatus, proof: string | null, error: string | null = null): void {
    this.db
      .prepare('UPDATE prove_runs SET status = ?, proof = ?, error = ?, finished_at = ? WHERE id = ?')
      .run(status, proof, error, new Date().toISOString(), id);
  }

  getRun(id: string): RunRow | null {
    const r = this.db.prepare('SELECT * FROM prove_runs WHERE id = ?').get(id) as Record<string, unknown> | undefined;
    if (!r) return null;
    return {
      id: r.id as string,
      theorem: r.theorem as string,
      statement: r.statement as string,
      informal: r.informal as string,
      engine: r.engine as string,
      model: r.model as string,
      settings: JSON.parse(r.settings as string) as Record<string, unknown>,
      createdAt: r.created_at as string,
      finishedAt: (r.finished_at as string | null) ?? null,
      status: r.status as RunStatus,
      proof: (r.proof as string | null) ?? null,
      error: (r.error as string | null) ?? null,
    };
  }

  attemptsOf(runId: string): StoredAttempt[] {
    const rows = this.db
      .prepare('SELECT * FROM prove_attempts WHERE run_id = ? ORDER BY id')
      .all(runId) as AttemptRow[];
    return rows.map((r) => ({
      runId: r.run_id,
      sample: r.sample,
      turn: r.turn,
      messages: JSON.parse(r.messages) as ChatMessage[],
      response: r.response,
      think: r.think,
      code: r.code,
      format: { ok: r.format_ok === 1, error: r.format_error as Attempt['format']['error'] },
      verdict: r.verdict ? (JSON.parse(r.verdict) as Verdict) : null,
      feedback: r.feedback,
      fixSkipped: (r.fix_skipped ?? undefined) as Attempt['fixSkipped'],
      tokens: r.tokens ?? undefined,
      finishReason: (r.finish_reason ?? undefined) as Attempt['finishReason'],
      timings: r.generate_ms === null ? undefined : { generateMs: r.generate_ms, verifyMs: r.verify_ms ?? 0 },
      createdAt: r.created_at,
    }));
  }

  /** Most recent runs first. */
  recentRuns(limit = 20): RunRow[] {
    const ids = this.db
      .prepare('SELECT id FROM prove_runs ORDER BY created_at DESC, rowid DESC LIMIT ?')
      .all(limit) as { id: string }[];
    return ids.map((r) => this.getRun(r.id) as RunRow);
  }
}
