// Proof jobs started by agents (the MCP tools `prove` and `repair`) and their outcomes, kept in SQLite beside the
// attempts of the same proofs (prove_runs/prove_attempts share the job's id): an agent polls `job` at any time,
// `apply` reads the verified body back, and finished jobs are dropped after a while (KIMINA_AGENT_JOB_KEEP_HOURS).
// Owned by the editor's agent jobs (backend/editor/agentJobs.ts).
import type { Db } from './db';
import { migrate } from './db';
import { finishedJobStates, type AgentJob, type AgentJobState } from '../protocol';

const STEPS = [
  `CREATE TABLE agent_jobs (
     id TEXT PRIMARY KEY,
     client TEXT NOT NULL,
     kind TEXT NOT NULL,
     path TEXT NOT NULL,
     theorem TEXT,
     line INTEGER,
     state TEXT NOT NULL,
     created_at TEXT NOT NULL,
     finished_at TEXT,
     attempts TEXT NOT NULL DEFAULT '[]',
     proof TEXT,
     problem TEXT,
     applied_at TEXT
   );
   CREATE INDEX agent_jobs_state ON agent_jobs(state, created_at);`,
  // the absolute path of the file the job works on (`path` is only shown): `apply` writes there
  `ALTER TABLE agent_jobs ADD COLUMN file TEXT;`,
];

interface Row {
  id: string;
  client: string;
  kind: AgentJob['kind'];
  path: string;
  file: string | null;
  theorem: string | null;
  line: number | null;
  state: AgentJobState;
  created_at: string;
  finished_at: string | null;
  attempts: string;
  proof: string | null;
  problem: string | null;
  applied_at: string | null;
}

function fromRow(r: Row): AgentJob {
  return {
    id: r.id,
    kind: r.kind,
    client: r.client,
    path: r.path,
    ...(r.file !== null ? { file: r.file } : {}),
    ...(r.theorem !== null ? { theorem: r.theorem } : {}),
    ...(r.line !== null ? { line: r.line } : {}),
    state: r.state,
    createdAt: r.created_at,
    ...(r.finished_at !== null ? { finishedAt: r.finished_at } : {}),
    attempts: JSON.parse(r.attempts) as AgentJob['attempts'],
    ...(r.proof !== null ? { proof: JSON.parse(r.proof) as NonNullable<AgentJob['proof']> } : {}),
    ...(r.problem !== null ? { problem: r.problem } : {}),
    ...(r.applied_at !== null ? { appliedAt: r.applied_at } : {}),
  };
}

const finished = finishedJobStates.map((s) => `'${s}'`).join(', ');

export class AgentJobStore {
  constructor(private readonly db: Db) {
    migrate(db, 'agentJobs', STEPS);
  }

  create(job: Pick<AgentJob, 'id' | 'client' | 'kind' | 'path' | 'file' | 'theorem' | 'line'>): AgentJob {
    this.db
      .prepare(
        `INSERT INTO agent_jobs (id, client, kind, path, file, theorem, line, state, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, 'queued', ?)`,
      )
      .run(
        job.id,
        job.client,
        job.kind,
        job.path,
        job.file ?? null,
        job.theorem ?? null,
        job.line ?? null,
        new Date().toISOString(),
      );
    return this.get(job.id)!;
  }

  get(id: string): AgentJob | null {
    const row = this.db.prepare('SELECT * FROM agent_jobs WHERE id = ?').get(id) as Row | undefined;
    return row ? fromRow(row) : null;
  }

  /** Newest first. */
  list(limit = 50): AgentJob[] {
    return (this.db.prepare('SELECT * FROM agent_jobs ORDER BY created_at DESC LIMIT ?').all(limit) as Row[]).map(
      fromRow,
    );
  }

  update(
    id: string,
    change: { state?: AgentJobState; attempts?: AgentJob['attempts']; proof?: AgentJob['proof']; problem?: string },
  ): AgentJob {
    const done = change.state !== undefined && finishedJobStates.includes(change.state);
    this.db
      .prepare(
        `UPDATE agent_jobs SET state = COALESCE(?, state), attempts = COALESCE(?, attempts), proof = COALESCE(?, proof),
           problem = COALESCE(?, problem), finished_at = CASE WHEN ? THEN ? ELSE finished_at END WHERE id = ?`,
      )
      .run(
        change.state ?? null,
        change.attempts ? JSON.stringify(change.attempts) : null,
        change.proof ? JSON.stringify(change.proof) : null,
        change.problem ?? null,
        done ? 1 : 0,
        new Date().toISOString(),
        id,
      );
    const job = this.get(id);
    if (!job) throw new Error(`no agent job ${id}`);
    return job;
  }

  markApplied(id: string): void {
    this.db.prepare('UPDATE agent_jobs SET applied_at = ? WHERE id = ?').run(new Date().toISOString(), id);
  }

  /** Jobs a stopped backend left queued or running: they can no longer finish. */
  failUnfinished(problem: string): number {
    return this.db
      .prepare(`UPDATE agent_jobs SET state = 'failed', problem = ?, finished_at = ? WHERE state NOT IN (${finished})`)
      .run(problem, new Date().toISOString()).changes;
  }

  /** Drops finished jobs older than `hours`. */
  purge(hours: number, now = Date.now()): number {
    const before = new Date(now - hours * 3_600_000).toISOString();
    return this.db
      .prepare(`DELETE FROM agent_jobs WHERE state IN (${finished}) AND COALESCE(finished_at, created_at) < ?`)
      .run(before).changes;
  }
}
