// The evaluation's counting gate: weighted holders, arrival order, aborts while waiting.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Gate } from '../../backend/eval/gate';

const settle = () => new Promise((r) => setImmediate(r));

test('holders take several units; waiters are served in arrival order, a big one is not overtaken', async () => {
  const gate = new Gate(4);
  const order: string[] = [];
  await gate.acquire(undefined, 3);
  const big = gate.acquire(undefined, 4).then(() => order.push('big'));
  const small = gate.acquire(undefined, 1).then(() => order.push('small'));
  await settle();
  assert.deepEqual(order, [], 'one unit is free, but the big waiter came first');
  gate.release(3);
  await settle();
  assert.deepEqual(order, ['big']);
  gate.release(4);
  await Promise.all([big, small]);
  assert.deepEqual(order, ['big', 'small']);
  gate.release(1);
});

test('an aborted waiter leaves the queue and lets the ones behind it in; bad weights are refused', async () => {
  const gate = new Gate(2);
  await gate.acquire(undefined, 1);
  const ctl = new AbortController();
  const blocked = gate.acquire(ctl.signal, 2);
  let smallIn = false;
  const small = gate.acquire(undefined, 1).then(() => {
    smallIn = true;
  });
  await settle();
  assert.equal(smallIn, false);
  ctl.abort(new Error('stop'));
  await assert.rejects(blocked, /stop/);
  await small;
  assert.equal(smallIn, true);
  await assert.rejects(gate.acquire(undefined, 3), /1 to 2 units/);
  await assert.rejects(gate.acquire(undefined, 0), /1 to 2 units/);
  assert.throws(() => new Gate(0), /positive integer/);
});
