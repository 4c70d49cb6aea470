// The Training charts' pure parts: a comparison of runs on one step axis (each run's series named after it),
// the index a legend shows when the pointer is away (the newest value, so legends never read "--"), and the side
// bar's live status (the newest value of each series).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  CHARTS,
  chartData,
  comparisonData,
  emptyMonitor,
  latestIndex,
  latestMetrics,
  reduceMonitor,
} from '../../media/trainingMonitorState';

const reward = CHARTS.find((c) => c.id === 'reward')!;

function withMetrics() {
  const state = emptyMonitor();
  reduceMonitor(state, {
    type: 'metrics',
    runId: 'a',
    replace: true,
    steps: [
      { step: 1, kind: 'train', metrics: { reward: 0.1, 'acc/turn_1': 0.2 } },
      { step: 2, kind: 'train', metrics: { reward: 0.3, 'acc/turn_1': 0.4 } },
    ],
  });
  reduceMonitor(state, {
    type: 'metrics',
    runId: 'b',
    replace: true,
    steps: [
      { step: 2, kind: 'train', metrics: { reward: 0.5 } },
      { step: 3, kind: 'train', metrics: { reward: 0.7 } },
    ],
  });
  return state;
}

test('a comparison puts every run on one step axis, each series named after its run', () => {
  const state = withMetrics();
  const d = comparisonData(
    state,
    [
      { id: 'a', name: 'run A' },
      { id: 'b', name: 'run B' },
    ],
    reward,
  )!;
  assert.deepEqual(d.labels, ['run A: reward', 'run A: acc turn 1', 'run B: reward']);
  assert.deepEqual(d.data, [
    [1, 2, 3],
    [0.1, 0.3, null],
    [0.2, 0.4, null],
    [null, 0.5, 0.7],
  ]);
  // one run: exactly the side bar's old chart data
  assert.deepEqual(comparisonData(state, [{ id: 'a', name: 'run A' }], reward), chartData(state, 'a', reward));
  assert.equal(comparisonData(state, [{ id: 'none', name: 'x' }], reward), null);
});

test('the legend shows the newest step that has a value', () => {
  assert.equal(
    latestIndex([
      [1, 2, 3],
      [0.1, 0.3, null],
      [null, 0.5, null],
    ]),
    1,
  );
  assert.equal(
    latestIndex([
      [1, 2, 3],
      [null, null, 4],
    ]),
    2,
  );
  assert.equal(latestIndex([[]]), 0);
});

test("the side bar's live status: the newest value of each series of the run", () => {
  const latest = latestMetrics(withMetrics(), 'a');
  assert.deepEqual(latest.slice(0, 2), [
    { label: 'Reward and accuracy: reward', value: 0.3 },
    { label: 'Reward and accuracy: acc turn 1', value: 0.4 },
  ]);
  assert.deepEqual(latestMetrics(emptyMonitor(), 'a'), []);
});
