// Issue 29, finding 5, against a live `kimina serve` (the real CLI over the stand-in REPL, a TEST DOUBLE for
// Lean whose `stand_in_flood_<MB>` fault answers with one line that long): a 600 MB answer is refused with a
// reason naming KIMINA_REPL_ANSWER_MB, the server keeps answering, and the next check runs on a new REPL.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { type LiveServe, startServe } from './liveServe';

let s: LiveServe;
after(async () => s?.stop());

test('kimina serve outlives a 600 MB REPL answer and says why it refused it', { timeout: 120_000 }, async () => {
  s = await startServe();
  const flood = await s.post('/api/check', {
    snippets: [{ id: 'flood', code: 'theorem big : True := by\n  trivial -- stand_in_flood_600' }],
  });
  assert.equal(flood.status, 200, JSON.stringify(flood.json).slice(0, 300));
  const result = flood.json.results[0];
  assert.match(JSON.stringify(result), /passed 64 MiB \(KIMINA_REPL_ANSWER_MB\)/);
  console.log(`600 MB answer refused in ${flood.ms} ms`);
  await s.health();
  const next = await s.post('/api/check', { snippets: [{ id: 'next', code: 'theorem small : True := trivial' }] });
  assert.equal(next.status, 200);
  assert.equal(next.json.results[0].error ?? null, null, JSON.stringify(next.json.results[0]));
  assert.equal(s.child.exitCode, null, 'the server is still running');
});
