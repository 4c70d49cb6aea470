import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../backend/store/db';
import { AttemptStore } from '../../backend/store/attempts';
import type { Attempt } from '../../backend/protocol';

const run = (id: string) => ({
  id,
  theorem: 't',
  statement: 'theorem t : True := by',
  informal: '',
  engine: 'scripted',
  model: 'm',
  settings: { samples: 1 },
});
const attempt: Attempt = {
  sample: 0,
  turn: 1,
  response: '<think>x</think>y',
  think: 'x',
  code: 'theorem t : True := by\n  trivial',
  format: { ok: false, error: 'NO_VALID_LEAN4_CODE_BLOCK', message: 'Could not find a valid lean4 code block.' },
  verdict: { status: 'valid', reason: 'ok', messages: [], sorries: [], time: 0.5 },
  tokens: 9,
  finishReason: 'stop',
  timings: { generateMs: 10, verifyMs: 20 },
  feedback: null,
  fixSkipped: 'valid',
};

test('runs and attempts survive reopening the database file; migrations run once', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-store-'));
  try {
    const path = join(dir, 'k.db');
    const first = openDb(path);
    const store = new AttemptStore(first);
    store.startRun(run('a'));
    store.recordAttempt('a', [{ role: 'user', content: 'p' }], attempt);
    store.finishRun('a', 'proved', attempt.code);
    store.startRun(run('b'));
    store.finishRun('b', 'error', null, 'engine failed');
    first.close();

    const again = new AttemptStore(openDb(path));
    assert.equal(again.getRun('a')?.status, 'proved');
    assert.equal(again.getRun('b')?.error, 'engine failed');
    assert.ok(again.getRun('a')?.finishedAt);
    assert.deepEqual(again.getRun('a')?.settings, { samples: 1 });
    const [stored] = again.attemptsOf('a');
    assert.deepEqual(stored.messages, [{ role: 'user', content: 'p' }]);
    assert.equal(stored.format.error, 'NO_VALID_LEAN4_CODE_BLOCK');
    assert.deepEqual(stored.verdict, attempt.verdict);
    assert.deepEqual(stored.timings, attempt.timings);
    assert.equal(stored.fixSkipped, 'valid');
    assert.deepEqual(
      again.recentRuns().map((r) => r.id),
      ['b', 'a'],
    );
    assert.equal(again.getRun('zzz'), null);
    assert.throws(() => again.recordAttempt('zzz', [], attempt), /FOREIGN KEY/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
