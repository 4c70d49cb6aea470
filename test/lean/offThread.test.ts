// Large sources stay off the event loop and are read in linear time (issue 20: 4,000 declarations blocked the
// server 13.5 s in formalStatementOf, one regular expression per declaration × left-out name).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { findDeclarations, formalStatementOf } from '../../backend/lean/declarations';
import { OFF_THREAD_CHARS, inPlace, runStatementJob } from '../../backend/lean/offThread';
import { proveStatement } from '../../backend/prover/prove';
import { bigLeanFile, stallDuring } from '../../bench/stall';

/** The shape: 4,000 declarations, every seventh with a sorry and some users of those. */
function fourThousand(): string {
  const parts = ['import Mathlib\n'];
  for (let i = 0; i < 4000; i++) {
    parts.push(
      i % 7 === 0
        ? `lemma s${i} : True := by\n  sorry\n`
        : `theorem t${i} : s${i - (i % 7)} = s${i - (i % 7)} := rfl\n`,
    );
  }
  return parts.join('');
}

test('formal statement of the last of 4,000 declarations: linear, well under a second', () => {
  const code = fourThousand() + 'theorem target : 1 = 1 := by\n  sorry\n';
  const decls = findDeclarations(code);
  const t = performance.now();
  const formal = formalStatementOf(code, decls[decls.length - 1]);
  const ms = performance.now() - t;
  assert.ok(ms < 1500, `${ms.toFixed(0)} ms`);
  // every sorry lemma and every theorem using one is left out (all of them here), nothing else kept
  assert.equal(formal.leftOut.length, 4000);
  assert.equal(formal.text, 'import Mathlib\n\ntheorem target : 1 = 1 := by');
});

test('kept and left out as before: a user of a left-out lemma goes, an unrelated one stays', () => {
  const code = [
    'import Mathlib',
    'lemma holey : True := by',
    '  sorry',
    'theorem uses : True := Foo.holey.elim',
    'theorem fine : 1 = 1 := rfl',
    'theorem target : True := by',
    '  sorry',
  ].join('\n');
  const decls = findDeclarations(code);
  const formal = formalStatementOf(code, decls[decls.length - 1]);
  assert.deepEqual(formal.leftOut, ['holey', 'uses']);
  assert.equal(formal.text, 'import Mathlib\n\ntheorem fine : 1 = 1 := rfl\n\ntheorem target : True := by');
  const excluded = formalStatementOf(code, decls[decls.length - 1], { exclude: new Set(['fine']) });
  assert.deepEqual(excluded.leftOut, ['holey', 'uses', 'fine']);
});

test('a large request is prepared in a worker thread: the same statement as in place, the event loop keeps ticking', async () => {
  const code = bigLeanFile(300_000);
  assert.ok(code.length > OFF_THREAD_CHARS);
  let off;
  const { stallMs } = await stallDuring(async () => {
    off = await runStatementJob({ type: 'select', code, theorem: 'last_one' });
  });
  assert.deepEqual(off, inPlace({ type: 'select', code, theorem: 'last_one' }));
  // generous for a loaded CI machine; reading this source in place stalls for seconds (bench/stall.ts)
  assert.ok(stallMs < 400, `event loop stalled ${stallMs.toFixed(0)} ms`);
  await assert.rejects(proveStatement(code, 'no_such_theorem'), /no theorem named 'no_such_theorem'/);
});
