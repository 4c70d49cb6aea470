// The Repair All queue in SQLite: a job's items keep their order and outcomes, a job a restart interrupted (or
// one holding repairs nobody reviewed) is listed again, and bad updates are refused.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../backend/store/db';
import { RepairStore } from '../../backend/store/repairs';

const edit = { range: { start: { line: 2, character: 70 }, end: { line: 4, character: 9 } }, newText: ' by\n  simp' };

test('a job survives a restart: pending items resume, verified repairs stay pending proposals', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-repairs-'));
  try {
    const path = join(dir, 'kimina.db');
    let db = openDb(path);
    let store = new RepairStore(db);
    const job = store.create('Ratios.lean', [
      { uri: 'file:///R.lean', declaration: 'ratio_one', line: 2, error: 'line 3: unsolved goals' },
      { uri: 'file:///R.lean', declaration: 'ratio_two', line: 6, error: 'line 7: unsolved goals' },
    ]);
    assert.deepEqual(
      job.items.map((i) => [i.declaration, i.status]),
      [
        ['ratio_one', 'pending'],
        ['ratio_two', 'pending'],
      ],
    );
    store.update(job.id, job.items[0].id, 'repaired', { reason: 'verified in place', edit, replaced: ' by\n  bad' });
    db.close();

    // "restart": a new connection to the same file
    db = openDb(path);
    store = new RepairStore(db);
    const [again] = store.unfinished();
    assert.equal(again.id, job.id);
    assert.equal(again.state, 'running');
    assert.deepEqual(again.items[0].edit, edit);
    assert.equal(again.items[0].replaced, ' by\n  bad');
    assert.equal(again.items[1].status, 'pending');
    store.update(job.id, again.items[1].id, 'broken', { reason: 'Lean rejects the answer: unsolved goals' });
    store.finish(job.id, 'done');
    // done, but its repair is still waiting for review
    assert.equal(store.unfinished().length, 1);
    store.update(job.id, again.items[0].id, 'accepted');
    assert.equal(store.unfinished().length, 0);
    const done = store.job(job.id)!;
    assert.deepEqual(
      done.items.map((i) => [i.status, i.reason]),
      [
        ['accepted', 'verified in place'],
        ['broken', 'Lean rejects the answer: unsolved goals'],
      ],
    );
    assert.throws(() => store.update(job.id, 9999, 'accepted'), /no repair item 9999/);
    assert.throws(() => store.update(job.id, again.items[0].id, 'fixed' as never), /unknown repair status 'fixed'/);
    assert.throws(() => store.finish('nope', 'done'), /no repair job nope/);
    db.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
