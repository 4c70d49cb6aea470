// OS sandbox of REPL processes: detected, applied, and what it enforces (runs what this machine allows).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { detectSandbox } from '../../backend/lean/sandbox';
import { buildLaunch, lakeEnvironment } from '../../backend/lean/launch';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standInVerifier } from './standInVerifier';

test('buildLaunch wraps the REPL in the sandbox and the address-space cap, with a private HOME/TMPDIR', () => {
  const fake = {
    kind: 'unshare' as const,
    enforces: 'x',
    wrap: (argv: string[]) => ['unshare', '--net', '--', ...argv],
  };
  const spec = buildLaunch(
    { command: 'repl --flag', projectDir: '/proj', env: process.env, memoryLimitMb: 2048, sandbox: fake },
    '/tmp/scratch',
  );
  assert.deepEqual(spec.argv, [
    'sh',
    '-c',
    'ulimit -v 2097152 && exec "$@"',
    'kimina-repl',
    'unshare',
    '--net',
    '--',
    'sh',
    '-c',
    'repl --flag',
  ]);
  assert.equal(spec.cwd, '/proj');
  assert.equal(spec.env.HOME, '/tmp/scratch');
  assert.equal(spec.env.TMPDIR, '/tmp/scratch');
  const lake = buildLaunch(
    {
      replPath: '/r/repl',
      projectDir: '/proj',
      env: process.env,
      memoryLimitMb: 0,
      sandbox: detectSandbox('none', process.env),
    },
    '/s',
  );
  assert.deepEqual(lake.argv, ['lake', 'env', '/r/repl']);
  assert.throws(
    () =>
      buildLaunch(
        { projectDir: '/p', env: process.env, memoryLimitMb: 0, sandbox: detectSandbox('none', process.env) },
        '/s',
      ),
    /kimina lean setup/,
  );
});

test('lakeEnvironment captures what `lake env` sets, and the REPL then starts without lake', () => {
  // TEST DOUBLE of lake: `lake env CMD…` runs CMD with LEAN_PATH set, as the real one does
  const dir = mkdtempSync(join(tmpdir(), 'kimina-lake-'));
  const fakeLake = join(dir, 'lake');
  writeFileSync(fakeLake, '#!/bin/sh\nshift\nLEAN_PATH=/proj/.lake/build/lib/lean exec "$@"\n');
  chmodSync(fakeLake, 0o755);
  const env = lakeEnvironment(dir, process.env, fakeLake);
  assert.equal(env?.LEAN_PATH, '/proj/.lake/build/lib/lean');
  const spec = buildLaunch(
    {
      replPath: '/r/repl',
      lakeEnv: env,
      projectDir: dir,
      env: process.env,
      memoryLimitMb: 0,
      sandbox: detectSandbox('none', process.env),
    },
    '/s',
  );
  assert.deepEqual(spec.argv, ['/r/repl']);
  assert.equal(spec.env.LEAN_PATH, '/proj/.lake/build/lib/lean');
  assert.equal(lakeEnvironment(dir, process.env, join(dir, 'missing-lake')), undefined);
});

test('bwrap confines writes and network when present', () => {
  const box = detectSandbox('auto', process.env);
  if (box.kind === 'bwrap') {
    const argv = box.wrap(['repl'], '/tmp/s');
    assert.ok(argv.includes('--unshare-net') && argv.includes('--ro-bind'));
  }
  assert.ok(['bwrap', 'unshare', 'none'].includes(box.kind));
  assert.ok(box.enforces.length > 5);
});

test('a sandboxed REPL sees no network interfaces and gets a private HOME', async (t) => {
  const box = detectSandbox('auto', process.env);
  if (box.kind === 'none') {
    t.skip('no bwrap or unshare on this machine');
    return;
  }
  const s = standInVerifier({ maxRepls: 1, sandbox: true });
  try {
    const out = await s.verifier.check(
      'theorem t : True := trivial -- stand_in_net_probe stand_in_env_probe stand_in_write_probe',
    );
    const net = out.verdict.messages.find((m) => m.data.startsWith('interfaces:'));
    assert.ok(net, JSON.stringify(out.verdict));
    assert.deepEqual(
      net.data
        .replace('interfaces: ', '')
        .split(',')
        .filter((i) => i && i !== 'lo'),
      [],
    );
    const env = out.verdict.messages.find((m) => m.data.startsWith('cwd='));
    assert.match(env?.data ?? '', /home=\S*kimina-repl-\S+ tmp=\S*kimina-repl-/);
    const write = out.verdict.messages.find((m) => m.data.startsWith('write '))?.data;
    // bwrap confines writes to the scratch folder; unshare alone does not (as docs/verifier.md says)
    assert.equal(write, box.kind === 'bwrap' ? 'write cwd=EROFS home=ok' : 'write cwd=ok home=ok');
  } finally {
    await s.verifier.close();
  }
});
