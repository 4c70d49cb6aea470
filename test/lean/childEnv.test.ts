// Children get their environment from the base the root hands down (Settings.childEnv), not from process.env:
// a variable set only in that base reaches the REPL the verifier starts, and the Lean the fallback starts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildVerifier, verifierSettingsOf } from '../../backend/lean/buildVerifier';
import { buildLaunch } from '../../backend/lean/launch';
import { LeanFileRunner } from '../../backend/lean/leanFileRunner';
import { detectSandbox } from '../../backend/lean/sandbox';
import { readSettings } from '../../backend/settings/settings';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';

test('the base environment handed to the verifier reaches its REPLs; process.env is not where they read it', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-childenv-'));
  const log = join(dir, 'stand-in.log');
  assert.equal(process.env.STAND_IN_LOG, undefined, 'the test runner itself has no STAND_IN_LOG');
  // the stand-in REPL (test double) logs its commands to STAND_IN_LOG when its environment has one
  const settings = readSettings(
    {},
    { home: dir, leanProject: dir, replCommand: standInReplCommand(), childEnv: { ...process.env, STAND_IN_LOG: log } },
  );
  const built = buildVerifier(verifierSettingsOf(settings));
  try {
    const [r] = await built.verifier.checkBatch(['theorem t : True := trivial']);
    assert.equal(r.verdict.status, 'valid', r.verdict.reason);
  } finally {
    await built.verifier.close();
  }
  assert.ok(existsSync(log), 'the REPL saw STAND_IN_LOG, set only in the base environment');
  assert.match(readFileSync(log, 'utf8'), /\d+ /);
  assert.equal(process.env.STAND_IN_LOG, undefined);
});

test('the lean-file fallback starts Lean from its env, with its own HOME and TMPDIR on top', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-childenv-'));
  // TEST DOUBLE of `lean --json FILE`: one info message (Lean's JSON message shape) naming what it was given
  const fakeLean = [
    'const e = process.env;',
    'const data = [e.BASE_ONLY, e.HOME === e.TMPDIR && e.HOME !== "/nowhere" ? "scratch" : "no"].join(" ");',
    'console.log(JSON.stringify({ severity: "information", pos: { line: 1, column: 0 }, endPos: null, data }));',
  ].join('\n');
  const runner = new LeanFileRunner({
    projectDir: dir,
    leanCommand: [process.execPath, '-e', fakeLean, '--'],
    env: { ...process.env, BASE_ONLY: 'from-the-base', HOME: '/nowhere' },
    maxParallel: 1,
  });
  assert.equal(process.env.BASE_ONLY, undefined);
  const r = await runner.run({ header: '', body: 'theorem t : True := trivial', audit: [], timeoutMs: 10_000 });
  assert.equal(r.kind, 'ok');
  const messages = r.kind === 'ok' ? (r.response.messages ?? []) : [];
  assert.deepEqual(
    messages.map((m) => m.data),
    ['from-the-base scratch'],
  );
});

test("a REPL's launch: the base plus its scratch HOME/TMPDIR; the tools that watch and stop it get the base alone", () => {
  const base = { PATH: '/usr/bin', HOME: '/home/u', BASE_ONLY: '1' };
  const spec = buildLaunch(
    {
      command: 'repl',
      projectDir: '/p',
      env: base,
      memoryLimitMb: 0,
      sandbox: detectSandbox('none', base),
      os: 'linux',
    },
    '/scratch',
  );
  assert.deepEqual(spec.env, { ...base, HOME: '/scratch', TMPDIR: '/scratch' });
  assert.deepEqual(spec.toolEnv, base);
});
