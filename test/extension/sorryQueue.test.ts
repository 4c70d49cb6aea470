// "Prove All Sorries"'s queue (extension/sorryQueue.ts), which the proof runner owns and Cancel stops.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SorryQueue } from '../../extension/sorryQueue';

test('one queue at a time; stop cancels the running one; it ends when its work settles', async () => {
  const queue = new SorryQueue();
  assert.equal(queue.running, false);
  assert.equal(queue.stop(), false, 'nothing to stop');
  let stopped = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const first = queue.run(
    () => stopped++,
    () => gate,
  );
  assert.equal(queue.running, true);
  let secondRan = false;
  assert.equal(
    await queue.run(
      () => {},
      async () => {
        secondRan = true;
      },
    ),
    false,
  );
  assert.equal(secondRan, false, 'a second queue never starts while one runs');
  assert.equal(queue.stop(), true);
  assert.equal(stopped, 1);
  release();
  assert.equal(await first, true);
  assert.equal(queue.running, false);
  assert.equal(queue.stop(), false);
  assert.equal(stopped, 1);
});

test('a queue whose work throws still ends, so the next one can start', async () => {
  const queue = new SorryQueue();
  await assert.rejects(
    queue.run(
      () => {},
      async () => {
        throw new Error('the backend stopped');
      },
    ),
    /the backend stopped/,
  );
  assert.equal(queue.running, false);
  assert.equal(
    await queue.run(
      () => {},
      async () => {},
    ),
    true,
  );
});
