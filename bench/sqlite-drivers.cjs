// The SQLite driver measurement of docs/packaging.md: speed, WAL, and a writer killed with SIGKILL, per library.
//   node bench/sqlite-drivers.cjs libsql
//   node bench/sqlite-drivers.cjs better-sqlite3   (needs it installed: npm install --no-save better-sqlite3@12.11.1)
// The store sets synchronous = NORMAL (backend/store/db.ts); remove that pragma below for the library defaults.
const { spawn } = require('node:child_process');
const fs = require('node:fs'); const os = require('node:os'); const path = require('node:path');
const libs = { 'better-sqlite3': 'better-sqlite3', libsql: 'libsql' };
const which = process.argv[2];
if (!libs[which]) throw new Error('usage: node bench/sqlite-drivers.cjs libsql|better-sqlite3');
if (process.argv[3] === 'writer') {
  const Database = require(libs[which]);
  const db = new Database(process.argv[4]);
  db.pragma('journal_mode = WAL'); db.pragma('busy_timeout = 5000'); db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)');
  const ins = db.prepare('INSERT INTO t (v) VALUES (?)');
  let n = 0;
  const tx = db.transaction((k) => { for (let i = 0; i < k; i++) ins.run('x'.repeat(200)); });
  for (;;) { tx(50); n += 50; process.stdout.write(`${n}\n`); }
}
async function main() {
  const Database = require(libs[which]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'sqlb-'));
  const file = path.join(dir, 'a.db');
  const db = new Database(file);
  const mode = db.prepare('PRAGMA journal_mode = WAL').get().journal_mode;
  db.pragma('foreign_keys = ON'); db.pragma('synchronous = NORMAL');
  db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, k TEXT, v TEXT)'); db.exec('CREATE INDEX tk ON t(k)');
  const ins = db.prepare('INSERT INTO t (k, v) VALUES (?, ?)');
  let t0 = performance.now();
  db.transaction(() => { for (let i = 0; i < 50000; i++) ins.run('k' + i, 'v'.repeat(100)); })();
  const bulk = performance.now() - t0;
  t0 = performance.now();
  for (let i = 0; i < 500; i++) ins.run('s' + i, 'v');
  const single = (performance.now() - t0) / 500;
  const sel = db.prepare('SELECT * FROM t WHERE k = ?');
  t0 = performance.now();
  for (let i = 0; i < 20000; i++) sel.get('k' + (i * 7 % 50000));
  const point = (performance.now() - t0) / 20000 * 1000;
  t0 = performance.now();
  const all = db.prepare('SELECT * FROM t').all().length;
  const scan = performance.now() - t0;
  db.close();
  // crash safety: kill -9 a writer mid-run, reopen, every reported commit is there and the file is intact
  const crash = path.join(dir, 'c.db');
  const child = spawn(process.execPath, [__filename, which, 'writer', crash], { stdio: ['ignore', 'pipe', 'inherit'] });
  let last = 0, buf = '';
  child.stdout.on('data', (c) => { buf += c; const ls = buf.split('\n'); buf = ls.pop(); if (ls.length) last = Number(ls.at(-1)); });
  await new Promise((r) => setTimeout(r, 1500));
  child.kill('SIGKILL');
  await new Promise((r) => child.on('exit', r));
  const re = new Database(crash);
  const count = re.prepare('SELECT count(*) AS n FROM t').get().n;
  const ok = re.prepare('PRAGMA integrity_check').get().integrity_check;
  re.close();
  console.log(JSON.stringify({ lib: which, journal: mode, bulk50k_ms: Math.round(bulk), single_insert_ms: +single.toFixed(3), point_select_us: +point.toFixed(1), scan50k_ms: Math.round(scan), rows: all, crash: { reported: last, found: count, lostCommitted: count < last, integrity: ok } }));
}
main();
