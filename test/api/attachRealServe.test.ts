// The attach path against the real `kimina serve` (its /v1/prove stream and /v1/check, token required),
// with TEST DOUBLES behind it through its settings: the scripted ONNX model (turn 1 uses a lemma that does not
// exist, the fix turn is correct) and the stand-in REPL. The editor face forwards, the server proves.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EditorProveResult, lspMethods } from '../../backend/protocol';
import { HttpProveService } from '../../backend/editor/httpService';
import { applyEdit } from '../../backend/editor/splice';
import { offsetAt } from '../../backend/editor/leanSource';
import { ALGEBRA_STATEMENT, writeScriptedModel } from '../../backend/demo/models/scriptedModel';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';
import { connectFace, settledStatus, type FaceClient } from './faceClient';

const text = `import Mathlib\n\n${ALGEBRA_STATEMENT} := by\n  sorry\n`;
let dir: string;
let server: ChildProcess;
let url: string;
let conn: FaceClient;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kimina-attach-'));
  writeScriptedModel(join(dir, 'model'), { variant: 'fix' });
  server = spawn(process.execPath, ['--import', 'tsx', 'backend/cli.ts', 'serve', '--port', '0'], {
    env: {
      ...process.env,
      ...standInReplEnv(),
      KIMINA_MODEL: join(dir, 'model'),
      KIMINA_ENGINE: 'onnx',
      KIMINA_DEVICE: 'cpu',
      KIMINA_THREADS: '1',
      KIMINA_SANDBOX: 'none',
      KIMINA_REPL_MEMORY_MB: '0',
      KIMINA_MAX_REPLS: '1',
      KIMINA_HOME: dir,
      KIMINA_DB: join(dir, 'kimina.db'),
      KIMINA_LEAN_PROJECT: dir,
      KIMINA_API_TOKEN: 'attach-token',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  server.stderr!.on('data', (c: Buffer) => {
    log += c.toString();
  });
  url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kimina serve did not start:\n${log}`)), 30_000);
    server.stdout!.on('data', (c: Buffer) => {
      const m = /listening on (http:\/\/\S+)/.exec(c.toString());
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    server.on('exit', (code) => reject(new Error(`kimina serve exited ${code}:\n${log}`)));
  });
  conn = await connectFace(async () => new HttpProveService({ url, token: 'attach-token', source: 'setting' }));
});

after(async () => {
  await conn?.close();
  if (server && server.exitCode === null) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    // Give it a few seconds to stop its REPLs, then make sure it is gone.
    const graceful = await Promise.race([
      exited.then(() => true),
      new Promise((r) => setTimeout(() => r(false), 5000)),
    ]);
    if (!graceful) {
      console.error('kimina serve did not exit within 5 s of SIGTERM; killing it');
      server.kill('SIGKILL');
      await exited;
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

test('attached to kimina serve: status, then a proof streamed from the server and spliced by the editor face', async () => {
  const status = await settledStatus(conn.client);
  assert.equal(status.state, 'ready', status.detail);
  assert.equal(status.backend, 'server');
  const result = (await conn.client.sendRequest(lspMethods.prove, {
    id: 'attach-1',
    code: text,
    position: { line: 3, character: 2 },
    samples: 1,
  })) as EditorProveResult;
  assert.equal(result.status, 'proved');
  assert.deepEqual(
    result.attempts.map((a) => [a.turn, a.verdict?.status]),
    [
      [1, 'lean_error'],
      [2, 'valid'],
    ],
  );
  assert.ok(conn.events.some((e) => e.type === 'think' && e.id === 'attach-1'));
  const updated = applyEdit(text, result.edit!, (l, c) => offsetAt(text, l, c));
  assert.match(updated, /x = 4 := by\n {2}have h₁ : 2 \* x = 8 := by linarith\n {2}linarith\n$/);
});
