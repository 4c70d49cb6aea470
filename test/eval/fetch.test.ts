// `kimina eval fetch minif2f` over real git and real HTTP, from a local stand-in upstream built
// from the shared miniF2F copy (no internet in tests).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, createReadStream, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { checkMiniF2F, describeCheck, fetchMiniF2F, readVersions } from '../../backend/eval/fetch';
import { minif2fDir, tempDir } from './helpers';

const manifest = JSON.stringify({
  version: '1.1.0',
  packagesDir: '.lake/packages',
  packages: [
    {
      url: 'https://github.com/leanprover-community/mathlib4',
      type: 'git',
      name: 'mathlib',
      rev: '0123456789abcdef0123456789abcdef01234567',
      inputRev: 'v4.24.0',
    },
  ],
});

/** A copy of the shared miniF2F with the upstream's lakefile and a manifest, as a git repository. */
function upstream(dir: string): string {
  const repo = join(dir, 'miniF2F-lean4-main');
  cpSync(minif2fDir(), repo, { recursive: true });
  writeFileSync(
    join(repo, 'lakefile.lean'),
    'import Lake\nopen Lake DSL\n\npackage «miniF2F» where\n\nrequire mathlib from git "https://github.com/leanprover-community/mathlib4" @ "v4.24.0"\n\n@[default_target]\nlean_lib «MiniF2F»\n',
  );
  writeFileSync(join(repo, 'lake-manifest.json'), manifest);
  const git = (...args: string[]) => {
    const r = spawnSync(
      'git',
      ['-c', 'user.name=test', '-c', 'user.email=test@example.invalid', '-c', 'init.defaultBranch=main', ...args],
      { cwd: repo, encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
  };
  git('init', '--quiet');
  git('add', '.');
  git('commit', '--quiet', '-m', 'stand-in upstream');
  return repo;
}

test('fetch by git clone, then check counts, statements and versions', async (t) => {
  const dir = tempDir(t);
  const repo = upstream(dir);
  const lines: string[] = [];
  const check = await fetchMiniF2F({
    env: process.env,
    dest: join(dir, 'dest'),
    method: 'git',
    url: `file://${repo}`,
    log: (l) => lines.push(l),
  });
  assert.deepEqual(check.counts, { test: 244, valid: 244 });
  assert.deepEqual(check.problems, []);
  assert.equal(check.versions.leanToolchain, 'leanprover/lean4:v4.24.0');
  assert.deepEqual(check.versions.mathlib, {
    rev: '0123456789abcdef0123456789abcdef01234567',
    inputRev: 'v4.24.0',
    url: 'https://github.com/leanprover-community/mathlib4',
  });
  assert.match(lines[0], /^git clone file:/);
  const text = describeCheck(check).join('\n');
  assert.match(text, /244 test, 244 valid/);
  assert.match(text, /Lean toolchain: leanprover\/lean4:v4\.24\.0/);
  assert.match(text, /Mathlib: v4\.24\.0, rev 0123456/);

  // A second fetch into the same folder only checks it.
  const again: string[] = [];
  await fetchMiniF2F({
    env: process.env,
    dest: join(dir, 'dest'),
    method: 'git',
    url: 'file:///nonexistent',
    log: (l) => again.push(l),
  });
  assert.match(again[0], /exists; checking it/);
});

test('fetch an archive over HTTP and unpack its single top folder', async (t) => {
  const dir = tempDir(t);
  upstream(dir);
  const tarball = join(dir, 'main.tar.gz');
  assert.equal(spawnSync('tar', ['-czf', tarball, '-C', dir, 'miniF2F-lean4-main']).status, 0);
  const server = createServer((req, res) => {
    if (req.url !== '/archive/main.tar.gz') {
      res.writeHead(404).end('no');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/gzip' });
    createReadStream(tarball).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.after(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const check = await fetchMiniF2F({
    env: process.env,
    dest: join(dir, 'unpacked'),
    method: 'archive',
    url: `${base}/archive/main.tar.gz`,
  });
  assert.deepEqual(check.counts, { test: 244, valid: 244 });
  assert.deepEqual(check.problems, []);
  assert.equal(check.versions.mathlib?.inputRev, 'v4.24.0');
  await assert.rejects(
    fetchMiniF2F({ env: process.env, dest: join(dir, 'missing'), method: 'archive', url: `${base}/nope.tar.gz` }),
    /download of .* failed/,
  );
});

test('the check reports bad files, wrong counts and missing version files', (t) => {
  const dir = tempDir(t);
  const root = join(dir, 'copy');
  cpSync(minif2fDir(), root, { recursive: true });
  writeFileSync(join(root, 'MiniF2F', 'Test', 'not_a_theorem.lean'), 'import Mathlib\n\ndef not_a_theorem : ℕ := 3\n');
  writeFileSync(
    join(root, 'MiniF2F', 'Valid', 'renamed_file.lean'),
    'import Mathlib\n\ntheorem other_name : 1 = 1 := by sorry\n',
  );
  const check = checkMiniF2F(root);
  assert.deepEqual(check.counts, { test: 244, valid: 245 });
  assert.ok(
    check.problems.some((p) => /valid: 245 files, expected 244/.test(p)),
    check.problems.join('\n'),
  );
  assert.ok(check.problems.some((p) => /not_a_theorem\.lean: no theorem found/.test(p)));
  assert.ok(
    check.problems.some((p) => /renamed_file\.lean: theorem 'other_name' does not match the file name/.test(p)),
  );
  assert.equal(readVersions(root).mathlib, null);
  assert.match(describeCheck(check).join('\n'), /Mathlib: unknown/);
});
