// The status bar's "training" state: while attached to a server that runs a training job, the face reports
// training (found by polling GET /v1/training/runs), and ready again once the job is over.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { BackendStatus } from '../../backend/protocol';
import { HttpProveService } from '../../backend/editor/httpService';
import { startStandInServe } from '../e2e/standInServe';
import { connectFace, settledStatus } from './faceClient';

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 50 && !check(); i++) await new Promise((r) => setTimeout(r, 100));
  assert.ok(check(), what);
}

test('an attached server training a model shows as training, then ready', async () => {
  const serve = await startStandInServe();
  serve.trainingRuns.push({ id: 'r1', name: 'lora-1', state: 'running', step: 12 });
  const { client, statuses, close } = await connectFace(
    async () => new HttpProveService({ url: serve.url, source: 'setting' }),
    { refreshMs: 100 },
  );
  try {
    const first = await settledStatus(client);
    assert.equal(first.state, 'training');
    assert.match(first.detail!, /training lora-1 \(step 12\)/);
    serve.trainingRuns[0].state = 'completed';
    await until(
      () => statuses.some((s: BackendStatus) => s.state === 'ready'),
      'status returns to ready when the run completes',
    );
  } finally {
    await close();
    await serve.close();
  }
});
