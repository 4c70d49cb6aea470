// The Training Monitor's requests over the language-server face (real JSON-RPC framing), relayed to a real
// `kimina serve` (stand-in REPL as the TEST DOUBLE for Lean; no trainer process is started: the run waits in
// the queue for a GPU that does not exist, so pause, resume and cancel act on a queued run). Also: the face
// with no server attached says how to get one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  type TrainingConnection,
  type TrainingRun,
  type TrainingStreamEvent,
  lspMethods,
} from '../../backend/protocol';
import { HttpProveService } from '../../backend/editor/httpService';
import type { ProveService } from '../../backend/editor/service';
import { startRealServe, type RealServe } from '../e2e/realServe';
import { connectFace, faceRequest, type FaceClient } from './faceClient';

const TOKEN = 'training-face-token';
let serve: RealServe;
let conn: FaceClient;
const events: TrainingStreamEvent[] = [];
const connections: TrainingConnection[] = [];

before(async () => {
  serve = await startRealServe({ token: TOKEN });
  conn = await connectFace(async () => new HttpProveService({ url: serve.url, token: TOKEN, source: 'setting' }), {
    refreshMs: 0,
  });
  conn.client.onNotification(lspMethods.trainingEvent, (e: TrainingStreamEvent) => {
    events.push(e);
  });
  conn.client.onNotification(lspMethods.trainingConnection, (c: TrainingConnection) => {
    connections.push(c);
  });
});

after(async () => {
  await conn?.close();
  await serve?.close();
});

async function until<T>(what: string, probe: () => T | undefined, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const runEvent = (id: string, state: TrainingRun['state']) => () =>
  events.find((e) => e.type === 'run' && e.run.id === id && e.run.state === state);

test(
  'presets, runs, start, events, pause/resume/cancel, metrics/log and GPUs through the face',
  { timeout: 90_000 },
  async () => {
    const { client } = conn;
    const followed = await faceRequest(client, lspMethods.trainingFollow, { follow: true });
    assert.equal(followed.status, 'connecting');
    await until('the event stream to connect', () => connections.find((c) => c.status === 'connected'));

    const { presets } = await faceRequest(client, lspMethods.trainingPresets, {});
    assert.ok(presets['tiny-cpu']?.summary, "the server's presets come through");
    assert.deepEqual((await faceRequest(client, lspMethods.trainingRuns, {})).runs, []);

    const run = await faceRequest(client, lspMethods.trainingStart, {
      preset: 'tiny-cpu',
      model: '/nonexistent/model',
      name: 'face run',
      gpus: '999',
      schedule: 'when-idle',
      prompts: [
        {
          id: 'p1',
          prompt: [{ role: 'user', content: 'Prove: theorem t : 1 + 1 = 2' }],
          formalStatement: 'theorem t : 1 + 1 = 2 := by',
        },
      ],
      heldOut: [],
    });
    assert.equal(run.name, 'face run');
    assert.equal(run.state, 'queued', 'GPU 999 never becomes idle, so the run waits');
    await until('the new run as an event', runEvent(run.id, 'queued'));
    assert.deepEqual(
      (await faceRequest(client, lspMethods.trainingRuns, {})).runs.map((r) => r.id),
      [run.id],
    );
    assert.equal((await faceRequest(client, lspMethods.trainingRun, { id: run.id })).id, run.id);

    assert.equal((await faceRequest(client, lspMethods.trainingPause, { id: run.id })).state, 'paused');
    await until('the pause as an event', runEvent(run.id, 'paused'));
    assert.equal((await faceRequest(client, lspMethods.trainingResume, { id: run.id })).state, 'queued');
    assert.equal((await faceRequest(client, lspMethods.trainingCancel, { id: run.id })).state, 'cancelled');
    await until('the cancel as an event', runEvent(run.id, 'cancelled'));

    assert.deepEqual((await faceRequest(client, lspMethods.trainingMetrics, { id: run.id })).steps, []);
    assert.deepEqual((await faceRequest(client, lspMethods.trainingRollouts, { id: run.id, limit: 5 })).rollouts, []);
    const log = await faceRequest(client, lspMethods.trainingLog, { id: run.id, limit: 50 });
    assert.ok(
      log.lines.some((l) => /created: 1 training prompts/.test(l.message)),
      JSON.stringify(log.lines),
    );
    assert.equal(typeof (await faceRequest(client, lspMethods.trainingGpus, {})).available, 'boolean');
  },
);

test("the server's refusals come back as the request's error, with its sentence", async () => {
  await assert.rejects(
    faceRequest(conn.client, lspMethods.trainingRun, { id: 'no-such-run' }),
    /no training run 'no-such-run'/,
  );
  await assert.rejects(faceRequest(conn.client, lspMethods.trainingCancel, { id: '' }), /needs a run id/);
});

test('after follow: false no more events are forwarded', async () => {
  const stopped = await faceRequest(conn.client, lspMethods.trainingFollow, { follow: false });
  assert.ok(stopped.status);
  const before = events.length;
  const run = await faceRequest(conn.client, lspMethods.trainingStart, {
    preset: 'tiny-cpu',
    model: 'm',
    gpus: '999',
    schedule: 'when-idle',
    prompts: [{ id: 'p2', prompt: [{ role: 'user', content: 'x' }], formalStatement: 'theorem u : True := by' }],
    heldOut: [],
  });
  await faceRequest(conn.client, lspMethods.trainingCancel, { id: run.id });
  await new Promise((r) => setTimeout(r, 500));
  assert.equal(events.length, before);
});

test('with no server attached: the requests fail saying how to get one, and the connection says no-backend', async () => {
  const inProcess: ProveService = {
    kind: 'in-process',
    describe: async () => ({}),
    close: async () => {},
    prove: () => Promise.reject(new Error('not used')),
    check: () => Promise.reject(new Error('not used')),
  };
  const local = await connectFace(async () => inProcess, { refreshMs: 0 });
  try {
    await assert.rejects(
      faceRequest(local.client, lspMethods.trainingRuns, {}),
      /no Kimina server is attached.*`kimina serve`/,
    );
    const state = await faceRequest(local.client, lspMethods.trainingFollow, { follow: true });
    assert.equal(state.status, 'no-backend');
    assert.match(state.message ?? '', /kimina serve/);
  } finally {
    await local.close();
  }
});
