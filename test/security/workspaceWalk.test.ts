// The workspace walk behind `POST /v1/training/runs {workspace}` against a live `kimina serve` (stand-in REPL, a
// TEST DOUBLE for Lean): `workspace: "/"` does not freeze the server (/health keeps answering fast while it walks,
// bounded in files, depth, bytes and time), and symlinks out of the workspace, or in a loop, are not followed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { leanFiles } from '../../backend/training/harvest';
import { startServe, type LiveServe } from './liveServe';

const theorem = (name: string) => `theorem ${name} (a b : Nat) : a + b = b + a := by\n  omega\n`;

let s: LiveServe;
let dir: string;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kimina-sec-walk-'));
  s = await startServe({ KIMINA_TRAINER_PYTHON: join(dir, 'no-python') });
});
after(async () => {
  await s?.stop();
  rmSync(dir, { recursive: true, force: true });
});

test('workspace "/" and the home folder are refused at once, and the server stays healthy', async () => {
  for (const workspace of ['/', homedir()]) {
    const r = await s.post('/v1/training/runs', { model: 'tiny', preset: 'single-gpu-lora', gpus: 'cpu', workspace });
    assert.equal(r.status, 400, JSON.stringify(r.json));
    assert.match(r.json.detail, /must be a project folder/);
    assert.ok(r.ms < 2000, `refused in ${r.ms} ms`);
  }
  await s.health();
});

test('a huge workspace (/usr) is walked without freezing the server: /health answers fast throughout', async () => {
  const started = performance.now();
  let done = false;
  const run = s
    .post('/v1/training/runs', { model: 'tiny', preset: 'single-gpu-lora', gpus: 'cpu', workspace: '/usr' })
    .finally(() => {
      done = true;
    });
  const healthMs: number[] = [];
  while (!done && performance.now() - started < 60_000) {
    healthMs.push((await s.health()).ms);
    await new Promise((r) => setTimeout(r, 100));
  }
  const r = await run;
  const took = performance.now() - started;
  console.log(
    `workspace /usr: answered ${r.status} after ${Math.round(took)} ms; /health ${healthMs.length} probes, max ${Math.round(Math.max(...healthMs))} ms`,
  );
  assert.ok(r.status < 500, `${r.status} ${JSON.stringify(r.json).slice(0, 300)}`);
  assert.ok(took < 40_000, `the walk is bounded in time (${took} ms)`);
  assert.ok(healthMs.length >= 3, 'the walk took long enough to probe');
  assert.ok(Math.max(...healthMs) < 1000, `/health within ${Math.max(...healthMs)} ms during the walk`);
  await s.health();
});

test('symlinks out of the workspace and symlink loops are not followed', async () => {
  const outside = join(dir, 'outside');
  const ws = join(dir, 'ws');
  mkdirSync(outside, { recursive: true });
  mkdirSync(join(ws, 'Sub'), { recursive: true });
  writeFileSync(join(outside, 'Secret.lean'), theorem('secret_outside'));
  writeFileSync(join(ws, 'Mine.lean'), theorem('mine_inside'));
  writeFileSync(join(ws, 'Sub', 'Deep.lean'), theorem('deep_inside'));
  symlinkSync(outside, join(ws, 'escape'));
  symlinkSync(join(outside, 'Secret.lean'), join(ws, 'Linked.lean'));
  symlinkSync(ws, join(ws, 'Sub', 'loop'));
  symlinkSync('/', join(ws, 'root'));
  const r = await s.post('/v1/training/runs', { model: 'tiny', preset: 'single-gpu-lora', gpus: 'cpu', workspace: ws });
  assert.equal(r.status, 201, JSON.stringify(r.json));
  const runDir = join(s.home, 'training', r.json.id);
  const rows = readFileSync(join(runDir, 'train.jsonl'), 'utf8') + readFileSync(join(runDir, 'held_out.jsonl'), 'utf8');
  assert.match(rows, /mine_inside/);
  assert.match(rows, /deep_inside/);
  assert.doesNotMatch(rows, /secret_outside/);
  await s.health();
});

test('the walk stops at its bounds: depth and file count', async () => {
  const ws = join(dir, 'bounded');
  let deep = ws;
  for (let i = 0; i < 30; i++) deep = join(deep, `d${i}`);
  mkdirSync(deep, { recursive: true });
  writeFileSync(join(deep, 'TooDeep.lean'), theorem('too_deep'));
  for (let i = 0; i < 20; i++) writeFileSync(join(ws, `F${i}.lean`), theorem(`f${i}`));
  const byDepth = await leanFiles(ws, { depth: 10 });
  assert.equal(byDepth.files.length, 20);
  assert.ok(!byDepth.files.some((f) => f.endsWith('TooDeep.lean')));
  const byCount = await leanFiles(ws, { files: 5 });
  assert.equal(byCount.files.length, 5);
  assert.match(byCount.truncated ?? '', /more than 5 \.lean files/);
  assert.equal(readdirSync(ws).length, 21);
});
