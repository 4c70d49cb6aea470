// The whole CPU path: a run created over HTTP, the job manager launching the Python TRL trainer on a tiny
// random Qwen3, real GRPO (dr_grpo) steps, the reward service with the stand-in REPL (TEST DOUBLE for Lean),
// metrics and rollouts in SQLite, held-out evaluation, checkpoints and the final merged weights.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { TrainingRun, TrainingMetricsResponse, TrainingRolloutsResponse } from '../../backend/protocol';
import {
  api,
  makeTinyModel,
  PROMPTS,
  removeDir,
  startBackend,
  tempDir,
  waitFor,
  type Backend,
  waitForCompletedRun,
} from './harness';

let backend: Backend;
let modelDir: string;

before(async () => {
  backend = await startBackend();
  modelDir = await makeTinyModel(join(backend.dir, 'tiny-model'));
});
after(async () => {
  await backend.close();
  removeDir(backend.dir);
});

test('a tiny GRPO run goes through the whole path and finishes', { timeout: 600_000 }, async () => {
  const started = Date.now();
  const created = await api<TrainingRun>(backend, 'POST', '/v1/training/runs', {
    preset: 'tiny-cpu',
    model: modelDir,
    prompts: PROMPTS.slice(0, 2),
    heldOut: PROMPTS.slice(2),
    gpus: 'cpu',
    name: 'e2e',
    overrides: {
      maxSteps: 4,
      saveSteps: 2,
      evalSteps: 2,
      evalSamples: 2,
      maxCompletionLength: 24,
      promptsPerStep: 2,
      numGenerations: 4,
      perDeviceBatch: 8,
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const id = created.body.id;
  const run = await waitForCompletedRun(backend, id);
  console.log(`tiny run: 4 steps in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  assert.equal(run.step, 4);
  assert.equal(run.checkpointStep, 4);
  assert.equal(run.restarts, 0);

  const metrics = await api<TrainingMetricsResponse>(backend, 'GET', `/v1/training/runs/${id}/metrics?kind=train`);
  const steps = metrics.body.steps;
  assert.deepEqual(
    steps.map((s) => s.step),
    [1, 2, 3, 4],
  );
  for (const s of steps) {
    for (const key of [
      'reward',
      'loss',
      'grad_norm',
      'entropy',
      'completions/mean_length',
      'completions/max_length',
      'completions/clipped_ratio',
      'perf/time_per_step',
      'perf/tokens_per_s',
      'acc/turn_1',
      'format_error/turn_1/No error.',
    ]) {
      assert.ok(key in s.metrics, `step ${s.step} lacks ${key}: ${Object.keys(s.metrics).join(', ')}`);
    }
    assert.ok(s.metrics['perf/tokens_per_s'] > 0);
    // a random model writes no think block: every answer fails the format check and scores 0
    assert.equal(s.metrics.reward, 0);
    const formatCounts = Object.entries(s.metrics)
      .filter(([k]) => k.startsWith('format_error/turn_1/'))
      .reduce((n, [, v]) => n + v, 0);
    assert.equal(formatCounts, 8, 'each of the 2 prompts x 4 samples counted once');
  }

  const evals = (await api<TrainingMetricsResponse>(backend, 'GET', `/v1/training/runs/${id}/metrics?kind=eval`)).body
    .steps;
  assert.deepEqual(
    evals.map((s) => s.step),
    [0, 2, 4],
    'base model at step 0, then every 2 steps',
  );
  for (const e of evals) {
    assert.ok('eval/acc_turn_1/pass@2' in e.metrics && 'eval/acc_turn_2/pass@2' in e.metrics);
    assert.equal(e.metrics['eval/prompts'], 2);
    assert.equal(e.metrics['eval/count/turn_1'], 4, '2 held-out prompts x 2 samples, generated in one padded batch');
  }
  assert.equal(run.baseEval?.step, 0);
  assert.equal(run.latestEval?.step, 4);
  assert.equal(run.improved, false, 'no better than the base model: 0 vs 0');

  const rollouts = (await api<TrainingRolloutsResponse>(backend, 'GET', `/v1/training/runs/${id}/rollouts?limit=50`))
    .body.rollouts;
  assert.ok(rollouts.length > 0);
  assert.ok(rollouts.some((r) => r.purpose === 'train') && rollouts.some((r) => r.purpose === 'eval'));

  const output = run.outputDir;
  const checkpoints = readdirSync(output)
    .filter((d) => d.startsWith('checkpoint-'))
    .sort();
  assert.deepEqual(checkpoints, ['checkpoint-2', 'checkpoint-4']);
  assert.ok(existsSync(join(output, 'checkpoint-4', 'fix_cache.json')));
  assert.ok(run.finalDir && existsSync(join(run.finalDir, 'model.safetensors')));

  // The merged weights convert to the in-process engine's ONNX folder.
  const exported = await api<{ onnxDir: string }>(backend, 'POST', `/v1/training/runs/${id}/export`, {
    quantize: 'none',
  });
  assert.equal(exported.status, 200, JSON.stringify(exported.body));
  assert.ok(
    existsSync(join(exported.body.onnxDir, 'onnx')) && existsSync(join(exported.body.onnxDir, 'tokenizer.json')),
  );
  assert.equal(backend.service.jobs.get(id).onnxDir, exported.body.onnxDir);
});

test('LoRA through peft: adapter checkpoints, merged full weights at the end', { timeout: 600_000 }, async () => {
  const created = await api<TrainingRun>(backend, 'POST', '/v1/training/runs', {
    preset: 'tiny-cpu',
    model: modelDir,
    prompts: PROMPTS,
    heldOut: [],
    gpus: 'cpu',
    name: 'lora',
    overrides: {
      maxSteps: 2,
      saveSteps: 2,
      evalSteps: 0,
      loraRank: 4,
      maxCompletionLength: 16,
      promptsPerStep: 2,
      numGenerations: 2,
      perDeviceBatch: 4,
    },
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const run = await waitFor(
    'the LoRA run to finish',
    () => {
      const r = backend.service.jobs.get(created.body.id);
      if (r.state === 'failed') throw new Error(`run failed: ${r.error}`);
      return r.state === 'completed' ? r : undefined;
    },
    540_000,
    250,
  );
  assert.ok(
    existsSync(join(run.outputDir, 'checkpoint-2', 'adapter_model.safetensors')),
    'the checkpoint holds the adapter',
  );
  assert.ok(existsSync(join(run.finalDir!, 'model.safetensors')), 'the final export is full weights');
  assert.ok(!existsSync(join(run.finalDir!, 'adapter_config.json')), 'merged, not an adapter');
});

test('bad requests get clear errors and create nothing', async () => {
  const before = backend.service.jobs.list().length;
  const noModel = await api<{ detail: string }>(backend, 'POST', '/v1/training/runs', {
    preset: 'tiny-cpu',
    prompts: PROMPTS,
  });
  assert.equal(noModel.status, 400);
  assert.match(noModel.body.detail, /model is required/);
  const badPreset = await api<{ detail: string }>(backend, 'POST', '/v1/training/runs', {
    preset: 'huge',
    model: modelDir,
    prompts: PROMPTS,
  });
  assert.equal(badPreset.status, 400);
  assert.match(badPreset.body.detail, /unknown preset/);
  const badBatch = await api<{ detail: string }>(backend, 'POST', '/v1/training/runs', {
    preset: 'tiny-cpu',
    model: modelDir,
    prompts: PROMPTS,
    overrides: { numGenerations: 1 },
  });
  assert.equal(badBatch.status, 400);
  assert.match(badBatch.body.detail, /numGenerations must be at least 2/);
  const noPrompts = await api<{ detail: string }>(backend, 'POST', '/v1/training/runs', {
    preset: 'tiny-cpu',
    model: modelDir,
    prompts: [],
  });
  assert.equal(noPrompts.status, 400);
  const missing = await api<{ detail: string }>(backend, 'POST', '/v1/training/runs/nope/pause');
  assert.equal(missing.status, 404);
  assert.equal(backend.service.jobs.list().length, before);
  const dir = tempDir('kimina-empty-');
  removeDir(dir);
});

test(
  "a model that cannot be loaded fails the run at once with the trainer's reason",
  { timeout: 120_000 },
  async () => {
    const created = await api<TrainingRun>(backend, 'POST', '/v1/training/runs', {
      preset: 'tiny-cpu',
      model: join(backend.dir, 'no-such-model'),
      prompts: PROMPTS,
      heldOut: [],
      gpus: 'cpu',
      name: 'bad model',
    });
    assert.equal(created.status, 201);
    const run = await waitFor(
      'the run to fail',
      () => {
        const r = backend.service.jobs.get(created.body.id);
        return r.state === 'failed' ? r : undefined;
      },
      100_000,
      200,
    );
    assert.equal(run.restarts, 0, 'no pointless restarts');
    assert.match(run.error ?? '', /refused its configuration:[\s\S]*cannot load the model/);
  },
);
