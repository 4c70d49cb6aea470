// Paths that stay inside: a project's `lean-toolchain` cannot point `kimina lean setup` (the extension's
// "Set Up Lean" button) at a folder outside KIMINA_HOME/repl, neither by a traversal tag nor by a symlink
// planted where the REPL folder goes. git and lake are TEST DOUBLES (shell scripts that create what the real
// tools would); the toolchain names are the real formats of Lean's releases, nightlies and PR builds.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseToolchain, releaseTag } from '../../backend/lean/toolchain';
import { makeReplFixture, type ReplFixture } from '../lean/replFixture';
import { ensurePythonEnv } from '../../backend/training/pythonEnv';
import { assertInside, isInside, OutsideParentError, removeInside } from '../../backend/store/safePaths';

const root = join(__dirname, '..', '..');

// TEST DOUBLE of lake (it makes the repl binary where lake would); git is real, on the repository rebuilt
// from the listing of the real repl (test/lean/replFixture.ts).
function fakeTools(dir: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  const lake =
    '#!/bin/sh\n[ "$1" = "--version" ] && exit 0\nmkdir -p .lake/build/bin && printf "#!/bin/sh\\n" > .lake/build/bin/repl && chmod +x .lake/build/bin/repl\n';
  writeFileSync(join(bin, 'lake'), lake);
  chmodSync(join(bin, 'lake'), 0o755);
  return bin;
}

let fixture: ReplFixture | undefined;

function setup(dir: string, toolchain: string) {
  const project = join(dir, 'proj');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'lean-toolchain'), toolchain);
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'backend/cli.ts', 'lean', 'setup', '--project', project], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      PATH: `${fakeTools(dir)}:${process.env.PATH}`,
      KIMINA_HOME: join(dir, 'home'),
      KIMINA_REPL_COMMAND: '',
      KIMINA_REPL_GIT_URL: (fixture ??= makeReplFixture()).dir,
      KIMINA_REPL_FLUSH_FIX: fixture.flushFix,
    },
  });
  return { code: r.status, stderr: r.stderr, stdout: r.stdout };
}

/** A folder the attack would delete, with a file in it. */
function victim(dir: string): string {
  const v = join(dir, 'victim');
  mkdirSync(v, { recursive: true });
  writeFileSync(join(v, 'precious.txt'), 'keep me');
  return v;
}

test('a traversal tag in lean-toolchain is refused and the folder it points at survives', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-sec-paths-'));
  try {
    const v = victim(dir);
    // home/repl/v4.9.0/../../../victim is dir/victim
    const r = setup(dir, 'leanprover/lean4:v4.9.0/../../../victim\n');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /not a Lean toolchain name/);
    assert.equal(readFileSync(join(v, 'precious.txt'), 'utf8'), 'keep me');
    for (const evil of [
      'leanprover/lean4:v4.9.0/../../..',
      'v4.9.0/../x',
      'leanprover/lean4:../../victim',
      '/etc:v4.9.0',
      'leanprover/lean4:v4.9.0\nrm -rf /',
    ]) {
      assert.equal(releaseTag(evil), undefined, evil);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a symlink planted at KIMINA_HOME/repl/<tag> (or at repl itself) is not followed by the delete', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-sec-paths-'));
  try {
    const v = victim(dir);
    mkdirSync(join(dir, 'home', 'repl'), { recursive: true });
    symlinkSync(v, join(dir, 'home', 'repl', 'v4.9.0'));
    const r = setup(dir, 'leanprover/lean4:v4.9.0\n');
    assert.equal(r.code, 1, r.stderr);
    assert.match(r.stderr, /refusing to touch .*v4\.9\.0: it is not inside/);
    assert.equal(readFileSync(join(v, 'precious.txt'), 'utf8'), 'keep me');

    rmSync(join(dir, 'home', 'repl'), { recursive: true });
    symlinkSync(v, join(dir, 'home', 'repl'));
    const viaParent = setup(dir, 'leanprover/lean4:v4.9.0\n');
    assert.equal(viaParent.code, 1, viaParent.stderr);
    assert.match(viaParent.stderr, /refusing to touch/);
    assert.equal(readFileSync(join(v, 'precious.txt'), 'utf8'), 'keep me');
    assert.ok(!existsSync(join(v, 'v4.9.0')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a nightly or PR toolchain gets a clear answer instead of a clone; a release candidate is set up', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-sec-paths-'));
  try {
    const nightly = setup(dir, 'leanprover/lean4:nightly-2025-01-01\n');
    assert.equal(nightly.code, 1);
    assert.match(nightly.stderr, /not a Lean release.*KIMINA_REPL_PATH/);
    const rc = setup(dir, 'leanprover/lean4:v4.33.0-rc2\n');
    assert.equal(rc.code, 0, rc.stderr);
    assert.equal(rc.stdout.trim(), join(dir, 'home', 'repl', 'v4.33.0-rc2', '.lake', 'build', 'bin', 'repl'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('toolchain names in their real formats', () => {
  assert.deepEqual(parseToolchain('leanprover/lean4:v4.9.0\n'), { kind: 'release', tag: 'v4.9.0' });
  assert.deepEqual(parseToolchain('leanprover/lean4:v4.33.0-rc2'), { kind: 'release', tag: 'v4.33.0-rc2' });
  assert.deepEqual(parseToolchain('leanprover/lean4:v4.0.0-m6'), { kind: 'release', tag: 'v4.0.0-m6' });
  assert.deepEqual(parseToolchain('v4.24.0'), { kind: 'release', tag: 'v4.24.0' });
  assert.deepEqual(parseToolchain('leanprover/lean4:nightly-2025-01-01'), {
    kind: 'nightly',
    name: 'nightly-2025-01-01',
  });
  assert.deepEqual(parseToolchain('leanprover/lean4-nightly:nightly-2024-04-09-rev1'), {
    kind: 'nightly',
    name: 'nightly-2024-04-09-rev1',
  });
  assert.deepEqual(parseToolchain('leanprover/lean4-pr-releases:pr-release-4567'), {
    kind: 'pr-release',
    name: 'pr-release-4567',
  });
  assert.deepEqual(parseToolchain('stable'), { kind: 'channel', name: 'stable' });
  assert.equal(parseToolchain('leanprover/lean4-nightly:v4.9.0').kind, 'invalid');
  assert.equal(parseToolchain('evil/lean4:v4.9.0').kind, 'invalid');
  assert.equal(parseToolchain('leanprover/lean4:v4.9.0.1').kind, 'invalid');
});

test('isInside resolves symlinks on both sides; removeInside refuses the parent itself and anything outside', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-sec-paths-'));
  try {
    const parent = join(dir, 'parent');
    mkdirSync(join(parent, 'child'), { recursive: true });
    const v = victim(dir);
    symlinkSync(v, join(parent, 'link'));
    assert.equal(isInside(parent, join(parent, 'child')), true);
    assert.equal(isInside(parent, join(parent, 'not-yet', 'deeper')), true);
    assert.equal(isInside(parent, join(parent, 'link')), false);
    assert.equal(isInside(parent, join(parent, 'link', 'precious.txt')), false);
    assert.equal(isInside(parent, join(parent, '..', 'victim')), false);
    assert.equal(isInside(parent, parent), false);
    assert.throws(() => removeInside(parent, join(parent, 'link')), OutsideParentError);
    assert.throws(() => removeInside(parent, parent), OutsideParentError);
    assert.ok(existsSync(join(v, 'precious.txt')));
    // a symlinked parent is fine when the child really lies in its target
    symlinkSync(parent, join(dir, 'alias'));
    assert.equal(assertInside(join(dir, 'alias'), join(dir, 'alias', 'child')), join(dir, 'alias', 'child'));
    removeInside(join(dir, 'alias'), join(dir, 'alias', 'child'));
    assert.ok(!existsSync(join(parent, 'child')));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a trainer environment folder that is not a Python environment is never deleted to make room', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-sec-paths-'));
  try {
    const v = victim(dir);
    const requirements = join(dir, 'requirements.txt');
    writeFileSync(requirements, '');
    await assert.rejects(
      ensurePythonEnv({ env: process.env, dir: v, requirements, onProgress: () => {} }),
      /refusing to replace .*victim: it is not a Python environment/,
    );
    assert.equal(readFileSync(join(v, 'precious.txt'), 'utf8'), 'keep me');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
