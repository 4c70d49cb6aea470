// Learning signal: with a simple reward (the share of digits in the answer, from a scripted scorer TEST DOUBLE
// standing in for format x Lean), real dr_grpo steps on the tiny random Qwen3 must raise the mean reward.
// A sign error in the advantage or a wrong completion mask makes it fall or stay flat, which "the weights
// changed" would not catch.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { TrainingRun } from '../../backend/protocol';
import type { RewardScorer } from '../../backend/training/rewardService';
import { api, makeTinyModel, PROMPTS, removeDir, startBackend, tempDir, waitForCompletedRun } from './harness';

/** TEST DOUBLE scorer: the fraction of characters that are digits; no format or Lean involved. */
const digitShare: RewardScorer = async (items) =>
  items.map((it) => {
    const chars = [...it.response];
    const score = chars.length ? chars.filter((c) => c >= '0' && c <= '9').length / chars.length : 0;
    return {
      score,
      acc: score,
      formatError: 'NONE',
      formatErrorText: 'No error.',
      verdict: null,
      feedback: null,
      code: null,
      think: '',
    };
  });

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

test('the tiny policy learns: mean reward rises within 16 GRPO steps', { timeout: 600_000 }, async () => {
  const dir = tempDir('kimina-signal-');
  const backend = await startBackend({ dir, scorer: digitShare });
  try {
    const modelDir = await makeTinyModel(join(dir, 'tiny-model'), 1);
    const r = await api<TrainingRun>(backend, 'POST', '/v1/training/runs', {
      preset: 'tiny-cpu',
      model: modelDir,
      prompts: PROMPTS,
      heldOut: [],
      gpus: 'cpu',
      name: 'signal',
      overrides: {
        maxSteps: 16,
        saveSteps: 100,
        evalSteps: 0,
        learningRate: 3e-3,
        promptsPerStep: 4,
        numGenerations: 8,
        perDeviceBatch: 32,
        maxCompletionLength: 16,
        fixSamplingRate: 0,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    await waitForCompletedRun(backend, r.body.id);
    const rewards = backend.service.store.metrics(r.body.id, { kind: 'train' }).map((s) => s.metrics.reward);
    assert.equal(rewards.length, 16);
    const first = mean(rewards.slice(0, 4));
    const last = mean(rewards.slice(-4));
    console.log(
      `mean reward: first 4 steps ${first.toFixed(3)}, last 4 steps ${last.toFixed(3)}; all ${rewards.map((x) => x.toFixed(2)).join(' ')}`,
    );
    assert.ok(
      last > first + 0.1 && last > 2 * first,
      `reward did not rise enough: ${first.toFixed(3)} -> ${last.toFixed(3)}`,
    );
  } finally {
    await backend.close();
    removeDir(dir);
  }
});
