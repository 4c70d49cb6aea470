// The SQLite store. Each module owns its tables and registers its own migrations under its name; `migrate`
// applies the steps it has not applied yet, in order.
// The driver is libsql (better-sqlite3's API; N-API, with per-platform npm packages for all five extension
// targets, so it runs on VS Code's own runtime): see docs/packaging.md for the measurements against
// better-sqlite3 12, which stays the driver where libsql is not installed (a checkout whose node_modules
// predates it). libsql adds an enumerable `_metadata` to every row: removed here, so rows are plain data.
import type BetterSqlite3 from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { touchPrivateFile } from './safePaths';

export type Db = BetterSqlite3.Database;
type Driver = {
  Database: new (path: string, options?: BetterSqlite3.Options) => Db;
  name: 'libsql' | 'better-sqlite3';
};

let loaded: Driver | undefined;

/** The SQLite driver: libsql, else better-sqlite3. */
export function sqliteDriver(): Driver {
  if (loaded) return loaded;
  try {
    loaded = { Database: require('libsql') as Driver['Database'], name: 'libsql' };
  } catch {
    loaded = { Database: require('better-sqlite3') as Driver['Database'], name: 'better-sqlite3' };
  }
  return loaded;
}

function plain<T>(row: T): T {
  if (row && typeof row === 'object' && '_metadata' in row) delete (row as { _metadata?: unknown })._metadata;
  return row;
}

/** libsql's statements with better-sqlite3's rows: no `_metadata` in get/all/iterate results. */
function plainRows(db: Db): Db {
  const prepare = db.prepare.bind(db);
  (db as { prepare: unknown }).prepare = (sql: string) => {
    const st = prepare(sql);
    const get = st.get.bind(st);
    const all = st.all.bind(st);
    const iterate = st.iterate.bind(st);
    Object.assign(st, {
      get: (...args: unknown[]) => plain(get(...args)),
      all: (...args: unknown[]) => all(...args).map(plain),
      iterate: function* (...args: unknown[]) {
        for (const row of iterate(...args)) yield plain(row);
      },
    });
    return st;
  };
  return db;
}

/** Opens (creating if needed) the store at `path`; `:memory:` for tests. */
export function openDb(path: string): Db {
  if (path !== ':memory:') {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    touchPrivateFile(path); // proof history and rollouts: owner-only (0600), and so are SQLite's -wal/-shm files
  }
  const driver = sqliteDriver();
  const db = driver.name === 'libsql' ? plainRows(new driver.Database(path)) : new driver.Database(path);
  db.pragma('journal_mode = WAL');
  // WAL with NORMAL sync: what better-sqlite3's build defaults to (SQLITE_DEFAULT_WAL_SYNCHRONOUS=1); libsql's
  // default (FULL) syncs every commit (~5 ms each here). A killed process loses no committed transaction.
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  db.pragma('foreign_keys = ON');
  db.exec('CREATE TABLE IF NOT EXISTS schema_versions (owner TEXT PRIMARY KEY, version INTEGER NOT NULL)');
  return db;
}

/** Opens an existing store read-only (inspection: tests, tools), with the same plain rows as openDb. */
export function openDbReadonly(path: string): Db {
  const driver = sqliteDriver();
  const db = new driver.Database(path, { readonly: true, fileMustExist: true });
  return driver.name === 'libsql' ? plainRows(db) : db;
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
