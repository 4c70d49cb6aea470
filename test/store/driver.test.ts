// The store's SQLite driver (backend/store/db.ts): libsql where installed, with better-sqlite3's plain rows,
// WAL, NORMAL sync, and no committed transaction lost when the process is killed with SIGKILL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb, sqliteDriver } from '../../backend/store/db';

test('rows are plain data, the journal is WAL with NORMAL sync', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-db-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const db = openDb(join(dir, 'k.db'));
  try {
    assert.ok(['libsql', 'better-sqlite3'].includes(sqliteDriver().name));
    db.exec('CREATE TABLE t (a INTEGER, b TEXT)');
    db.prepare('INSERT INTO t VALUES (?, ?)').run(1, 'x');
    assert.deepEqual(db.prepare('SELECT * FROM t').get(), { a: 1, b: 'x' });
    assert.deepEqual(db.prepare('SELECT * FROM t').all(), [{ a: 1, b: 'x' }]);
    assert.deepEqual([...db.prepare('SELECT * FROM t').iterate()], [{ a: 1, b: 'x' }]);
    assert.equal(JSON.stringify(db.prepare('SELECT b FROM t').get()), '{"b":"x"}');
    assert.equal((db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode, 'wal');
    assert.equal((db.prepare('PRAGMA synchronous').get() as { synchronous: number }).synchronous, 1);
  } finally {
    db.close();
  }
});

test('a writer killed with SIGKILL loses no committed transaction and leaves an intact file', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-db-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'crash.db');
  const script = `
    const { openDb } = require(${JSON.stringify(join(__dirname, '..', '..', 'backend', 'store', 'db.ts'))});
    const db = openDb(${JSON.stringify(file)});
    db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)');
    const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
    const tx = db.transaction(() => { for (let i = 0; i < 20; i++) ins.run('x'.repeat(100)); });
    let n = 0;
    for (;;) { tx(); n += 20; process.stdout.write(n + '\\n'); }`;
  const child = spawn(process.execPath, ['--import', 'tsx', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let last = 0;
  let buf = '';
  child.stdout.on('data', (c: Buffer) => {
    buf += c.toString();
    const lines = buf.split('\n');
    buf = lines.pop()!;
    if (lines.length) last = Number(lines.at(-1));
  });
  const deadline = Date.now() + 30_000;
  while (last < 2000 && Date.now() < deadline && child.exitCode === null) await new Promise((r) => setTimeout(r, 50));
  assert.ok(last >= 2000, `the writer committed only ${last} rows`);
  child.kill('SIGKILL');
  await new Promise((r) => child.on('exit', r));
  const db = openDb(file);
  try {
    const { n } = db.prepare('SELECT count(*) AS n FROM t').get() as { n: number };
    assert.ok(n >= last, `${n} rows, ${last} reported committed`);
    assert.equal((db.prepare('PRAGMA integrity_check').get() as { integrity_check: string }).integrity_check, 'ok');
  } finally {
    db.close();
  }
});
