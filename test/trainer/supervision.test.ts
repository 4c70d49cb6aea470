// Supervision of the real Python trainer: killed mid-step it resumes from its last checkpoint with no finished
// step's metrics lost; pause checkpoints and stops, resume continues, cancel stops for good; a backend restart
// resumes a running run. Lean is the stand-in REPL (TEST DOUBLE); the model is the tiny random Qwen3.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { StepMetrics, TrainingRun } from '../../backend/protocol';
import { api, makeTinyModel, PROMPTS, removeDir, startBackend, tempDir, waitFor, type Backend } from './harness';

let dir: string;
let modelDir: string;

before(async () => {
  dir = tempDir('kimina-supervision-');
  modelDir = await makeTinyModel(join(dir, 'tiny-model'));
});
after(() => removeDir(dir));

const overrides = {
  saveSteps: 2,
  evalSteps: 0,
  maxCompletionLength: 16,
  promptsPerStep: 2,
  numGenerations: 2,
  perDeviceBatch: 4,
};

async function startRun(backend: Backend, maxSteps: number, name: string): Promise<string> {
  const r = await api<TrainingRun>(backend, 'POST', '/v1/training/runs', {
    preset: 'tiny-cpu',
    model: modelDir,
    prompts: PROMPTS,
    heldOut: [],
    gpus: 'cpu',
    name,
    overrides: { ...overrides, maxSteps },
  });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.id;
}

function state(backend: Backend, id: string, wanted: TrainingRun['state']): TrainingRun | undefined {
  const r = backend.service.jobs.get(id);
  if (r.state === 'failed' && wanted !== 'failed') throw new Error(`run failed: ${r.error}`);
  return r.state === wanted ? r : undefined;
}

function trainSteps(backend: Backend, id: string): StepMetrics[] {
  return backend.service.store.metrics(id, { kind: 'train' });
}

test(
  'killed mid-step, the trainer resumes from its last checkpoint and no finished step is lost',
  { timeout: 600_000 },
  async () => {
    const backend = await startBackend({ dir: join(dir, 'kill') });
    try {
      const id = await startRun(backend, 6, 'kill');
      await waitFor(
        'a checkpoint and a step after it',
        () => {
          const r = backend.service.jobs.get(id);
          return r.checkpointStep >= 2 && trainSteps(backend, id).some((s) => s.step === 3 && 'loss' in s.metrics);
        },
        300_000,
        20,
      );
      const before = trainSteps(backend, id);
      const pid = backend.service.store.pidOf(id);
      assert.ok(pid && pid > 0);
      process.kill(pid, 'SIGKILL'); // step 4 is in flight
      const checkpointAtKill = backend.service.jobs.get(id).checkpointStep;

      // Right after the crash every finished step is still there.
      await waitFor('the restart', () => backend.service.jobs.get(id).restarts === 1 || undefined, 30_000);
      const afterKill = trainSteps(backend, id).map((s) => s.step);
      for (const s of before) assert.ok(afterKill.includes(s.step), `step ${s.step} lost after the kill`);

      const done = await waitFor('the resumed run to finish', () => state(backend, id, 'completed'), 400_000, 200);
      assert.equal(done.restarts, 1);
      assert.equal(done.step, 6);
      const final = trainSteps(backend, id);
      assert.deepEqual(
        final.map((s) => s.step),
        [1, 2, 3, 4, 5, 6],
      );
      // Steps up to the checkpoint were not redone: their metrics are the ones reported before the kill.
      for (const s of before.filter((b) => b.step <= checkpointAtKill)) {
        assert.equal(final.find((f) => f.step === s.step)?.metrics.loss, s.metrics.loss);
      }
      const log = backend.service.store
        .logLines(id, 100)
        .map((l) => l.message)
        .join('\n');
      assert.match(log, new RegExp(`restarting from the checkpoint at step ${checkpointAtKill}`));
      assert.match(log, new RegExp(`resume=.*checkpoint-${checkpointAtKill}`));
    } finally {
      await backend.close();
    }
  },
);

test('pause checkpoints and stops, resume continues from there, cancel ends it', { timeout: 600_000 }, async () => {
  const backend = await startBackend({ dir: join(dir, 'pause') });
  try {
    const id = await startRun(backend, 40, 'pause');
    await waitFor('step 1', () => backend.service.jobs.get(id).step >= 1 || undefined, 300_000, 50);
    const pausing = await api<TrainingRun>(backend, 'POST', `/v1/training/runs/${id}/pause`);
    assert.equal(pausing.body.state, 'pausing');
    const paused = await waitFor('paused', () => state(backend, id, 'paused'), 120_000);
    assert.equal(paused.checkpointStep, paused.step, 'a checkpoint of the last finished step');
    assert.equal(backend.service.jobs.isActive(id), false);
    const again = await api<{ detail: string }>(backend, 'POST', `/v1/training/runs/${id}/pause`);
    assert.equal(again.status, 409);

    const resumed = await api<TrainingRun>(backend, 'POST', `/v1/training/runs/${id}/resume`);
    assert.equal(resumed.body.state, 'running');
    await waitFor(
      'a step after the pause',
      () => backend.service.jobs.get(id).step > paused.step || undefined,
      300_000,
      50,
    );
    const cancelled = await api<TrainingRun>(backend, 'POST', `/v1/training/runs/${id}/cancel`);
    assert.equal(cancelled.body.state, 'cancelled');
    await waitFor('the trainer to exit', () => !backend.service.jobs.isActive(id) || undefined, 30_000);
    assert.equal(backend.service.jobs.get(id).state, 'cancelled');
    const resumeCancelled = await api<{ detail: string }>(backend, 'POST', `/v1/training/runs/${id}/resume`);
    assert.equal(resumeCancelled.status, 409);
  } finally {
    await backend.close();
  }
});

test(
  'a run survives a backend restart: the new backend resumes it from its checkpoint',
  { timeout: 600_000 },
  async () => {
    const where = join(dir, 'restart');
    const first = await startBackend({ dir: where });
    const id = await startRun(first, 4, 'restart');
    await waitFor('a checkpoint', () => first.service.jobs.get(id).checkpointStep >= 2 || undefined, 300_000, 50);
    await first.close(); // the trainer gets SIGTERM; the run stays 'running' in the store
    const second = await startBackend({ dir: where });
    try {
      const done = await waitFor('completion after the restart', () => state(second, id, 'completed'), 400_000, 200);
      assert.equal(done.step, 4);
      assert.deepEqual(
        trainSteps(second, id).map((s) => s.step),
        [1, 2, 3, 4],
      );
      assert.match(
        second.service.store
          .logLines(id)
          .map((l) => l.message)
          .join('\n'),
        /backend restarted: resuming/,
      );
    } finally {
      await second.close();
    }
  },
);
