// The Training Monitor's pure parts: state reduction, chart series, format-error summary, controls per state,
// and the host's SSE parser.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { TrainingRun } from '../../backend/protocol';
import {
  CHARTS,
  chartData,
  controlsFor,
  emptyMonitor,
  latestFormatErrors,
  reduceMonitor,
  MAX_ROLLOUTS_SHOWN,
} from '../../media/trainingMonitorState';
import { SseParser } from '../../backend/protocol';
import { presetHyper } from '../../backend/training/presets';

function run(id: string, state: TrainingRun['state'] = 'running'): TrainingRun {
  return {
    id,
    name: id,
    state,
    preset: 'tiny-cpu',
    model: 'm',
    gpus: 'cpu',
    schedule: 'now',
    hyper: presetHyper('tiny-cpu'),
    createdAt: '',
    updatedAt: '',
    step: 0,
    checkpointStep: 0,
    restarts: 0,
    trainPrompts: 1,
    heldOutPrompts: 0,
    outputDir: '',
    finalDir: null,
    baseEval: null,
    latestEval: null,
    improved: null,
    onnxDir: null,
    error: null,
  };
}

test('runs: the list selects the newest, a run event updates in place or adds', () => {
  const s = emptyMonitor();
  reduceMonitor(s, { type: 'runs', runs: [run('b'), run('a')] });
  assert.equal(s.selected, 'b');
  reduceMonitor(s, { type: 'run', run: { ...run('a'), state: 'paused' } });
  assert.equal(s.runs.find((r) => r.id === 'a')?.state, 'paused');
  reduceMonitor(s, { type: 'run', run: run('c') });
  assert.deepEqual(
    s.runs.map((r) => r.id),
    ['c', 'b', 'a'],
  );
  assert.equal(s.selected, 'b', 'a new run does not steal the selection');
});

test('metrics merge per step; charts keep only series that have values; eval keys match any k', () => {
  const s = emptyMonitor();
  reduceMonitor(s, {
    type: 'metrics',
    runId: 'r',
    replace: true,
    steps: [
      { step: 1, kind: 'train', metrics: { reward: 0.1, 'acc/turn_1': 0.2 } },
      { step: 0, kind: 'eval', metrics: { 'eval/acc_turn_1/pass@8': 0.5 } },
    ],
  });
  reduceMonitor(s, {
    type: 'metrics',
    runId: 'r',
    replace: false,
    steps: [
      { step: 2, kind: 'train', metrics: { reward: 0.3 } },
      { step: 1, kind: 'train', metrics: { loss: 1.5 } },
    ],
  });
  const reward = chartData(
    s,
    'r',
    CHARTS.find((c) => c.id === 'reward')!,
  );
  assert.deepEqual(reward, {
    labels: ['reward', 'acc turn 1'],
    data: [
      [1, 2],
      [0.1, 0.3],
      [0.2, null],
    ],
  });
  const loss = chartData(
    s,
    'r',
    CHARTS.find((c) => c.id === 'loss')!,
  );
  assert.deepEqual(loss?.data, [
    [1, 2],
    [1.5, null],
  ]);
  const evals = chartData(
    s,
    'r',
    CHARTS.find((c) => c.id === 'eval')!,
  );
  assert.deepEqual(evals, { labels: ['before fix'], data: [[0], [0.5]] });
  assert.equal(
    chartData(
      s,
      'r',
      CHARTS.find((c) => c.id === 'memory')!,
    ),
    null,
    'no GPU memory on the CPU: no chart',
  );
  reduceMonitor(s, { type: 'metrics', runId: 'r', replace: true, steps: [] });
  assert.equal(chartData(s, 'r', CHARTS[0]), null);
});

test('format errors of the newest step, biggest first, without "No error."', () => {
  const s = emptyMonitor();
  reduceMonitor(s, {
    type: 'metrics',
    runId: 'r',
    replace: true,
    steps: [
      { step: 1, kind: 'train', metrics: { 'format_error/turn_1/Generation repeats.': 9 } },
      {
        step: 2,
        kind: 'train',
        metrics: {
          'format_error/turn_1/No error.': 3,
          'format_error/turn_1/Could not find a valid think block.': 1,
          'format_error/turn_1/Could not find a valid lean4 code block.': 4,
          'format_error/turn_1/Generation repeats.': 0,
        },
      },
    ],
  });
  assert.deepEqual(latestFormatErrors(s, 'r'), [
    { text: 'Could not find a valid lean4 code block.', count: 4 },
    { text: 'Could not find a valid think block.', count: 1 },
  ]);
});

test('rollouts are newest first, deduplicated and capped', () => {
  const s = emptyMonitor();
  const r = (id: number) => ({
    id,
    runId: 'r',
    step: id,
    purpose: 'train' as const,
    promptId: 'p',
    turn: 1,
    think: '',
    code: null,
    response: '',
    formatError: 'NONE' as const,
    verdict: null,
    score: 0,
    createdAt: '',
  });
  reduceMonitor(s, { type: 'rollouts', runId: 'r', replace: true, rollouts: [r(1), r(2)] });
  reduceMonitor(s, { type: 'rollouts', runId: 'r', replace: false, rollouts: [r(2), r(3)] });
  assert.deepEqual(
    s.rollouts.get('r')!.map((x) => x.id),
    [3, 2, 1],
  );
  reduceMonitor(s, {
    type: 'rollouts',
    runId: 'r',
    replace: false,
    rollouts: Array.from({ length: 40 }, (_, i) => r(100 + i)),
  });
  assert.equal(s.rollouts.get('r')!.length, MAX_ROLLOUTS_SHOWN);
  assert.equal(s.rollouts.get('r')![0].id, 139);
});

test('controls follow the run state', () => {
  assert.deepEqual(controlsFor(run('a', 'running')), ['pause', 'cancel']);
  assert.deepEqual(controlsFor(run('a', 'paused')), ['resume', 'cancel']);
  assert.deepEqual(controlsFor(run('a', 'failed')), ['resume', 'cancel']);
  assert.deepEqual(controlsFor(run('a', 'completed')), []);
  assert.deepEqual(controlsFor(run('a', 'cancelled')), []);
});

test('SSE parser: split frames, comments, multi-line data, CRLF, malformed frames skipped', () => {
  const p = new SseParser();
  assert.deepEqual(p.push(': keep-alive\n\nevent: run\ndata: {"a":'), []);
  assert.deepEqual(p.push('1}\n\n'), [{ event: 'run', data: { a: 1 } }]);
  assert.deepEqual(p.push('event: log\r\ndata: [1,\r\ndata: 2]\r\n\r\ndata: {bad\n\nevent: x\ndata: 3\n\n'), [
    { event: 'log', data: [1, 2] },
    { event: 'x', data: 3 },
  ]);
});
