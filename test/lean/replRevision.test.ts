// Which leanprover-community/repl revision `kimina lean setup` picks for every Lean release from v4.9.0 to
// the newest, and where it applies the flush fix: against a local repository rebuilt from the dated listing
// of the real repl (replFixture.ts), checked against the table computed with plain git on the real
// repository (scripts/repl-releases.sh -> test/lean/data/repl-releases.txt). Plus an opt-in run against a
// real clone of repl: KIMINA_TEST_REPL_CLONE=/path/to/repl.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FLUSH_FIX_COMMIT, lacksFlushFix, resolveReplRevision } from '../../backend/lean/replRevision';
import { compareReleaseTags } from '../../backend/lean/toolchain';
import { expectedReleases, makeReplFixture } from './replFixture';

function clone(url: string): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'kimina-repl-clone-')), 'repl');
  const r = spawnSync('git', ['clone', '--quiet', '--no-checkout', url, dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return dir;
}

test('the listing covers every Lean release and release candidate from v4.9.0 to the newest repl names', () => {
  const releases = expectedReleases().map((e) => e.release);
  assert.ok(releases.length >= 60, `only ${releases.length} releases listed`);
  assert.equal(new Set(releases).size, releases.length, 'each release once');
  assert.equal([...releases].sort(compareReleaseTags)[0], 'v4.9.0-rc1');
  for (const r of [
    'v4.9.0',
    'v4.10.0-rc1',
    'v4.11.0',
    'v4.12.0',
    'v4.13.0',
    'v4.20.0',
    'v4.20.1',
    'v4.23.0',
    'v4.33.0-rc2',
    // repl never named these: Mathlib's stable v4.29.1 and v4.32.2, and a release newer than the snapshot
    'v4.29.1',
    'v4.32.2',
    'v4.34.0-rc1',
  ])
    assert.ok(releases.includes(r), r);
});

test('every release resolves as the real repository says, and the flush fix is missing exactly where ancestry says', async () => {
  const fixture = makeReplFixture();
  const dir = clone(fixture.dir);
  const seen = { tag: 0, branch: 0, master: 0, history: 0, nearest: 0, apply: 0 };
  for (const e of expectedReleases()) {
    const got = await resolveReplRevision({ dir, env: process.env }, e.release);
    assert.equal(
      got.how,
      e.how === 'nearest' ? 'none' : e.how,
      `${e.release}: resolved by ${got.how}, the real repository by ${e.how}`,
    );
    seen[e.how as keyof typeof seen]++;
    if (got.how === 'none') {
      // No revision: the newest older release's master commit, the source built with the project's toolchain.
      assert.equal(got.nearest?.tag, e.ref, e.release);
      assert.equal(fixture.real.get(got.nearest!.commit), e.commit, e.release);
      continue;
    }
    if (got.how !== 'history') assert.equal(got.ref, e.ref, e.release);
    assert.equal(fixture.real.get(got.commit), e.commit, `${e.release}: commit`);
    const lacks = await lacksFlushFix({ dir, env: process.env }, got.commit, fixture.flushFix);
    assert.equal(lacks, e.flush === 'apply', `${e.release}: flush fix ${lacks ? 'missing' : 'present'} by ancestry`);
    if (lacks) seen.apply++;
  }
  // The cases issue 19 names: a master commit (v4.11.0), branches (v4.20.0, v4.20.1, v4.23.0), none (v4.12/13),
  // and the fix missing from v4.9.0 and before and from v4.10.0-rc1.
  assert.deepEqual(
    expectedReleases()
      .filter((e) => e.flush === 'apply')
      .map((e) => e.release)
      .sort(compareReleaseTags),
    ['v4.9.0-rc1', 'v4.9.0', 'v4.10.0-rc1'],
  );
  assert.ok(seen.master >= 3 && seen.branch >= 5 && seen.nearest === 6 && seen.history >= 1, JSON.stringify(seen));
  assert.deepEqual(
    expectedReleases()
      .filter((e) => e.how === 'nearest')
      .map((e) => `${e.release}<-${e.ref}`),
    [
      'v4.12.0<-v4.11.0',
      'v4.13.0<-v4.11.0',
      'v4.29.1<-v4.29.0',
      'v4.32.1<-v4.32.0',
      'v4.32.2<-v4.32.0',
      'v4.34.0-rc1<-v4.33.0-rc2',
    ],
  );
});

test('a clone without the fix commit cannot decide ancestry: a clear error, not a guess', async () => {
  const fixture = makeReplFixture();
  const dir = clone(fixture.dir);
  const head = spawnSync('git', ['rev-parse', 'origin/master'], { cwd: dir, encoding: 'utf8' }).stdout.trim();
  await assert.rejects(
    lacksFlushFix({ dir, env: process.env }, head, 'deadbeef'.repeat(5)),
    /flush fix.*cannot be decided/,
  );
});

test('a shallow clone (as `git clone --depth 1` makes) is deepened before ancestry is read', async () => {
  const fixture = makeReplFixture();
  const dir = join(mkdtempSync(join(tmpdir(), 'kimina-repl-shallow-')), 'repl');
  const r = spawnSync(
    'git',
    ['clone', '--quiet', '--depth', '1', '--branch', 'v4.10.0', `file://${fixture.dir}`, dir],
    {
      encoding: 'utf8',
    },
  );
  assert.equal(r.status, 0, r.stderr);
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).stdout.trim();
  assert.equal(fixture.real.get(head), '7201630ac21ba38f541bd90df03d2883f8c2c968');
  assert.equal(
    await lacksFlushFix({ dir, env: process.env }, head, fixture.flushFix),
    false,
    'v4.10.0 has the fix by ancestry',
  );
});

test(
  'opt-in: the table holds on a real clone of leanprover-community/repl',
  {
    skip: process.env.KIMINA_TEST_REPL_CLONE
      ? false
      : 'set KIMINA_TEST_REPL_CLONE to a clone of leanprover-community/repl to run this',
  },
  async () => {
    const dir = clone(process.env.KIMINA_TEST_REPL_CLONE!);
    for (const e of expectedReleases()) {
      const got = await resolveReplRevision({ dir, env: process.env }, e.release);
      if (got.how === 'none') {
        // A newer repl may have added a revision since the listing; a missing one is what the table says.
        if (e.how !== 'nearest') assert.fail(`${e.release}: the real clone has no revision, the table says ${e.how}`);
        assert.deepEqual([got.nearest?.tag, got.nearest?.commit], [e.ref, e.commit], `${e.release}: nearest source`);
        continue;
      }
      if (e.how === 'nearest') continue;
      // Same commit unless repl has since tagged a release the listing found elsewhere.
      if (got.how === e.how) assert.equal(got.commit, e.commit, `${e.release}: commit`);
      assert.equal(
        await lacksFlushFix({ dir, env: process.env }, got.commit, FLUSH_FIX_COMMIT),
        e.flush === 'apply',
        e.release,
      );
    }
  },
);
