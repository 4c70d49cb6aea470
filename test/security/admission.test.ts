// The admission queue's rules (backend/lean/admission.ts) over a TEST DOUBLE verifier that records the order in
// which checks reach it and answers each when the test says so: round-robin over clients, whole-request
// admission (429 with Retry-After for a client over its share or a full server, 413 over the batch limit), and
// checks whose client went away are dropped without reaching the verifier.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Admission, BatchTooLarge, clientKey, principalOf, reserveOf } from '../../backend/lean/admission';
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
  // capacity 10: large principals together leave a reserve of 3, usable by a principal holding at most 1
  const a = new Admission(v.inner, { capacity: 10, perClient: 6, maxBatch: 6, lanes: 1, defaultTimeoutS: 10 });
  assert.deepEqual(reserveOf({ capacity: 10, maxBatch: 6 }), { reserve: 3, smallShare: 1 });
  const first = a.checkBatch(['a', 'b', 'c', 'd'], { client: 'x' });
  await assert.rejects(
    a.checkBatch(['e', 'f', 'g'], { client: 'x' }),
    (err: unknown) => err instanceof QueueFull && err.retryAfterS >= 1,
  );
  await assert.rejects(a.checkBatch(['h', 'i', 'j', 'k'], { client: 'y' }), QueueFull); // would eat the reserve
  const other = a.checkBatch(['h', 'i', 'j'], { client: 'y' }); // 7: up to the reserve
  const smalls = ['z', 'w', 'v'].map((c) => a.checkBatch([c], { client: c })); // small ones use the reserve
  await assert.rejects(a.checkBatch(['n'], { client: 'u' }), QueueFull); // 10 admitted: the server is full
  await assert.rejects(a.checkBatch(['1', '2', '3', '4', '5', '6', '7'], { client: 'q' }), BatchTooLarge);
  assert.equal(a.stats().inFlight, 10);
  for (let i = 0; i < 10; i++) await v.releaseOne();
  await Promise.all([first, other, ...smalls]);
  assert.equal(a.stats().inFlight, 0);
  assert.equal(a.stats().clients, 0);
  assert.deepEqual((await Promise.all([a.checkBatch(['again'], { client: 'x' }), v.releaseOne()]))[0].length, 1);
});

test('many X-Kimina-Client names of one principal share one allowance and one round-robin turn', async () => {
  const v = heldVerifier();
  const a = new Admission(v.inner, { capacity: 100, perClient: 10, maxBatch: 5, lanes: 1, defaultTimeoutS: 10 });
  const greedy = clientKey('check', 'g0', '127.0.0.1');
  const admitted = [a.checkBatch(['g0a', 'g0b', 'g0c', 'g0d', 'g0e'], { client: greedy })];
  admitted.push(a.checkBatch(['g1a', 'g1b', 'g1c', 'g1d', 'g1e'], { client: clientKey('check', 'g1', '127.0.0.1') }));
  // a third name would make 15 for one principal: refused, however many names it tries
  for (let k = 2; k < 8; k++)
    await assert.rejects(a.checkBatch(['x'], { client: clientKey('check', `g${k}`, '127.0.0.1') }), QueueFull);
  // another principal (the reward family) gets every other turn, not one turn per greedy name
  admitted.push(a.checkBatch(['r1', 'r2', 'r3'], { client: clientKey('reward', 'trainer', '127.0.0.1') }));
  for (let i = 0; i < 13; i++) await v.releaseOne();
  await Promise.all(admitted);
  assert.deepEqual(v.arrived.slice(0, 6), ['g0a', 'r1', 'g1a', 'r2', 'g0b', 'r3']);
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

test('client keys: the principal (route family and remote address), a sane X-Kimina-Client name only as a label', () => {
  assert.equal(clientKey('check', 'my-tool', '127.0.0.1'), 'check:127.0.0.1|my-tool');
  assert.equal(principalOf(clientKey('check', 'my-tool', '127.0.0.1')), 'check:127.0.0.1');
  assert.equal(clientKey('check', undefined, '127.0.0.1'), 'check:127.0.0.1');
  assert.equal(clientKey('reward', 'bad name with spaces', '::1'), 'reward:::1');
  assert.equal(clientKey('check', 'x'.repeat(65), '127.0.0.1'), 'check:127.0.0.1');
  assert.equal(clientKey('check', 'a|b', '127.0.0.1'), 'check:127.0.0.1');
});
