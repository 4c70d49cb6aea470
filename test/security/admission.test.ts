// The admission queue's rules (backend/lean/admission.ts) over a TEST DOUBLE verifier that records the order in
// which checks reach it and answers each when the test says so: round-robin over clients, whole-request
// admission (429 with Retry-After for a client over its share or a full server, 413 over the batch limit), and
// checks whose client went away are dropped without reaching the verifier.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Admission, BatchTooLarge, clientKey } from '../../backend/lean/admission';
import { QueueFull } from '../../backend/lean/errors';
import type { CheckOutcome } from '../../backend/lean/types';
import type { BatchCheckOptions, BatchVerifier } from '../../backend/lean/verifier';

/** Test double: holds every check until release() and logs the codes in arrival order. */
function heldVerifier() {
  const arrived: string[] = [];
  const waiting: (() => void)[] = [];
  const ok: CheckOutcome = {
    verdict: { status: 'valid', reason: '', messages: [], sorries: [], time: 0 } as unknown as CheckOutcome['verdict'],
  };
  const inner: BatchVerifier = {
    policy: { allowed: [], allowNativeDecide: false },
    stats: () => ({ mode: 'repl', inFlight: 0, maxInFlight: 100 }),
    check: async (code: string) => (await inner.checkBatch([code]))[0],
    checkBatch: (codes: string[], _o?: BatchCheckOptions) =>
      new Promise((resolve) => {
        arrived.push(...codes);
        waiting.push(() => resolve(codes.map(() => ok)));
      }),
    close: async () => {},
  };
  const releaseOne = async () => {
    waiting.shift()?.();
    await new Promise((r) => setImmediate(r));
  };
  return { inner, arrived, releaseOne };
}

test('checks reach the verifier round-robin over clients, whatever order they were queued in', async () => {
  const v = heldVerifier();
  const a = new Admission(v.inner, { capacity: 100, perClient: 50, maxBatch: 20, lanes: 1, defaultTimeoutS: 10 });
  const greedy = a.checkBatch(
    Array.from({ length: 10 }, (_, i) => `g${i}`),
    { client: 'greedy' },
  );
  const small1 = a.checkBatch(['s1'], { client: 'small-1' });
  const small2 = a.checkBatch(['s2'], { client: 'small-2' });
  for (let i = 0; i < 12; i++) await v.releaseOne();
  await Promise.all([greedy, small1, small2]);
  assert.deepEqual(v.arrived.slice(0, 4), ['g0', 's1', 's2', 'g1']);
});

test("a request is admitted whole or refused: 429 + Retry-After over the client's share or the server's queue, 413 over the batch limit", async () => {
  const v = heldVerifier();
  const a = new Admission(v.inner, { capacity: 10, perClient: 6, maxBatch: 6, lanes: 1, defaultTimeoutS: 10 });
  const first = a.checkBatch(['a', 'b', 'c', 'd'], { client: 'x' });
  await assert.rejects(
    a.checkBatch(['e', 'f', 'g'], { client: 'x' }),
    (err: unknown) => err instanceof QueueFull && err.retryAfterS >= 1,
  );
  const other = a.checkBatch(['h', 'i', 'j', 'k', 'l', 'm'], { client: 'y' });
  await assert.rejects(a.checkBatch(['n'], { client: 'z' }), QueueFull); // 10 admitted: the server is full
  await assert.rejects(a.checkBatch(['1', '2', '3', '4', '5', '6', '7'], { client: 'w' }), BatchTooLarge);
  assert.equal(a.stats().inFlight, 10);
  for (let i = 0; i < 10; i++) await v.releaseOne();
  await Promise.all([first, other]);
  assert.equal(a.stats().inFlight, 0);
  assert.equal(a.stats().clients, 0);
  assert.deepEqual((await Promise.all([a.checkBatch(['again'], { client: 'x' }), v.releaseOne()]))[0].length, 1);
});

test('checks of a client that went away are dropped before they reach the verifier', async () => {
  const v = heldVerifier();
  const a = new Admission(v.inner, { capacity: 10, perClient: 10, maxBatch: 10, lanes: 1, defaultTimeoutS: 10 });
  const gone = new AbortController();
  const running = a.checkBatch(['first'], { client: 'x' });
  const dropped = a.checkBatch(['later-1', 'later-2'], { client: 'y', signal: gone.signal });
  gone.abort();
  await v.releaseOne();
  const outcomes = await dropped;
  await running;
  assert.deepEqual(v.arrived, ['first']);
  assert.deepEqual(
    outcomes.map((o) => o.verdict.status),
    ['server_error', 'server_error'],
  );
  assert.equal(a.stats().inFlight, 0);
});

test('client keys: the route family plus a sane X-Kimina-Client name, else the remote address', () => {
  assert.equal(clientKey('check', 'my-tool', '127.0.0.1'), 'check:my-tool');
  assert.equal(clientKey('check', undefined, '127.0.0.1'), 'check:127.0.0.1');
  assert.equal(clientKey('reward', 'bad name with spaces', '::1'), 'reward:::1');
  assert.equal(clientKey('check', 'x'.repeat(65), '127.0.0.1'), 'check:127.0.0.1');
});
