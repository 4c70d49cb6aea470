// The SQLite store (better-sqlite3 12). Each module owns its tables and registers its own
// migrations under its name; `migrate` applies the steps it has not applied yet, in order.
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { touchPrivateFile } from './safePaths';

export type Db = Database.Database;

/** Opens (creating if needed) the store at `path`; `:memory:` for tests. */
export function openDb(path: string): Db {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    touchPrivateFile(path); // proof history and rollouts: owner-only (0600), and so are SQLite's -wal/-shm files
  }
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.exec('CREATE TABLE IF NOT EXISTS schema_versions (owner TEXT PRIMARY KEY, version INTEGER NOT NULL)');
  return db;
}

/** Applies `steps[version..]` for `owner` in one transaction each. Steps are append-only. */
export function migrate(db: Db, owner: string, steps: string[]): void {
  const row = db.prepare('SELECT version FROM schema_versions WHERE owner = ?').get(owner) as
    { version: number } | undefined;
  const from = row?.version ?? 0;
  for (let v = from; v < steps.length; v++) {
    db.transaction(() => {
      db.exec(steps[v]);
      db.prepare(
        'INSERT INTO schema_versions (owner, version) VALUES (?, ?) ON CONFLICT(owner) DO UPDATE SET version = excluded.version',
      ).run(owner, v + 1);
    })();
  }
}
