// Repair All jobs: the queue of broken declarations and each one's outcome, kept in SQLite so that a job
// interrupted by a restart resumes where it stopped, and verified repairs stay pending proposals until the user
// accepts or rejects them. Owned by the editor's Repair All and `kimina repair`.
import { randomUUID } from 'node:crypto';
import type { Db } from './db';
import { migrate } from './db';
import type { ProofEdit, RepairItem, RepairItemStatus, RepairJob, RepairJobKind } from '../protocol';

const STEPS = [
  `CREATE TABLE repair_jobs (
     id TEXT PRIMARY KEY,
     created_at TEXT NOT NULL,
     finished_at TEXT,
     scope TEXT NOT NULL,
     state TEXT NOT NULL DEFAULT 'running'
   );
   CREATE TABLE repair_items (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     job_id TEXT NOT NULL REFERENCES repair_jobs(id) ON DELETE CASCADE,
     position INTEGER NOT NULL,
     uri TEXT NOT NULL,
     declaration TEXT NOT NULL,
     line INTEGER NOT NULL,
     error TEXT NOT NULL,
     status TEXT NOT NULL DEFAULT 'pending',
     reason TEXT,
     edit TEXT,
     replaced TEXT,
     updated_at TEXT NOT NULL
   );
   CREATE INDEX repair_items_job ON repair_items(job_id, position);`,
  // Prove All Sorries keeps its queue here too: a job is a repair job or a sorries job.
  `ALTER TABLE repair_jobs ADD COLUMN kind TEXT NOT NULL DEFAULT 'repair';`,
];

const STATUSES = new Set<RepairItemStatus>(['pending', 'repaired', 'broken', 'skipped', 'accepted', 'rejected']);

interface ItemRow {
  id: number;
  uri: string;
  declaration: string;
  line: number;
  error: string;
  status: RepairItemStatus;
  reason: string | null;
  edit: string | null;
  replaced: string | null;
}
interface JobRow {
  id: string;
  created_at: string;
  scope: string;
  state: RepairJob['state'];
  kind: RepairJobKind;
}

export class RepairStore {
  constructor(private readonly db: Db) {
    migrate(db, 'repairs', STEPS);
  }

  create(scope: string, items: Omit<RepairItem, 'id' | 'status'>[], kind: RepairJobKind = 'repair'): RepairJob {
    const id = randomUUID();
    const now = new Date().toISOString();
    this.db.transaction(() => {
      this.db
        .prepare('INSERT INTO repair_jobs (id, created_at, scope, kind) VALUES (?, ?, ?, ?)')
        .run(id, now, scope, kind);
      const insert = this.db.prepare(
        `INSERT INTO repair_items (job_id, position, uri, declaration, line, error, status, reason, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, 'pending', ?, ?)`,
      );
      items.forEach((it, k) => insert.run(id, k, it.uri, it.declaration, it.line, it.error, it.reason ?? null, now));
    })();
    return this.job(id)!;
  }

  job(id: string): RepairJob | null {
    const row = this.db.prepare('SELECT id, created_at, scope, state, kind FROM repair_jobs WHERE id = ?').get(id) as
      JobRow | undefined;
    if (!row) return null;
    const items = (
      this.db
        .prepare(
          'SELECT id, uri, declaration, line, error, status, reason, edit, replaced FROM repair_items WHERE job_id = ? ORDER BY position',
        )
        .all(id) as ItemRow[]
    ).map((r): RepairItem => ({
      id: r.id,
      uri: r.uri,
      declaration: r.declaration,
      line: r.line,
      error: r.error,
      status: r.status,
      ...(r.reason !== null ? { reason: r.reason } : {}),
      ...(r.edit !== null ? { edit: JSON.parse(r.edit) as ProofEdit } : {}),
      ...(r.replaced !== null ? { replaced: r.replaced } : {}),
    }));
    return { id: row.id, kind: row.kind, scope: row.scope, state: row.state, createdAt: row.created_at, items };
  }

  /** Jobs still running (a restart interrupted them) or holding repairs nobody has reviewed yet, newest first. */
  unfinished(limit = 20): RepairJob[] {
    const ids = this.db
      .prepare(
        `SELECT j.id FROM repair_jobs j WHERE j.state = 'running'
           OR EXISTS (SELECT 1 FROM repair_items i WHERE i.job_id = j.id AND i.status = 'repaired')
         ORDER BY j.created_at DESC LIMIT ?`,
      )
      .all(limit) as { id: string }[];
    return ids.map((r) => this.job(r.id)!).filter(Boolean);
  }

  /** Jobs of `kind` still running (a restart interrupted them), oldest first: what the backend resumes. */
  running(kind: RepairJobKind): RepairJob[] {
    const ids = this.db
      .prepare(`SELECT id FROM repair_jobs WHERE state = 'running' AND kind = ? ORDER BY created_at`)
      .all(kind) as { id: string }[];
    return ids.map((r) => this.job(r.id)!).filter(Boolean);
  }

  update(
    jobId: string,
    itemId: number,
    status: RepairItemStatus,
    extra: { reason?: string; edit?: ProofEdit | null; replaced?: string | null } = {},
  ): RepairJob {
    if (!STATUSES.has(status)) throw new Error(`unknown repair status '${status}'`);
    const changed = this.db
      .prepare(
        `UPDATE repair_items SET status = ?, reason = COALESCE(?, reason), edit = ?, replaced = ?, updated_at = ?
         WHERE id = ? AND job_id = ?`,
      )
      .run(
        status,
        extra.reason ?? null,
        extra.edit ? JSON.stringify(extra.edit) : null,
        extra.replaced ?? null,
        new Date().toISOString(),
        itemId,
        jobId,
      );
    if (changed.changes === 0) throw new Error(`no repair item ${itemId} in job ${jobId}`);
    return this.job(jobId)!;
  }

  finish(jobId: string, state: 'done' | 'cancelled'): RepairJob {
    const changed = this.db
      .prepare('UPDATE repair_jobs SET state = ?, finished_at = ? WHERE id = ?')
      .run(state, new Date().toISOString(), jobId);
    if (changed.changes === 0) throw new Error(`no repair job ${jobId}`);
    return this.job(jobId)!;
  }
}
