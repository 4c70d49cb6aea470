// The GGUF write runs in a worker thread (ggufConvert.ts, ggufWorker.ts): the event loop keeps turning during a
// real write of a test checkpoint (the tiny one, made larger so that its write takes long enough to watch), the
// file is the same bytes the write on the calling thread gives, an abort stops it and leaves no partial file, and
// a folder the GGUF cannot be written into is still LlamaUnavailable. No doubles.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { tinyCheckpointFiles } from '../tinyCheckpoint';
import { ensureModelGguf, ggufPathOf } from '../../../backend/model/llama/ggufConvert';
import { LlamaUnavailable } from '../../../backend/model/llama/runtime';

function checkpointFolder(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-gguf-thread-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  // About 13 M parameters (52 MB of float32): a q8_0 write of a few hundred milliseconds.
  const larger = { hiddenSize: 512, layers: 4, heads: 8, kvHeads: 4, headDim: 64, intermediateSize: 1536 };
  for (const [name, content] of Object.entries(tinyCheckpointFiles(5, larger))) writeFileSync(join(dir, name), content);
  return dir;
}

/** Runs `write` while a 5 ms timer ticks: how long it took and the longest the event loop went without a tick. */
async function watched(write: () => Promise<unknown>): Promise<{ ms: number; longestGap: number }> {
  let last = performance.now();
  let longestGap = 0;
  const tick = () => {
    const now = performance.now();
    longestGap = Math.max(longestGap, now - last);
    last = now;
  };
  const timer = setInterval(tick, 5);
  const t0 = performance.now();
  try {
    await write();
  } finally {
    clearInterval(timer);
    tick(); // the stretch since the last tick counts too
  }
  return { ms: performance.now() - t0, longestGap };
}

test('the event loop keeps turning while the GGUF is written in a worker; the same bytes as on the calling thread', async () => {
  const dir = checkpointFolder();
  const path = ggufPathOf(dir, 'q8_0');
  // On the calling thread (the reference, and proof that this watch sees a blocked loop): one long gap.
  const inThread = await watched(() => ensureModelGguf(dir, 'q8_0', () => undefined, { inThread: true }));
  assert.ok(
    inThread.longestGap >= 0.5 * inThread.ms,
    `on the calling thread the loop stops for the write: ${inThread.longestGap.toFixed(0)} of ${inThread.ms.toFixed(0)} ms`,
  );
  const reference = readFileSync(path);
  rmSync(path);
  const lines: string[] = [];
  const inWorker = await watched(() => ensureModelGguf(dir, 'q8_0', (l) => lines.push(l)));
  assert.ok(
    inWorker.longestGap < 0.25 * inThread.ms,
    `the loop's longest gap during the worker's write: ${inWorker.longestGap.toFixed(0)} ms (the write itself: ${inThread.ms.toFixed(0)} ms on the calling thread)`,
  );
  assert.ok(
    lines.some((l) => /^llama: the GGUF is written in a worker thread/.test(l)),
    lines.join('\n'),
  );
  assert.ok(
    lines.some((l) => /^llama: GGUF written in /.test(l)),
    "the worker's log lines reach the caller's log",
  );
  assert.ok(readFileSync(path).equals(reference), 'the same bytes');
  assert.deepEqual(readdirSync(join(dir, 'gguf')), ['model.q8_0.gguf'], 'no partial file left');
});

test('an abort stops the worker: the promise rejects, no GGUF and no partial file are left', async () => {
  const dir = checkpointFolder();
  const controller = new AbortController();
  const writing = ensureModelGguf(dir, 'q8_0', () => undefined, { signal: controller.signal });
  setTimeout(() => controller.abort(), 20);
  await assert.rejects(writing, /cancelled/);
  await new Promise((r) => setTimeout(r, 200)); // the worker's termination and the partial's removal
  assert.equal(existsSync(ggufPathOf(dir, 'q8_0')), false);
  assert.deepEqual(existsSync(join(dir, 'gguf')) ? readdirSync(join(dir, 'gguf')) : [], []);
});

test('a GGUF folder that cannot be written: LlamaUnavailable through the worker', async () => {
  const dir = checkpointFolder();
  writeFileSync(join(dir, 'gguf'), 'a file where the cache folder would go'); // fails for root too, unlike a chmod
  await assert.rejects(ensureModelGguf(dir, 'q8_0'), (e: Error) => {
    assert.ok(e instanceof LlamaUnavailable, `${e.constructor.name}: ${e.message}`);
    assert.match(e.message, /cannot be written beside the model/);
    return true;
  });
});
