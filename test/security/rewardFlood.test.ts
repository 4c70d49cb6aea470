// Issue 20: a greedy reward client squeezed small checks out (13/15 served). Against a live `kimina serve` with
// the default queue settings (KIMINA_MAX_QUEUE 256, KIMINA_MAX_BATCH 128, the default share per client) over the
// stand-in REPL (TEST DOUBLE for Lean, each check answered after 50 ms), eight trainers flood /v1/training/reward
// with 43-answer requests (six of them fill the queue) under eight X-Kimina-Client names (one principal: they share one allowance) while an
// editor-like client sends 15 small /api/check batches: all 15 are served, and the flood's throughput is printed.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { slowAnswer, startServe, STATEMENT, type LiveServe } from './liveServe';

const item = { promptId: 'p', turn: 1, formalStatement: STATEMENT, previous: [], response: slowAnswer(50) };

let s: LiveServe;
before(async () => {
  s = await startServe({}); // default queue, batch and share settings (2 stand-in REPLs)
});
after(async () => {
  await s?.stop();
});

test('a reward flood under many client names: every small /api/check batch of another client is served (15/15)', async () => {
  let flooding = true;
  let scored = 0;
  let refused = 0;
  const t0 = performance.now();
  const trainers = Array.from({ length: 8 }, async (_, k) => {
    while (flooding) {
      const r = await s.post(
        '/v1/training/reward',
        { step: 0, purpose: 'train', items: Array.from({ length: 43 }, () => item) },
        { 'x-kimina-client': `trainer-${k}` },
      );
      if (r.status === 200) scored += r.json.results.length;
      else {
        assert.equal(r.status, 429, JSON.stringify(r.json).slice(0, 200));
        refused++;
        await new Promise((res) => setTimeout(res, 100));
      }
    }
  });
  await new Promise((r) => setTimeout(r, 500)); // the flood is in
  const statuses: number[] = [];
  for (let b = 0; b < 15; b++) {
    const r = await s.post(
      '/api/check',
      {
        snippets: [
          { id: `a${b}`, code: `theorem a${b} : True := by\n  trivial -- stand_in_slow_50` },
          { id: `b${b}`, code: `theorem b${b} : True := by\n  trivial -- stand_in_slow_50` },
        ],
      },
      { 'x-kimina-client': 'editor' },
    );
    statuses.push(r.status);
    if (r.status === 200)
      assert.deepEqual(
        r.json.results.map((x: { error: unknown }) => x.error ?? null),
        [null, null],
      );
  }
  const smallDone = performance.now() - t0;
  flooding = false;
  await Promise.all(trainers);
  const seconds = (performance.now() - t0) / 1000;
  console.log(
    `small /api/check batches served: ${statuses.filter((x) => x === 200).length}/15 (by ${Math.round(smallDone)} ms); ` +
      `reward flood: ${scored} answers scored in ${seconds.toFixed(1)} s (${(scored / seconds).toFixed(1)} answers/s), ${refused} requests refused with 429`,
  );
  assert.deepEqual(statuses, Array(15).fill(200));
  assert.ok(scored > 0, 'the flood is served too');
  assert.ok(refused > 0, 'eight trainers of one principal exceed its share');
});
