// The one registry of running proofs and the lazy start both faces use (backend/prover/running.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { LazyStart, RunningProofs } from '../../backend/prover/running';

test('RunningProofs: a running id is refused, cancel stops it, end frees it', () => {
  const proofs = new RunningProofs();
  const a = proofs.begin('a');
  assert.ok(a);
  assert.equal(proofs.begin('a'), null, 'a second proof with a running id');
  assert.equal(proofs.has('a'), true);
  assert.equal(proofs.size, 1);
  assert.equal(proofs.cancel('b'), false);
  assert.equal(proofs.cancel('a'), true);
  assert.equal(a.signal.aborted, true);
  proofs.end('a', a);
  assert.equal(proofs.has('a'), false);
  const again = proofs.begin('a');
  const other = proofs.begin('c');
  proofs.end('a', a); // a stale end does not free the new proof with the same id
  assert.equal(proofs.has('a'), true);
  proofs.cancelAll();
  assert.deepEqual([again?.signal.aborted, other?.signal.aborted], [true, true]);
});

test('LazyStart: one start, a failed start forgotten, reset hands back what was started', async () => {
  let starts = 0;
  let fail = true;
  const lazy = new LazyStart(async () => {
    starts++;
    if (fail) throw new Error('no model yet');
    return starts;
  });
  assert.equal(lazy.current, null);
  await assert.rejects(lazy.get(), /no model yet/);
  assert.equal(lazy.current, null, 'a failed start is forgotten');
  fail = false;
  const [a, b] = await Promise.all([lazy.get(), lazy.get()]);
  assert.deepEqual([a, b, starts], [2, 2, 2], 'started once for both');
  assert.equal(await lazy.reset(), 2);
  assert.equal(await lazy.get(), 3);
});
