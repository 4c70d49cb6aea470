// KIMINA_HOME is owner-only against other local users: a live `kimina serve` (stand-in REPL, a TEST DOUBLE for
// Lean) over an older install whose folders are 0755 and files 0644 narrows them on start (0700 / 0600), and what
// it creates afterwards (kimina.db with its -wal/-shm, serve.json, a run's folder, prompts, config and log) is
// owner-only too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServe } from './liveServe';

const mode = (p: string) => statSync(p).mode & 0o777;

test('an older 0755/0644 install is narrowed on start, and everything the server creates is owner-only', async () => {
  const home = mkdtempSync(join(tmpdir(), 'kimina-sec-modes-'));
  const ws = mkdtempSync(join(tmpdir(), 'kimina-sec-modes-ws-'));
  try {
    chmodSync(home, 0o755);
    mkdirSync(join(home, 'training', 'old-run'), { recursive: true, mode: 0o755 });
    writeFileSync(join(home, 'training', 'old-run', 'trainer.log'), 'old log\n', { mode: 0o644 });
    writeFileSync(join(home, 'settings-note.txt'), 'older file\n', { mode: 0o644 });
    writeFileSync(join(ws, 'Mine.lean'), 'theorem mine (a b : Nat) : a + b = b + a := by\n  omega\n');
    const s = await startServe({ KIMINA_TRAINER_PYTHON: join(home, 'no-python') }, { home });
    try {
      const r = await s.post('/v1/training/runs', {
        model: 'tiny',
        preset: 'single-gpu-lora',
        gpus: 'cpu',
        workspace: ws,
      });
      assert.equal(r.status, 201, JSON.stringify(r.json));
      await new Promise((res) => setTimeout(res, 300)); // the launch attempt writes run.json and the log
      await s.health();
      assert.equal(mode(home), 0o700);
      assert.equal(mode(join(home, 'training')), 0o700);
      assert.equal(mode(join(home, 'training', 'old-run')), 0o700);
      assert.equal(mode(join(home, 'training', 'old-run', 'trainer.log')), 0o600);
      assert.equal(mode(join(home, 'serve.json')), 0o600);
      assert.equal(mode(join(home, 'settings-note.txt')), 0o600);
      const dbFiles = readdirSync(home).filter((n) => n.startsWith('kimina.db'));
      assert.ok(dbFiles.includes('kimina.db'), dbFiles.join(','));
      for (const f of dbFiles) assert.equal(mode(join(home, f)), 0o600, f);
      const run = join(home, 'training', r.json.id);
      assert.equal(mode(run), 0o700);
      for (const f of readdirSync(run)) {
        const p = join(run, f);
        assert.equal(mode(p), statSync(p).isDirectory() ? 0o700 : 0o600, f);
      }
      assert.ok(existsSync(join(run, 'train.jsonl')));
    } finally {
      await s.stop();
    }
  } finally {
    rmSync(home, { recursive: true, force: true });
    rmSync(ws, { recursive: true, force: true });
  }
});
