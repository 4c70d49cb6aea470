// Fair sharing against a live `kimina serve` (stand-in REPL, a TEST DOUBLE for Lean, answering each check after
// 100 ms): a greedy client (five 64-answer reward requests and six 64-snippet /api/check batches at once) and four
// small /api/check clients together. The greedy one gets 429 + Retry-After for what exceeds its share, the small
// ones are all served while its admitted work is still running, and /health answers throughout. Also: item counts
// above the limit are refused (413), and `timeout` values beyond an hour or Node's timer range neither overflow
// nor run unbounded.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Admission } from '../../backend/lean/admission';
import { clampTimeoutS, MAX_CHECK_TIMEOUT_S } from '../../backend/lean/checkTimeout';
import { standInVerifier } from '../lean/standInVerifier';
import { slowAnswer, startServe, STATEMENT, type LiveServe } from './liveServe';

const rewardItem = (ms: number) => ({
  promptId: 'p',
  turn: 1,
  formalStatement: STATEMENT,
  previous: [],
  response: slowAnswer(ms),
});
const slowSnippet = (i: number, ms: number) => ({
  id: `s${i}`,
  code: `theorem t${i} : True := by\n  trivial -- stand_in_slow_${ms}`,
});

let s: LiveServe;
before(async () => {
  // 2 REPLs, queue 200 (capacity 202), at most 64 snippets per request, 101 admitted per client
  s = await startServe({ KIMINA_MAX_REPLS: '2', KIMINA_MAX_QUEUE: '200', KIMINA_MAX_BATCH: '64' });
});
after(async () => {
  await s?.stop();
});

test('a greedy client is held to its share (429 + Retry-After) and small clients are served meanwhile', async () => {
  const t0 = performance.now();
  const greedyReward = Array.from({ length: 5 }, (_, k) =>
    s.post('/v1/training/reward', {
      step: k,
      purpose: 'train',
      items: Array.from({ length: 64 }, () => rewardItem(100)),
    }),
  );
  const greedyCheck = Array.from({ length: 6 }, (_, k) =>
    s.post(
      '/api/check',
      { snippets: Array.from({ length: 64 }, (_, i) => slowSnippet(k * 100 + i, 100)) },
      { 'x-kimina-client': 'greedy' },
    ),
  );
  await new Promise((r) => setTimeout(r, 300)); // the greedy requests are in
  const small = Array.from({ length: 4 }, async (_, c) => {
    const times: number[] = [];
    for (let round = 0; round < 3; round++) {
      const r = await s.post(
        '/api/check',
        { snippets: [slowSnippet(c * 10 + round, 100), slowSnippet(c * 10 + round + 5, 100)] },
        { 'x-kimina-client': `small-${c}` },
      );
      assert.equal(r.status, 200, JSON.stringify(r.json));
      assert.deepEqual(
        r.json.results.map((x: { error: unknown }) => x.error ?? null),
        [null, null],
      );
      times.push(performance.now() - t0);
    }
    return times;
  });
  const healthMs: number[] = [];
  const probing = (async () => {
    for (let i = 0; i < 5; i++) {
      healthMs.push((await s.health()).ms);
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  const smallDone = Math.max(...(await Promise.all(small)).flat());
  await probing;
  const greedy = await Promise.all([...greedyReward, ...greedyCheck]);
  const allDone = performance.now() - t0;
  const refused = greedy.filter((r) => r.status === 429);
  const served = greedy.filter((r) => r.status === 200);
  console.log(
    `greedy: ${served.length} served, ${refused.length} refused (429); small clients done at ${Math.round(smallDone)} ms, greedy work at ${Math.round(allDone)} ms; /health max ${Math.round(Math.max(...healthMs))} ms`,
  );
  assert.ok(refused.length >= 5, `the greedy client's excess is refused: ${greedy.map((r) => r.status).join(',')}`);
  for (const r of refused) {
    assert.match(r.headers.get('retry-after') ?? '', /^\d+$/);
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
  }
  assert.ok(served.length >= 2, 'the greedy client still gets its share');
  for (const r of served) assert.equal(r.status, 200);
  // 12 small requests of 2 slow checks each finish long before the greedy client's ~128 admitted checks
  assert.ok(smallDone < allDone / 2, `small clients done at ${smallDone} ms, greedy at ${allDone} ms`);
  assert.ok(Math.max(...healthMs) < 1000, `/health answered within ${Math.max(...healthMs)} ms`);
  await s.health();
});

test('more answers or snippets than one request may carry are refused (413 before any work), and the server stays healthy', async () => {
  const huge = await s.post('/v1/training/reward', {
    step: 0,
    purpose: 'train',
    items: Array.from({ length: 20_000 }, () => rewardItem(0)),
  });
  assert.ok([400, 413, 422].includes(huge.status), `reward with 20,000 answers: ${huge.status}`); // the edge, or the body limit
  // within the edge's limits, beyond the service's: refused by the reward service and the admission queue themselves
  const reward = await s.post('/v1/training/reward', {
    step: 0,
    purpose: 'train',
    items: Array.from({ length: 200 }, () => rewardItem(0)),
  });
  assert.equal(reward.status, 413, `reward with 200 answers: ${JSON.stringify(reward.json).slice(0, 200)}`);
  assert.match(reward.json.detail, /at most 128 answers per reward request/);
  const check = await s.post('/api/check', { snippets: Array.from({ length: 65 }, (_, i) => slowSnippet(i, 0)) });
  assert.equal(check.status, 413, `check with 65 snippets: ${JSON.stringify(check.json).slice(0, 200)}`);
  assert.match(check.json.detail, /Too many snippets in one request: 65, the limit is 64/);
  await s.health();
});

test('a timeout of 1e6 s or beyond 2^31 ms neither fires at once nor runs unbounded', async () => {
  for (const timeout of [1e6, 2 ** 31 / 1000 + 10]) {
    const r = await s.post('/api/check', { snippets: [slowSnippet(1, 300)], timeout });
    if (r.status === 400 || r.status === 422) continue; // the edge refuses it before the verifier (the HTTP-edge schema)
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.equal(r.json.results[0].error ?? null, null, `timeout ${timeout}: ${JSON.stringify(r.json.results[0])}`);
  }
  await s.health();
});

test("inside the verifier too: a timeout past Node's timer range is capped at an hour, not an instant timeout", async () => {
  const standIn = standInVerifier({ maxRepls: 1 });
  try {
    const admission = new Admission(standIn.verifier, {
      capacity: 4,
      perClient: 4,
      maxBatch: 4,
      lanes: 1,
      defaultTimeoutS: 10,
    });
    for (const verifier of [standIn.verifier, admission]) {
      const outcome = await verifier.check('theorem t : True := by\n  trivial -- stand_in_slow_300', { timeout: 1e7 });
      assert.equal(outcome.verdict.status, 'valid', JSON.stringify(outcome.verdict));
    }
    assert.equal(clampTimeoutS(1e7, 60), MAX_CHECK_TIMEOUT_S);
    assert.equal(clampTimeoutS(Number.NaN, 60), 60);
    assert.equal(clampTimeoutS(-1, 60), 60);
    assert.equal(clampTimeoutS(undefined, 1e9), MAX_CHECK_TIMEOUT_S);
  } finally {
    await standIn.verifier.close();
  }
});
