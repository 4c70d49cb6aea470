// Error-fix turns inside real GRPO steps: failed first answers with Lean feedback enter the trainer's fix cache,
// later generation batches draw fix prompts (whole groups), and their answers come back as turn-2 reward items
// carrying the turn-1 answer. The scorer is a TEST DOUBLE that fails every answer with a fixed Lean-style error.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import type { RewardItem, TrainingRun } from '../../backend/protocol';
import type { RewardScorer } from '../../backend/training/rewardService';
import { api, makeTinyModel, PROMPTS, removeDir, startBackend, tempDir, waitForCompletedRun } from './harness';

test('failed answers become fix prompts that later steps train on as turn 2', { timeout: 600_000 }, async () => {
  const seen: RewardItem[] = [];
  const failing: RewardScorer = async (items) => {
    seen.push(...items);
    return items.map(() => ({
      score: 0,
      acc: 0,
      formatError: 'NONE',
      formatErrorText: 'No error.',
      verdict: 'lean_error',
      code: 'c',
      think: '',
      feedback: '# Error 1:\nError message: \nunknown identifier\n\n',
    }));
  };
  const dir = tempDir('kimina-fix-');
  const backend = await startBackend({ dir, scorer: failing });
  try {
    const model = await makeTinyModel(join(dir, 'tiny-model'));
    const r = await api<TrainingRun>(backend, 'POST', '/v1/training/runs', {
      preset: 'tiny-cpu',
      model,
      prompts: PROMPTS,
      heldOut: [],
      gpus: 'cpu',
      name: 'fix',
      overrides: {
        maxSteps: 5,
        saveSteps: 5,
        evalSteps: 0,
        promptsPerStep: 4,
        numGenerations: 2,
        perDeviceBatch: 8,
        maxCompletionLength: 12,
        fixSamplingRate: 0.5,
      },
    });
    assert.equal(r.status, 201, JSON.stringify(r.body));
    await waitForCompletedRun(backend, r.body.id);

    const turn2 = seen.filter((i) => i.turn === 2);
    assert.ok(turn2.length > 0, 'some groups were fix prompts');
    assert.equal(turn2.length % 2, 0, 'whole groups of 2 samples');
    for (const it of turn2) assert.equal(it.previous.length, 1, 'a turn-2 item carries the turn-1 answer');
    const firstStep = seen.slice(0, 8);
    assert.ok(
      firstStep.every((i) => i.turn === 1),
      'the cache is empty on the first step',
    );
    const share = turn2.length / seen.slice(8).length;
    assert.ok(share > 0.15 && share < 0.85, `fix-prompt share ${share.toFixed(2)} far from the 0.5 sampling rate`);

    const steps = backend.service.store.metrics(r.body.id, { kind: 'train' });
    assert.equal(steps[0].metrics['multiturn/turn_1/added_in_database'], 8);
    assert.ok(
      steps.some((s) => (s.metrics['multiturn/turn_2/exceed_max_turn'] ?? 0) > 0),
      'failed turn-2 answers are not fed back again',
    );
    assert.ok(steps.some((s) => 'acc/turn_2' in s.metrics));
    assert.ok(steps[steps.length - 1].metrics['multiturn/cache_size'] > 8);
  } finally {
    await backend.close();
    removeDir(dir);
  }
});
