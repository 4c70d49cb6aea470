// `kimina serve` as a process: the discovery file it writes once listening (<KIMINA_HOME>/serve.json, 0600)
// and a clean, quick exit on SIGTERM/SIGINT after real work (a proof through the ONNX engine and the REPL
// pool), with TEST DOUBLES behind it: the scripted model and the stand-in REPL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALGEBRA_STATEMENT, writeScriptedModel } from '../../backend/demo/models/scriptedModel';
import * as discovery from '../../backend/editor/discovery';
import { kiminaHome, readSome, type Env } from '../../backend/settings/settings';
import { cleanUpServes, serve as serveWith, stop, type Served } from './spawnServe';

// The commands read the settings and hand them down; these tests read them from the environment they set.
const findServer = (env: Env) =>
  discovery.findServer({ ...readSome(['apiToken', 'serverUrl'], env), home: kiminaHome() });

let modelDir: string;

before(() => {
  modelDir = mkdtempSync(join(tmpdir(), 'kimina-serve-model-'));
  writeScriptedModel(modelDir, { variant: 'fix' });
});
after(() => {
  cleanUpServes();
  rmSync(modelDir, { recursive: true, force: true });
});

const serve = (extraEnv: Record<string, string> = {}, home?: string): Promise<Served> =>
  serveWith({ KIMINA_MODEL: modelDir, ...extraEnv }, home);

async function proveOnce(url: string, headers: Record<string, string> = {}): Promise<{ status: string }> {
  const res = await fetch(`${url}/v1/prove`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ code: `import Mathlib\n\n${ALGEBRA_STATEMENT} := by\n  sorry\n`, samples: 1 }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()) as { status: string };
}

test('serve writes serve.json (url, token, pid; mode 0600) once listening, and after a proof exits within 2 s of SIGTERM, removing it', async (t) => {
  const s = await serve({ KIMINA_API_TOKEN: 'lifecycle-token' });
  const file = join(s.home, 'serve.json');
  try {
    assert.deepEqual(JSON.parse(readFileSync(file, 'utf8')), {
      url: s.url,
      token: 'lifecycle-token',
      pid: s.child.pid,
    });
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const saved = process.env.KIMINA_HOME;
    process.env.KIMINA_HOME = s.home;
    try {
      assert.deepEqual(findServer({}), { url: s.url, token: 'lifecycle-token', source: 'discovery' });
    } finally {
      if (saved === undefined) delete process.env.KIMINA_HOME;
      else process.env.KIMINA_HOME = saved;
    }
    const result = await proveOnce(s.url, { authorization: 'Bearer lifecycle-token' });
    assert.equal(result.status, 'proved');
  } finally {
    const { ms, code } = await stop(s, 'SIGTERM');
    t.diagnostic(`exited ${ms} ms after SIGTERM`);
    assert.equal(code, 0, s.log());
    assert.ok(ms < 2000, `exit took ${ms} ms:\n${s.log()}`);
  }
  assert.equal(existsSync(file), false, 'serve.json is removed on shutdown');
});

test('without a configured token serve.json holds a random one; SIGINT while a proof waits for Lean exits within 3 s', async (t) => {
  // The stand-in REPL takes 8 s to import Mathlib, so the proof is still waiting for Lean when the signal comes.
  // A Lean check in flight does not stop early: shutdown waits 1 s for the cancelled proof, then goes on.
  const s = await serve({ STAND_IN_IMPORT_MS: '8000' });
  const file = join(s.home, 'serve.json');
  let inFlight: Promise<unknown> = Promise.resolve();
  try {
    const written = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    assert.deepEqual(Object.keys(written).sort(), ['pid', 'token', 'url']);
    assert.deepEqual([written.url, written.pid], [s.url, s.child.pid]);
    assert.match(String(written.token), /^[A-Za-z0-9_-]{32}$/, 'a random token (24 bytes, base64url)');
    inFlight = proveOnce(s.url, { authorization: `Bearer ${String(written.token)}` }).catch((err: unknown) => err);
    await new Promise((r) => setTimeout(r, 1500));
  } catch (err) {
    s.child.kill('SIGKILL');
    throw err;
  }
  const { ms, code } = await stop(s, 'SIGINT');
  const answer = await inFlight;
  assert.ok(
    answer instanceof Error || (answer as { status?: string }).status === 'cancelled',
    `the proof in flight ended: ${JSON.stringify(answer)}`,
  );
  t.diagnostic(`exited ${ms} ms after SIGINT`);
  assert.equal(code, 0, s.log());
  assert.ok(ms < 3000, `exit took ${ms} ms:\n${s.log()}`);
  assert.equal(existsSync(file), false);
});

test('a serve.json that belongs to another live server is left alone on shutdown', async () => {
  const s = await serve();
  const file = join(s.home, 'serve.json');
  const other = JSON.stringify({ url: 'http://127.0.0.1:9', pid: process.pid });
  writeFileSync(file, other, { mode: 0o600 }); // another server started since, with the same KIMINA_HOME
  const { code } = await stop(s, 'SIGTERM');
  assert.equal(code, 0, s.log());
  assert.equal(readFileSync(file, 'utf8'), other);
});

test("a server started while another runs takes serve.json over, and gives the other one's record back on exit", async () => {
  const home = mkdtempSync(join(tmpdir(), 'kimina-serve-home-'));
  const earlier = JSON.stringify({ url: 'http://127.0.0.1:9', token: 'earlier', pid: process.pid }) + '\n'; // this test process stands in for the earlier server
  writeFileSync(join(home, 'serve.json'), earlier, { mode: 0o600 });
  const s = await serve({}, home);
  const file = join(s.home, 'serve.json');
  let during: { pid?: number } = {};
  try {
    during = JSON.parse(readFileSync(file, 'utf8')) as { pid?: number };
  } finally {
    await stop(s, 'SIGTERM');
  }
  assert.equal(during.pid, s.child.pid);
  assert.equal(readFileSync(file, 'utf8'), earlier);
});
