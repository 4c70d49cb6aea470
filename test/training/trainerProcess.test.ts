// The trainer's launch and stop per OS (backend/training/trainerProcess.ts over backend/lean/processes.ts): the
// plans of linux, darwin and win32 built on this Linux machine (the OS injected), and what this machine can run for
// real: a stand-in trainer (a small Python `kimina_trainer.worker` that starts a grandchild and binds to us with the
// real kimina_trainer/lifeline.py) started by the launcher, stopped gracefully by SIGTERM and as a whole tree by
// SIGKILL, and on the win32 launch (run here with win32's spawn options) stopped gracefully by the stop line on its
// stdin. Windows' taskkill, PowerShell and `py` are not on this machine: their argv is checked, not run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { spawnOptions, type Os, type StopDeps } from '../../backend/lean/processes';
import {
  isOurTrainer,
  killTrainerTree,
  STOP_LINE,
  trainerLauncher,
  trainerSignalPlan,
  trainerSpec,
  type TrainerHandle,
  type TrainerLaunch,
} from '../../backend/training/trainerProcess';
import { venvPython } from '../../backend/training/paths';
import { basePythonCandidates, findBasePython, type PythonProbe } from '../../backend/training/pythonEnv';

const OSES: Os[] = ['linux', 'darwin', 'win32'];

function launchFor(os: Os): TrainerLaunch {
  const win = os === 'win32';
  return {
    python: venvPython(win ? 'C:\\k\\venv' : '/k/venv', os),
    sourceDir: win ? 'C:\\k\\trainer' : '/k/trainer',
    configPath: win ? 'C:\\k\\runs\\r1\\run.json' : '/k/runs/r1/run.json',
    logPath: win ? 'C:\\k\\runs\\r1\\trainer.log' : '/k/runs/r1/trainer.log',
    gpus: '0,1',
    pythonPath: win ? 'D:\\extra' : '/extra',
    env: { PATH: '/usr/bin', HOME: '/home/u' },
  };
}

test('trainer launch per OS: argv, PYTHONPATH with the OS delimiter, own process group on POSIX, no console on Windows', () => {
  for (const os of OSES) {
    const launch = launchFor(os);
    const spec = trainerSpec(launch, os);
    assert.deepEqual(spec.argv, [launch.python, '-m', 'kimina_trainer.worker', '--config', launch.configPath]);
    assert.equal(spec.cwd, launch.sourceDir);
    assert.equal(spec.os, os);
    assert.equal(spec.env.PYTHONPATH, os === 'win32' ? 'C:\\k\\trainer;D:\\extra' : '/k/trainer:/extra', os);
    assert.equal(spec.env.CUDA_VISIBLE_DEVICES, '0,1');
    assert.equal(spec.env.PYTHONUNBUFFERED, '1');
    assert.equal(spec.env.HOME, '/home/u'); // the base the root handed down, not process.env
    const options = spawnOptions(spec, ['pipe', 7, 7]);
    assert.deepEqual(options, {
      cwd: launch.sourceDir,
      env: spec.env,
      stdio: ['pipe', 7, 7],
      // a process group where one is used (the group kill); on Windows a detached child gets its own console
      detached: os !== 'win32',
      windowsHide: true,
    });
  }
  assert.equal(launchFor('win32').python, 'C:\\k\\venv\\Scripts\\python.exe');
  assert.equal(launchFor('darwin').python, '/k/venv/bin/python');
  assert.equal(launchFor('linux').python, '/k/venv/bin/python');
  // no extra PYTHONPATH setting: the trainer's sources alone; CPU runs hide the GPUs
  const cpu = trainerSpec({ ...launchFor('win32'), pythonPath: undefined, gpus: 'cpu' }, 'win32');
  assert.equal(cpu.env.PYTHONPATH, 'C:\\k\\trainer');
  assert.equal(cpu.env.CUDA_VISIBLE_DEVICES, '');
});

test('trainer stop per OS: process-group SIGKILL on POSIX, taskkill /T /F on Windows; the graceful stop is SIGTERM or the stdin line', () => {
  assert.deepEqual(trainerSignalPlan(4242, 'SIGKILL', 'linux'), {
    kind: 'tree',
    plan: { kind: 'group', pid: -4242, signal: 'SIGKILL' },
  });
  assert.deepEqual(trainerSignalPlan(4242, 'SIGKILL', 'darwin'), {
    kind: 'tree',
    plan: { kind: 'group', pid: -4242, signal: 'SIGKILL' },
  });
  assert.deepEqual(trainerSignalPlan(4242, 'SIGKILL', 'win32'), {
    kind: 'tree',
    plan: { kind: 'command', argv: ['taskkill', '/PID', '4242', '/T', '/F'] },
  });
  assert.deepEqual(trainerSignalPlan(4242, 'SIGTERM', 'linux'), { kind: 'signal', pid: 4242, signal: 'SIGTERM' });
  assert.deepEqual(trainerSignalPlan(4242, 'SIGTERM', 'darwin'), { kind: 'signal', pid: 4242, signal: 'SIGTERM' });
  assert.deepEqual(trainerSignalPlan(4242, 'SIGTERM', 'win32'), { kind: 'stdin', line: 'stop\n' });

  // a trainer known only by its pid (started by an earlier backend)
  const calls: string[] = [];
  const deps = (failRun = false, throwGroup = false): StopDeps => ({
    kill: (pid, s) => {
      calls.push(`kill ${pid} ${s}`);
      if (throwGroup && pid < 0) throw new Error('ESRCH');
    },
    run: (argv, failed) => {
      calls.push(`run ${argv.join(' ')}`);
      if (failRun) failed();
    },
  });
  killTrainerTree(4242, {}, 'linux', deps());
  killTrainerTree(4242, {}, 'darwin', deps());
  assert.deepEqual(calls.splice(0), ['kill -4242 SIGKILL', 'kill -4242 SIGKILL']);
  killTrainerTree(4242, {}, 'linux', deps(false, true)); // no such group: the process alone
  assert.deepEqual(calls.splice(0), ['kill -4242 SIGKILL', 'kill 4242 SIGKILL']);
  killTrainerTree(4242, {}, 'win32', deps());
  assert.deepEqual(calls.splice(0), ['run taskkill /PID 4242 /T /F']);
  killTrainerTree(4242, {}, 'win32', deps(true)); // taskkill could not run: TerminateProcess on the trainer itself
  assert.deepEqual(calls.splice(0), ['run taskkill /PID 4242 /T /F', 'kill 4242 SIGKILL']);
});

test("is it our trainer: its command line from /proc on Linux, ps on macOS, PowerShell's CIM on Windows", async () => {
  const cmd = '/k/venv/bin/python -m kimina_trainer.worker --config /k/runs/r1/run.json';
  const asked: string[][] = [];
  const exec = (out: string | Error) => async (argv: string[]) => {
    asked.push(argv);
    if (out instanceof Error) throw out;
    return out;
  };
  assert.equal(await isOurTrainer(42, '/k/runs/r1/run.json', {}, 'darwin', exec(cmd + '\n')), true);
  assert.deepEqual(asked.splice(0), [['ps', '-ww', '-o', 'command=', '-p', '42']]);
  assert.equal(await isOurTrainer(42, '/k/runs/r2/run.json', {}, 'darwin', exec(cmd)), false);
  assert.equal(await isOurTrainer(42, '/k/runs/r1/run.json', {}, 'darwin', exec(new Error('exit 1'))), false);
  asked.splice(0);
  const winCmd = '"C:\\k\\venv\\Scripts\\python.exe" -m kimina_trainer.worker --config C:\\k\\runs\\r1\\run.json\r\n';
  assert.equal(await isOurTrainer(42, 'C:\\k\\runs\\r1\\run.json', {}, 'win32', exec(winCmd)), true);
  assert.equal(await isOurTrainer(42, 'C:\\k\\runs\\r1\\run.json', {}, 'win32', exec('\r\n')), false); // gone
  assert.equal(asked.length, 2);
  assert.deepEqual(asked.splice(0, 1)[0], [
    'powershell.exe',
    '-NoProfile',
    '-NonInteractive',
    '-Command',
    '(Get-CimInstance Win32_Process -Filter "ProcessId=42").CommandLine',
  ]);
  asked.splice(0);
  // Linux reads /proc and runs nothing: this process is not a trainer; a pid that does not exist is not either
  assert.equal(await isOurTrainer(process.pid, 'run.json', {}, 'linux', exec(new Error('ran'))), false);
  assert.equal(await isOurTrainer(2 ** 22 + 1, 'run.json', {}, 'linux', exec(new Error('ran'))), false);
  assert.deepEqual(asked, []);
});

test('the trainer environment per OS: Scripts\\python.exe on Windows, bin/python elsewhere; py -3 before python on Windows', () => {
  assert.equal(venvPython('C:\\Users\\u\\.kimina\\venv', 'win32'), 'C:\\Users\\u\\.kimina\\venv\\Scripts\\python.exe');
  assert.equal(venvPython('/Users/u/.kimina/venv', 'darwin'), '/Users/u/.kimina/venv/bin/python');
  assert.equal(venvPython('/home/u/.kimina/venv', 'linux'), '/home/u/.kimina/venv/bin/python');

  assert.deepEqual(basePythonCandidates(undefined, 'win32'), [['py', '-3'], ['python'], ['python3']]);
  assert.deepEqual(basePythonCandidates(undefined, 'darwin'), [['python3'], ['python']]);
  assert.deepEqual(basePythonCandidates(undefined, 'linux'), [['python3'], ['python']]);
  assert.deepEqual(basePythonCandidates('C:\\Program Files\\Python312\\python.exe', 'win32'), [
    ['C:\\Program Files\\Python312\\python.exe'],
  ]);

  const tried: string[] = [];
  const probe =
    (answers: Record<string, { error?: Error; status: number | null; stdout: string }>): PythonProbe =>
    (argv) => {
      tried.push(argv.join(' '));
      return answers[argv.join(' ')] ?? { error: new Error('ENOENT'), status: null, stdout: '' };
    };
  // Windows with python.org's launcher: `py -3` is the argv the venv is made with
  assert.deepEqual(findBasePython(undefined, {}, 'win32', probe({ 'py -3': { status: 0, stdout: '3.12\r\n' } })), [
    'py',
    '-3',
  ]);
  assert.deepEqual(tried.splice(0), ['py -3']);
  // no launcher, and the Store stub `python3` never reached: `python`
  assert.deepEqual(findBasePython(undefined, {}, 'win32', probe({ python: { status: 0, stdout: '3.11\n' } })), [
    'python',
  ]);
  assert.deepEqual(tried.splice(0), ['py -3', 'python']);
  assert.deepEqual(findBasePython(undefined, {}, 'linux', probe({ python3: { status: 0, stdout: '3.10\n' } })), [
    'python3',
  ]);
  assert.throws(
    () => findBasePython(undefined, {}, 'win32', probe({ python: { status: 0, stdout: '3.8\n' } })),
    /py -3: not found; python: Python 3.8 is too old.*python3: not found.*python\.org, which adds the `py` launcher/,
  );
  assert.throws(
    () => findBasePython(undefined, {}, 'linux', probe({ python3: { status: 1, stdout: '' } })),
    /python3: the venv\/ensurepip modules are missing \(Debian\/Ubuntu: apt install python3-venv\)/,
  );
  // for real: this machine's python3 is found and runs the probe
  assert.deepEqual(findBasePython(undefined, process.env, 'linux'), ['python3']);
});

// ---- for real on this machine: a stand-in trainer with a grandchild

/** A stand-in `kimina_trainer.worker`: binds to the backend with the real lifeline, starts a grandchild, waits for a stop. */
const STAND_IN_WORKER = `
import json, os, signal, subprocess, sys, time
from kimina_trainer.lifeline import bind_to_backend
cfg = json.load(open(sys.argv[sys.argv.index("--config") + 1]))
stopped = []
how = bind_to_backend(cfg["backend_pid"], on_stop=lambda: stopped.append("stdin"))
signal.signal(signal.SIGTERM, lambda *_: stopped.append("signal"))
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
print("ready", os.getpid(), child.pid, os.environ["PYTHONPATH"], how, flush=True)
while not stopped:
    time.sleep(0.05)
child.kill()
child.wait()
print("stopped by", stopped[0], flush=True)
sys.exit(0)
`;

function standInTrainer(): { launch: (name: string) => TrainerLaunch; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-trainer-proc-'));
  const pkg = join(dir, 'src', 'kimina_trainer');
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, '__init__.py'), '');
  writeFileSync(join(pkg, 'worker.py'), STAND_IN_WORKER);
  copyFileSync(resolve(__dirname, '../../backend/trainer/kimina_trainer/lifeline.py'), join(pkg, 'lifeline.py'));
  return {
    dir,
    launch: (name) => {
      const configPath = join(dir, `${name}.json`);
      writeFileSync(configPath, JSON.stringify({ backend_pid: process.pid }));
      return {
        python: 'python3',
        sourceDir: join(dir, 'src'),
        configPath,
        logPath: join(dir, `${name}.log`),
        gpus: 'cpu',
        pythonPath: join(dir, 'more'),
        env: process.env,
      };
    },
  };
}

async function readyLine(logPath: string): Promise<{ pid: number; grandchild: number; pythonPath: string }> {
  for (let i = 0; i < 200; i++) {
    let text = '';
    try {
      text = readFileSync(logPath, 'utf8');
    } catch {
      /* not yet */
    }
    const m = /^ready (\d+) (\d+) (\S+) /m.exec(text);
    if (m) return { pid: Number(m[1]), grandchild: Number(m[2]), pythonPath: m[3] };
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`the stand-in trainer never got ready:\n${readFileSync(logPath, 'utf8')}`);
}

function state(pid: number): string {
  try {
    return /State:\s+(\w)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? '?';
  } catch {
    return 'gone';
  }
}

async function gone(pid: number): Promise<boolean> {
  for (let i = 0; i < 100; i++) {
    if (['gone', 'Z'].includes(state(pid))) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}

function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return Promise.race([
    p,
    new Promise<T>((_, reject) => setTimeout(() => reject(new Error(`${what}: timed out`)), ms)),
  ]);
}

test('for real (linux): SIGKILL stops the trainer and its grandchild; SIGTERM is the graceful stop', async (t) => {
  const stand = standInTrainer();
  const leftovers: number[] = [];
  t.after(() => {
    for (const pid of leftovers) spawnSync('kill', ['-9', String(pid)]);
    spawnSync('rm', ['-rf', stand.dir]);
  });
  const launcher = trainerLauncher('linux');

  const a = stand.launch('kill');
  const killed: TrainerHandle = launcher(a);
  const ready = await readyLine(a.logPath);
  leftovers.push(ready.pid, ready.grandchild);
  assert.equal(ready.pid, killed.pid);
  assert.equal(ready.pythonPath, `${a.sourceDir}:${a.pythonPath}`);
  assert.equal(await isOurTrainer(killed.pid, a.configPath, process.env), true);
  assert.equal(await isOurTrainer(killed.pid, stand.launch('other').configPath, process.env), false);
  // its own process group, apart from ours: a Ctrl-C in our terminal does not reach it
  const pgid = Number(readFileSync(`/proc/${killed.pid}/stat`, 'utf8').split(') ')[1].split(' ')[2]);
  assert.equal(pgid, killed.pid);
  assert.notEqual(state(ready.grandchild), 'gone');
  killed.kill('SIGKILL');
  assert.deepEqual(await within(killed.exited, 10_000, 'SIGKILL'), { code: null, signal: 'SIGKILL' });
  assert.ok(await gone(ready.grandchild), `the grandchild ${ready.grandchild} survived: ${state(ready.grandchild)}`);
  assert.equal(await isOurTrainer(killed.pid, a.configPath, process.env), false);

  const b = stand.launch('term');
  const termed = launcher(b);
  const ready2 = await readyLine(b.logPath);
  leftovers.push(ready2.pid, ready2.grandchild);
  termed.kill('SIGTERM');
  assert.deepEqual(await within(termed.exited, 10_000, 'SIGTERM'), { code: 0, signal: null });
  assert.match(readFileSync(b.logPath, 'utf8'), /stopped by signal/);
  assert.ok(await gone(ready2.grandchild));
});

test("for real (linux, win32's launch): the stop line on stdin is the graceful stop; SIGKILL runs taskkill /T /F", async (t) => {
  const stand = standInTrainer();
  const leftovers: number[] = [];
  t.after(() => {
    for (const pid of leftovers) spawnSync('kill', ['-9', String(pid)]);
    spawnSync('rm', ['-rf', stand.dir]);
  });
  const calls: string[] = [];
  const double: StopDeps = {
    kill: (pid, s) => void calls.push(`kill ${pid} ${s}`),
    run: (argv) => void calls.push(`run ${argv.join(' ')}`),
  };
  const c = stand.launch('win');
  const handle = trainerLauncher('win32', () => double)(c);
  const ready = await readyLine(c.logPath);
  leftovers.push(ready.pid, ready.grandchild);
  // spawned with win32's options on this machine: PYTHONPATH in Windows' form (this Linux python sees one entry
  // "src;more", so the stand-in's package is found through cwd, where `-m` looks first)
  assert.equal(ready.pythonPath, `${c.sourceDir};${c.pythonPath}`);
  handle.kill('SIGKILL');
  assert.deepEqual(calls.splice(0), [`run taskkill /PID ${handle.pid} /T /F`]);
  assert.equal(STOP_LINE, 'stop\n');
  handle.kill('SIGTERM'); // no signal a Windows process can catch: the line, read by the real lifeline.py
  assert.deepEqual(await within(handle.exited, 10_000, 'stop line'), { code: 0, signal: null });
  assert.match(readFileSync(c.logPath, 'utf8'), /stopped by stdin/);
  assert.deepEqual(calls, []);
});
