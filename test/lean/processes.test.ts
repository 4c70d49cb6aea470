// Launch, guard and stop per OS (backend/lean/processes.ts, launch.ts): the plans of linux, darwin and win32
// built on this Linux machine (the OS injected), and what this machine can run for real: the darwin launch
// and its `ps` memory guard against real procps `ps`, a process-group stop of a real tree, a host whose hard
// address-space limit is below the cap, and a runaway check stopped while it runs. Lean is the stand-in REPL
// (test double); macOS's sh is a double of one behaviour (below). Windows' cmd.exe, taskkill and PowerShell
// are not on this machine: their argv and the parsing of the PowerShell rows are checked, not run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildLaunch, findReplBinary } from '../../backend/lean/launch';
import { lakeFound } from '../../backend/lean/lake';
import { buildVerifier, memoryLine, verifierSettingsOf } from '../../backend/lean/buildVerifier';
import { readSettings } from '../../backend/settings/settings';
import { LeanFileRunner } from '../../backend/lean/leanFileRunner';
import { detectSandbox } from '../../backend/lean/sandbox';
import {
  exeName,
  hardAddressSpaceLimit,
  memoryCap,
  osOf,
  parseProcessTable,
  processTable,
  procTreeRss,
  rssSampler,
  spawnOptions,
  startProcess,
  stopPlan,
  stopTree,
  systemStop,
  treeBytes,
  pathList,
  commandLineProbe,
  processCommandLine,
  stopTreeOfPid,
} from '../../backend/lean/processes';
import { defaultAllowedAxioms } from '../../backend/lean/verdict';
import { standInReplCommand, standInReplScript } from '../../backend/demo/stand-in-repl/index';
import { standInVerifier } from './standInVerifier';
import { buildSync } from 'esbuild';

const none = detectSandbox('none', process.env);
const MiB = 1024 * 1024;
const unlimited = () => Infinity;

test('launch per OS: argv spawn, KIMINA_REPL_COMMAND through the platform shell, the cap only on Linux', () => {
  const base = { command: 'repl --x', projectDir: '/p', env: process.env, memoryLimitMb: 2048, sandbox: none };
  const linux = buildLaunch({ ...base, os: 'linux', cap: memoryCap(2048, 'linux', unlimited) }, '/s');
  assert.deepEqual(linux.argv, ['sh', '-c', 'ulimit -v 2097152 && exec "$@"', 'kimina-repl', 'sh', '-c', 'repl --x']);
  const mac = buildLaunch({ ...base, os: 'darwin' }, '/s');
  assert.deepEqual(mac.argv, ['sh', '-c', 'repl --x']);
  const win = buildLaunch({ ...base, os: 'win32' }, 'C:\\s');
  // as Node's own `shell: true` runs a command line on Windows (lib/child_process.js normalizeSpawnArguments)
  assert.deepEqual(win.argv, ['cmd.exe', '/d', '/s', '/c', '"repl --x"']);
  assert.equal(win.verbatim, true);
  assert.equal(win.env.TEMP, 'C:\\s');
  for (const spec of [linux, mac, win]) assert.equal(spec.guardBytes, 2048 * MiB);

  assert.deepEqual(spawnOptions(linux, 'pipe'), {
    cwd: '/p',
    env: linux.env,
    stdio: 'pipe',
    detached: true,
    windowsHide: true,
  });
  assert.equal(spawnOptions(mac, 'pipe').detached, true);
  const w = spawnOptions(win, 'pipe');
  assert.equal(w.detached, false);
  assert.equal(w.windowsHide, true);
  assert.equal((w as { windowsVerbatimArguments?: boolean }).windowsVerbatimArguments, true);

  const repl = { projectDir: '/p', env: process.env, memoryLimitMb: 0, sandbox: none };
  assert.deepEqual(buildLaunch({ ...repl, replPath: '/r/repl', os: 'linux' }, '/s').argv, ['lake', 'env', '/r/repl']);
  assert.deepEqual(buildLaunch({ ...repl, replPath: '/r/repl', os: 'darwin' }, '/s').argv, ['lake', 'env', '/r/repl']);
  assert.deepEqual(buildLaunch({ ...repl, replPath: 'C:\\r\\repl.exe', os: 'win32' }, '/s').argv, [
    'lake.exe',
    'env',
    'C:\\r\\repl.exe',
  ]);
  assert.deepEqual(buildLaunch({ ...repl, replPath: '/r/repl', lakeEnv: {}, os: 'darwin' }, '/s').argv, ['/r/repl']);
  assert.equal(exeName('lean', 'win32'), 'lean.exe');
  assert.equal(exeName('lean.exe', 'win32'), 'lean.exe');
  assert.equal(exeName('lean', 'darwin'), 'lean');
  assert.equal(osOf('freebsd'), 'linux');
  // bwrap and unshare are Linux's: elsewhere auto means none, and asking for one is refused clearly
  assert.equal(detectSandbox('auto', process.env, 'darwin').kind, 'none');
  assert.throws(() => detectSandbox('bwrap', process.env, 'win32'), /'bwrap' is Linux's; this is win32/);
});

test('search paths and command lines per OS: `;` on Windows, `:` elsewhere; /proc, ps, PowerShell', async () => {
  assert.equal(pathList(['C:\\t', undefined, 'D:\\x'], 'win32'), 'C:\\t;D:\\x');
  assert.equal(pathList(['/t', '', '/x'], 'darwin'), '/t:/x');
  assert.equal(pathList(['/t'], 'linux'), '/t');
  assert.equal(commandLineProbe(7, 'linux'), undefined);
  assert.deepEqual(commandLineProbe(7, 'darwin'), ['ps', '-ww', '-o', 'command=', '-p', '7']);
  assert.match(
    commandLineProbe(7, 'win32')!.at(-1)!,
    /^\(Get-CimInstance Win32_Process -Filter "ProcessId=7"\)\.CommandLine$/,
  );
  // for real: this process's own command line from /proc, and from procps ps (the darwin probe's argv)
  const mine = await processCommandLine(process.pid, 'linux', () => Promise.reject(new Error('not run')));
  assert.ok(mine?.includes(process.argv[1] ?? '\0'), mine);
  const viaPs = await processCommandLine(process.pid, 'darwin', processTable(process.env));
  assert.ok(viaPs?.includes(process.argv[1] ?? '\0'), viaPs);
  assert.equal(await processCommandLine(2 ** 22 + 1, 'darwin', processTable(process.env)), undefined);
});

test('the REPL binary is repl.exe and lake lake.exe on Windows, repl and lake elsewhere', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-exe-'));
  t.after(() => spawnSync('rm', ['-rf', dir]));
  const bin = join(dir, '.lake', 'packages', 'repl', '.lake', 'build', 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'repl.exe'), '');
  assert.equal(findReplBinary(dir, dir, undefined, 'win32'), join(bin, 'repl.exe'));
  assert.equal(findReplBinary(dir, dir, undefined, 'linux'), undefined);
  writeFileSync(join(bin, 'repl'), '');
  assert.equal(findReplBinary(dir, dir, undefined, 'darwin'), join(bin, 'repl'));
  // lake on the search path: lake.exe on Windows
  const path = mkdtempSync(join(tmpdir(), 'kimina-path-'));
  t.after(() => spawnSync('rm', ['-rf', path]));
  writeFileSync(join(path, 'lake.exe'), '');
  assert.equal(lakeFound([path], 'win32'), true);
  assert.equal(lakeFound([path], 'linux'), existsSync(join(homedir(), '.elan', 'bin', 'lake')));
});

test('the address-space cap: Linux when the hard limit allows it (a notice otherwise), never on macOS or Windows', () => {
  assert.deepEqual(memoryCap(16384, 'linux', unlimited), { kind: 'ulimit', kb: 16384 * 1024 });
  assert.deepEqual(
    memoryCap(16384, 'linux', () => 16384 * MiB),
    { kind: 'ulimit', kb: 16384 * 1024 },
  );
  const low = memoryCap(16384, 'linux', () => 8192 * MiB);
  assert.equal(low.kind, 'none');
  assert.match(
    low.kind === 'none' ? (low.notice ?? '') : '',
    /hard address-space limit \(8192 MiB.*below KIMINA_REPL_MEMORY_MB \(16384 MiB\)/,
  );
  const mac = memoryCap(16384, 'darwin', () => 0);
  assert.equal(mac.kind, 'none');
  assert.match(mac.kind === 'none' ? mac.why : '', /macOS refuses an address-space limit/);
  assert.equal(memoryCap(16384, 'win32').kind, 'none');
  assert.equal(memoryCap(0, 'linux', unlimited).kind, 'none');
  assert.match(
    memoryLine(16384, 'darwin'),
    /no address-space cap \(macOS refuses.*memory guard.*16384 MiB \(sampled every 1 s\)/,
  );
  assert.match(
    memoryLine(16384, 'linux', memoryCap(16384, 'linux', unlimited)),
    /address-space cap 16384 MiB per process/,
  );
  // /proc/self/limits as Linux writes it (this machine's own file, and a row with a finite hard limit)
  const mine = readFileSync('/proc/self/limits', 'utf8');
  assert.ok(hardAddressSpaceLimit(mine) !== undefined, mine);
  assert.equal(
    hardAddressSpaceLimit(
      'Limit  Soft Limit  Hard Limit  Units\nMax address space         4096000000           4096000000           bytes\n',
    ),
    4096000000,
  );
  assert.equal(hardAddressSpaceLimit('Max address space  unlimited  unlimited  bytes'), Infinity);
  assert.equal(hardAddressSpaceLimit('nothing here'), undefined);
});

test('a host whose hard address-space limit is below the cap: the check runs uncapped, with one notice', (t) => {
  // before: `ulimit -v 16777216` under a lower hard limit ends dash with "ulimit: error setting limit" (exit 2)
  const dir = mkdtempSync(join(tmpdir(), 'kimina-hardchild-'));
  t.after(() => spawnSync('rm', ['-rf', dir]));
  const bundle = join(dir, 'child.cjs');
  buildSync({
    entryPoints: [join(__dirname, 'hardLimitChild.ts')],
    bundle: true,
    platform: 'node',
    format: 'cjs',
    outfile: bundle,
    external: ['onnxruntime-node', 'libsql', 'better-sqlite3', '@resvg/resvg-js'],
    logLevel: 'error',
  });
  const r = spawnSync(
    'sh',
    ['-c', 'ulimit -v 4000000 && exec "$@"', 'hard', process.execPath, bundle, standInReplCommand()],
    {
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, NODE_OPTIONS: '' }, // no tsx loader in the child
    },
  );
  assert.equal(r.status, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { describe: string; status: string; reason: string };
  assert.equal(out.status, 'valid', out.reason);
  assert.match(
    out.describe,
    /hard address-space limit \(3906 MiB, ulimit -Hv\) is below KIMINA_REPL_MEMORY_MB \(16384 MiB\)/,
  );
  assert.equal(out.describe.match(/note:/g)?.length, 1);
});

test('stop per OS: the process group on POSIX, taskkill /T /F on Windows', async () => {
  assert.deepEqual(stopPlan(4242, 'linux'), { kind: 'group', pid: -4242, signal: 'SIGKILL' });
  assert.deepEqual(stopPlan(4242, 'darwin'), { kind: 'group', pid: -4242, signal: 'SIGKILL' });
  assert.deepEqual(stopPlan(4242, 'win32'), { kind: 'command', argv: ['taskkill', '/PID', '4242', '/T', '/F'] });
  const calls: string[] = [];
  const child = { pid: 4242, kill: (s?: NodeJS.Signals | number) => (calls.push(`child.kill ${s}`), true) };
  const deps = (failRun = false, throwKill = false) => ({
    kill: (pid: number, s: NodeJS.Signals) => {
      calls.push(`kill ${pid} ${s}`);
      if (throwKill) throw new Error('ESRCH');
    },
    run: (argv: string[], failed: () => void) => {
      calls.push(`run ${argv.join(' ')}`);
      if (failRun) failed();
    },
  });
  stopTree(child, 'darwin', deps());
  assert.deepEqual(calls.splice(0), ['kill -4242 SIGKILL']);
  stopTree(child, 'linux', deps(false, true));
  assert.deepEqual(calls.splice(0), ['kill -4242 SIGKILL', 'child.kill SIGKILL']);
  // the parent stays alive until taskkill has walked its tree; killed directly only when taskkill fails
  stopTree(child, 'win32', deps());
  assert.deepEqual(calls.splice(0), ['run taskkill /PID 4242 /T /F']);
  stopTree(child, 'win32', deps(true));
  assert.deepEqual(calls.splice(0), ['run taskkill /PID 4242 /T /F', 'child.kill SIGKILL']);

  // a process known only by its pid (a trainer an earlier backend started): the direct kill is of the pid
  const byPid = deps(false, true);
  stopTreeOfPid(4242, 'linux', byPid);
  assert.deepEqual(calls.splice(0), ['kill -4242 SIGKILL', 'kill 4242 SIGKILL']);
  stopTreeOfPid(4242, 'win32', deps(true));
  assert.deepEqual(calls.splice(0), ['run taskkill /PID 4242 /T /F', 'kill 4242 SIGKILL']);

  // for real on this machine: a tree (sh and two sleeps) is gone after one stop
  const tree = startProcess(
    { argv: ['sh', '-c', 'sleep 30 & sleep 30 & wait'], cwd: tmpdir(), env: process.env },
    'ignore',
  );
  await new Promise((r) => setTimeout(r, 300));
  const kids = readFileSync(`/proc/${tree.pid}/task/${tree.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  assert.equal(kids.length, 2);
  stopTree(tree, 'linux', systemStop(process.env));
  await new Promise((r) => setTimeout(r, 300));
  for (const pid of [tree.pid!, ...kids]) {
    const st = (() => {
      try {
        return /State:\s+(\w)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      } catch {
        return 'gone';
      }
    })();
    assert.ok(st === 'gone' || st === 'Z', `${pid} is ${st}`);
  }
});

test('memory samplers: /proc on Linux, ps on macOS (run here on procps ps), PowerShell rows on Windows', async () => {
  const proc = procTreeRss(process.pid);
  assert.ok(proc > 10 * MiB, String(proc));
  assert.ok(((await rssSampler('linux', processTable(process.env))(process.pid)) ?? 0) > 10 * MiB);
  // `ps -A -o pid=,ppid=,rss=`: the same options on macOS's ps(1) and procps; rss in KiB
  const viaPs = (await rssSampler('darwin', processTable(process.env))(process.pid)) ?? 0;
  assert.ok(viaPs > proc * 0.5 && viaPs < proc * 2, `${viaPs} vs ${proc}`);
  const seen: string[][] = [];
  const win = rssSampler('win32', async (argv) => {
    seen.push(argv);
    // rows in the format the command's own ForEach-Object writes: ProcessId ParentProcessId WorkingSetSize
    return '4 0 1000\r\n100 4 2000\r\n101 100 3000\r\n102 101 500\r\n103 4 7\r\n';
  });
  assert.equal(await win(100), 5500);
  assert.equal(await win(999), undefined);
  assert.equal(seen[0][0], 'powershell.exe');
  assert.match(seen[0].at(-1)!, /Get-CimInstance Win32_Process/);
  assert.equal(treeBytes(parseProcessTable('  1   0  10\n  2   1  20\n  3   2  30\n', 1024), 2), 50 * 1024);
  assert.equal(await rssSampler('darwin', async () => Promise.reject(new Error('no ps')))(1), undefined);
});

/**
 * TEST DOUBLE of macOS's /bin/sh (bash 3.2 in POSIX mode) for one behaviour: `ulimit -v` is refused with
 * bash's own text (GNU bash builtins/ulimit.def: builtin_error("%s: cannot modify limit: %s", "virtual memory",
 * strerror(EINVAL)), prefixed "sh: line 1: ulimit: " by builtin_error), exit 1, because macOS rejects
 * setrlimit(RLIMIT_AS). Everything else runs on the real /bin/sh.
 */
function macShDouble(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-macsh-'));
  writeFileSync(
    join(dir, 'sh'),
    [
      '#!/bin/sh',
      'case "$2" in',
      '  *"ulimit -v"*) echo "sh: line 1: ulimit: virtual memory: cannot modify limit: Invalid argument" >&2; exit 1 ;;',
      'esac',
      'exec /bin/sh "$@"',
      '',
    ].join('\n'),
  );
  chmodSync(join(dir, 'sh'), 0o755);
  return dir;
}

test("a check through a sh that refuses ulimit -v as macOS's does succeeds on the darwin launch", async (t) => {
  const dir = macShDouble();
  const saved = process.env.PATH;
  process.env.PATH = `${dir}:${saved}`;
  t.after(() => {
    process.env.PATH = saved;
  });
  assert.match(
    spawnSync('sh', ['-c', 'ulimit -v 1000 && echo capped'], { encoding: 'utf8' }).stderr,
    /ulimit: virtual memory: cannot modify limit: Invalid argument/,
  );
  const mac = standInVerifier({ maxRepls: 1, memoryLimitMb: 16384, os: 'darwin' });
  try {
    const out = await mac.verifier.check('theorem t : True := trivial');
    assert.equal(out.verdict.status, 'valid', out.verdict.reason);
  } finally {
    await mac.verifier.close();
  }
  // the launch every OS had before (the Linux cap) fails through the same sh, as on a Mac
  const before = standInVerifier({
    maxRepls: 1,
    memoryLimitMb: 16384,
    os: 'linux',
    cap: memoryCap(16384, 'linux', unlimited),
  });
  try {
    const out = await before.verifier.check('theorem t : True := trivial');
    assert.notEqual(out.verdict.status, 'valid');
    assert.match(out.verdict.reason, /ulimit: virtual memory: cannot modify limit: Invalid argument/);
  } finally {
    await before.verifier.close();
  }
});

for (const os of ['linux', 'darwin'] as const) {
  test(`a runaway check is stopped by the memory guard while it runs (${os}: ${os === 'linux' ? '/proc' : 'ps'})`, async () => {
    // no address-space cap (as on macOS and Windows): only the guard bounds it; the timeout is far away
    const s = standInVerifier({
      maxRepls: 1,
      memoryLimitMb: 300,
      os,
      cap: { kind: 'none', why: 'test' },
      guardIntervalMs: 100,
      timeoutS: 60,
    });
    try {
      const t0 = Date.now();
      const out = await s.verifier.check('theorem t : True := trivial -- stand_in_runaway_20');
      const seconds = (Date.now() - t0) / 1000;
      assert.equal(out.verdict.status, 'server_error', out.verdict.reason);
      assert.match(
        out.verdict.reason,
        /stopped by the memory guard: its processes held \d+ MiB, above the limit of 300 MiB/,
      );
      assert.ok(seconds < 20, `${seconds} s`);
      const held = Number(/held (\d+) MiB/.exec(out.verdict.reason)![1]);
      assert.ok(held > 300 && held < 1500, String(held));
      // the pool starts a fresh REPL for the next check
      const next = await s.verifier.check('theorem u : True := trivial');
      assert.equal(next.verdict.status, 'valid', next.verdict.reason);
    } finally {
      await s.verifier.close();
    }
  });
}

test('the lean-file fallback: the guard stops a runaway `lean --json` too', async () => {
  const runner = new LeanFileRunner({
    projectDir: mkdtempSync(join(tmpdir(), 'kimina-lf-')),
    leanCommand: [process.execPath, standInReplScript],
    env: process.env,
    maxParallel: 1,
    guardBytes: 300 * MiB,
    guardIntervalMs: 100,
  });
  const t0 = Date.now();
  const r = await runner.run({
    header: '',
    body: 'theorem t : True := trivial -- stand_in_runaway_20',
    audit: ['t'],
    timeoutMs: 60_000,
  });
  assert.equal(r.kind, 'server_error');
  assert.match(
    r.kind === 'server_error' ? r.message : '',
    /Lean stopped by the memory guard: its processes held \d+ MiB, above the limit of 300 MiB/,
  );
  assert.ok(Date.now() - t0 < 20_000);
});

test('buildVerifier says once how memory is bounded on the OS it runs for', async () => {
  const settings = {
    ...verifierSettingsOf(readSettings()),
    home: mkdtempSync(join(tmpdir(), 'kimina-bvhome-')),
    leanProject: mkdtempSync(join(tmpdir(), 'kimina-bv-')),
    replCommand: standInReplCommand(),
    maxRepls: 1,
    maxQueue: 1,
    replMaxUses: 0,
    replMaxRssMb: 0,
    replMemoryMb: 16384,
    sandbox: 'none' as const,
    allowedAxioms: defaultAllowedAxioms,
    allowNativeDecide: false,
    timeoutS: 10,
    initRepls: {},
    childEnv: process.env,
  };
  const mac = buildVerifier(settings, 'darwin');
  assert.match(mac.describe, /no address-space cap \(macOS refuses/);
  const win = buildVerifier(settings, 'win32');
  assert.match(win.describe, /Windows has no address-space ulimit.*sampled every 3 s/);
  await mac.verifier.close();
  await win.verifier.close();
  assert.ok(execFileSync('ps', ['-A', '-o', 'pid=,ppid=,rss='], { encoding: 'utf8' }).length > 0);
});
