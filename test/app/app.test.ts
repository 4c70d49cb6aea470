// The composition root (backend/app): each part opened once and closed once, last opened first; `kimina serve`
// opens the store once, loads the model once for every router (prove and training), and closes the store on
// SIGTERM. TEST DOUBLES: an engine that answers a fixed malformed text, the stand-in REPL (KIMINA_REPL_COMMAND).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage, TrainingRun } from '../../backend/protocol';
import type { Engine, Generation } from '../../backend/model/engine';
import { openApp } from '../../backend/app/app';
import { startServing } from '../../backend/app/serve';
import { readSettings } from '../../backend/settings/settings';
import { openDb, type Db } from '../../backend/store/db';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';
import { userSource } from '../../backend/lean/authorship';

const root = join(__dirname, '..', '..');
const temps: string[] = [];
after(() => {
  for (const d of temps) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-app-'));
  temps.push(dir);
  return dir;
}

/** TEST DOUBLE engine: every answer is the same text without a proof; counts close(). */
class FixedEngine implements Engine {
  readonly name = 'fixed-test-double';
  readonly model = 'fixed';
  closed = 0;
  async generate(conversations: ChatMessage[][]): Promise<Generation[]> {
    return conversations.map(() => ({ text: 'no proof here', tokens: 3, finishReason: 'stop' as const }));
  }
  async countPromptTokens(): Promise<number> {
    return 10;
  }
  async close(): Promise<void> {
    this.closed++;
  }
}

/** An app over a temporary home with the stand-in REPL, counting store openings and engine loads. */
function countingApp(dir: string) {
  const settings = readSettings({
    ...standInReplEnv(),
    KIMINA_HOME: dir,
    KIMINA_DB: join(dir, 'kimina.db'),
    KIMINA_LEAN_PROJECT: dir,
    KIMINA_SANDBOX: 'none',
    KIMINA_REPL_MEMORY_MB: '0',
    KIMINA_MAX_REPLS: '1',
    KIMINA_TRAINER_PYTHON: join(dir, 'no-venv', 'bin', 'python'),
  });
  const opened: Db[] = [];
  const engines: FixedEngine[] = [];
  const app = openApp({
    settings,
    log: () => {},
    openStore: (path) => {
      const db = openDb(path);
      opened.push(db);
      return db;
    },
    loadEngine: async () => {
      await new Promise((r) => setTimeout(r, 50));
      const e = new FixedEngine();
      engines.push(e);
      return e;
    },
  });
  return { app, opened, engines };
}

test('app: the store and the engine are made once however often they are asked for, and closed once, last opened first', async () => {
  const { app, opened, engines } = countingApp(tempDir());
  const order: string[] = [];
  app.own('first', () => {
    order.push('first');
  });
  assert.equal(app.store(), app.store());
  assert.equal(app.attempts(), app.attempts());
  const [a, b] = await Promise.all([app.engine(), app.engine()]);
  assert.equal(a, b);
  app.own('last', () => {
    order.push('last');
  });
  assert.equal(opened.length, 1);
  assert.equal(engines.length, 1);
  await Promise.all([app.close(), app.close()]);
  assert.deepEqual(order, ['last', 'first']);
  assert.equal(opened[0].open, false);
  assert.equal(engines[0].closed, 1);
});

test("app: the training service is built once over the app's stores, and detached when the app closes", async () => {
  const { app } = countingApp(tempDir());
  const link = { backendUrl: () => 'http://127.0.0.1:1', token: () => undefined };
  const [a, b] = await Promise.all([app.training(link), app.training(link)]);
  assert.equal(a, b);
  assert.equal(a.store, app.trainingRuns());
  let detached = 0;
  const detach = a.detach;
  a.detach = () => {
    detached++;
    detach();
  };
  await app.close();
  assert.equal(detached, 1);
});

test('app: reload closes the engine and the verifier and loads them afresh on next use; the store stays (kimina lsp after setup)', async () => {
  const { app, opened, engines } = countingApp(tempDir());
  const store = app.store();
  const first = await app.engine();
  const verifier = app.verifier();
  let verifierClosed = 0;
  const close = verifier.verifier.close.bind(verifier.verifier);
  verifier.verifier.close = async () => {
    verifierClosed++;
    await close();
  };
  await app.reload();
  assert.equal(engines[0].closed, 1);
  assert.equal(verifierClosed, 1);
  const second = await app.engine();
  assert.notEqual(second, first);
  assert.notEqual(app.verifier(), verifier);
  assert.equal(app.store(), store);
  assert.equal(opened.length, 1);
  await app.close();
  assert.equal(engines[0].closed, 1, 'the first engine is not closed twice');
  assert.equal(engines[1].closed, 1);
  assert.equal(opened[0].open, false);
});

test('app: an engine that fails to load is tried again on the next request', async () => {
  let tries = 0;
  const app = openApp({
    settings: readSettings({ KIMINA_DB: ':memory:' }),
    log: () => {},
    loadEngine: async () => {
      if (++tries === 1) throw new Error('no model yet');
      return new FixedEngine();
    },
  });
  await assert.rejects(app.engine(), /no model yet/);
  assert.equal((await app.engine()).name, 'fixed-test-double');
  assert.equal(tries, 2);
  await app.close();
});

test(
  'serving: one store and one engine for the prove and training routes; stop() closes them',
  { timeout: 60_000 },
  async () => {
    const dir = tempDir();
    const { app, opened, engines } = countingApp(dir);
    const serving = await startServing(app, { host: '127.0.0.1', port: 0 });
    let stopped = false;
    try {
      const prove = () =>
        fetch(`${serving.url}/v1/prove`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ code: 'theorem t : True := by\n  sorry\n', samples: 1, fixTurns: 0 }),
        });
      const answers = await Promise.all([prove(), prove()]);
      for (const res of answers) assert.equal(res.status, 200, await res.clone().text());
      // Win-rate filtering samples with the prover model: the training routes must get the same engine.
      const start = await fetch(`${serving.url}/v1/training/runs`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          preset: 'tiny-cpu',
          model: 'm',
          gpus: 'cpu',
          winRate: { samples: 1 },
          prompts: ['a', 'b', 'c'].map((x) => ({
            id: x,
            prompt: [{ role: 'user', content: x }],
            formalStatement: `theorem ${x} : True := by`,
          })),
        }),
      });
      assert.equal(start.status, 201, await start.clone().text());
      const run = (await start.json()) as TrainingRun;
      let state = run.state;
      for (const deadline = Date.now() + 20_000; state === 'preparing' && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 100));
        state = ((await (await fetch(`${serving.url}/v1/training/runs/${run.id}`)).json()) as TrainingRun).state;
      }
      assert.notEqual(state, 'preparing', 'win-rate estimation finished');
      // The run then starts the trainer with the app's settings (KIMINA_TRAINER_PYTHON given to readSettings only).
      let error = '';
      for (const deadline = Date.now() + 20_000; !error && Date.now() < deadline;) {
        await new Promise((r) => setTimeout(r, 100));
        error = ((await (await fetch(`${serving.url}/v1/training/runs/${run.id}`)).json()) as TrainingRun).error ?? '';
      }
      assert.ok(error.includes(join(dir, 'no-venv', 'bin', 'python')), error);
      const runs = (await (await fetch(`${serving.url}/v1/eval/runs`)).json()) as { runs: unknown[] };
      assert.deepEqual(runs.runs, []);
      assert.equal(opened.length, 1, 'the store was opened once');
      assert.equal(engines.length, 1, 'the model was loaded once');
      await serving.stop();
      stopped = true;
      assert.equal(opened[0].open, false, 'the store is closed');
      assert.equal(engines[0].closed, 1, 'the engine is closed once');
    } finally {
      if (!stopped) await serving.stop();
    }
  },
);

test(
  'kimina serve closes the store on SIGTERM (SQLite removes its write-ahead log when the last handle closes)',
  { timeout: 60_000 },
  async () => {
    const home = tempDir();
    const db = join(home, 'kimina.db');
    const child = spawn(process.execPath, ['--import', 'tsx', 'backend/cli.ts', 'serve', '--port', '0'], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: {
        ...process.env,
        ...standInReplEnv(),
        KIMINA_HOME: home,
        KIMINA_DB: db,
        KIMINA_LEAN_PROJECT: home,
        KIMINA_SANDBOX: 'none',
        KIMINA_REPL_MEMORY_MB: '0',
        KIMINA_MAX_REPLS: '1',
        KIMINA_API_TOKEN: '',
        LEAN_SERVER_API_KEY: '',
        KIMINA_SERVER_URL: '',
      },
    });
    let log = '';
    child.stderr!.on('data', (c: Buffer) => {
      log += c.toString();
    });
    const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`kimina serve did not start:\n${log}`)), 30_000);
        child.stdout!.on('data', (c: Buffer) => {
          const m = /listening on (http:\/\/\S+)/.exec(c.toString());
          if (m) {
            clearTimeout(timer);
            resolve(m[1]);
          }
        });
        void exited.then((code) => {
          clearTimeout(timer);
          reject(new Error(`kimina serve exited ${code}:\n${log}`));
        });
      });
      const { token } = JSON.parse(readFileSync(join(home, 'serve.json'), 'utf8')) as { token: string };
      assert.equal(
        (await fetch(`${url}/v1/training/runs`, { headers: { authorization: `Bearer ${token}` } })).status,
        200,
      );
      assert.ok(existsSync(`${db}-wal`), 'the store is open in WAL mode while serving');
      child.kill('SIGTERM');
      assert.equal(await exited, 0, log);
      assert.equal(existsSync(`${db}-wal`), false, `the store was closed:\n${log}`);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  },
);

test("app.verifierForFile: a user's file is checked in its own Lean project (the REPL starts there), one verifier per project", async () => {
  const dir = tempDir();
  const project = join(dir, 'own-project');
  mkdirSync(join(project, 'Own'), { recursive: true });
  writeFileSync(join(project, 'lakefile.toml'), 'name = "Own"\n');
  writeFileSync(join(project, 'lean-toolchain'), 'leanprover/lean4:v4.29.0\n');
  const settings = readSettings({
    ...standInReplEnv(),
    KIMINA_HOME: dir,
    KIMINA_DB: ':memory:',
    KIMINA_LEAN_PROJECT: dir,
    KIMINA_SANDBOX: 'none',
    KIMINA_REPL_MEMORY_MB: '0',
    KIMINA_MAX_REPLS: '1',
  });
  const app = openApp({ settings, log: () => {} });
  try {
    const file = join(project, 'Own', 'Basic.lean');
    const own = app.verifierForFile(file);
    assert.notEqual(own, app.verifier());
    assert.equal(app.verifierForFile(join(project, 'Own', 'Other.lean')), own, 'one verifier per project');
    assert.equal(app.verifierForFile(join(dir, 'Loose.lean')), app.verifier(), 'no project above: the app’s');
    const out = await own.verifier.checkUserFile(userSource('theorem t : True := trivial -- stand_in_env_probe'));
    const probe = out.response?.messages?.find((m) => m.data.startsWith('cwd='));
    assert.ok(probe, JSON.stringify(out.verdict));
    assert.match(probe.data, new RegExp(`^cwd=${realpathSync(project).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `));
  } finally {
    await app.close();
  }
});
