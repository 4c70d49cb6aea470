// Creates the trainer's Python environment (venv + pinned requirements), idempotently: a marker holding the
// requirements' hash makes a second call return at once. Errors name what is missing.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { osOf, type Os } from '../lean/processes';
import { venvPython } from './paths';

export interface PythonEnvOptions {
  /** The environment's folder. */
  dir: string;
  /** A requirements file (requirements-cpu.txt or requirements-gpu.txt). */
  requirements: string;
  /** The interpreter to create it with; default python3, then python. */
  basePython?: string;
  /** One line at a time from venv and pip. */
  onProgress?: (line: string) => void;
  /** Modules that must import afterwards. */
  verifyModules?: string[];
  /** pip runs before giving up (a multi-GB download over a flaky network fails now and then); default 3. */
  pipAttempts?: number;
  /** Wait before the next pip run, times the attempt number; default 10 s. */
  pipRetryDelayMs?: number;
  /**
   * An environment made by this function that this one is built on: its packages are seen beneath this one's own
   * (a .pth file), so what both need (torch and its CUDA wheels, several GB) is on disk once. This one's own pins
   * win where both have a package; rebuilding the base rebuilds this one.
   */
  layeredOn?: string;
  /** The base environment python, venv and pip run with, handed down by the root (Settings.childEnv). */
  env: NodeJS.ProcessEnv;
}

export interface PythonEnvResult {
  python: string;
  created: boolean;
  seconds: number;
  versions: Record<string, string>;
}

const execFileAsync = promisify(execFile);
const MARKER = '.kimina-env.json';
const DEFAULT_MODULES = ['torch', 'transformers', 'trl', 'peft', 'datasets', 'requests'];

class PythonEnvError extends Error {}

/** The files a requirements file's text names (-r other.txt, -c constraints.txt), relative to its folder. */
export function requirementsReferences(text: string): string[] {
  return [...text.matchAll(/^(?:-[rc]|--requirement|--constraint)[\s=]+(\S+)/gm)].map((m) => m[1]);
}

export function requirementsHash(requirements: string): string {
  // Includes referenced files so editing either reinstalls.
  const text = readFileSync(requirements, 'utf8');
  const h = createHash('sha256').update(text);
  for (const file of requirementsReferences(text)) h.update(readFileSync(join(dirname(requirements), file), 'utf8'));
  return h.digest('hex');
}

/**
 * The interpreters tried, as argv, when none is named: on Windows the `py` launcher's newest Python 3 first (python.org
 * installs it; `python3` there is often the Microsoft Store stub), then `python`, then `python3`; elsewhere `python3`,
 * then `python`. A named one (`kimina trainer setup --python`, a path that may hold spaces) is tried alone, as one word.
 */
export function basePythonCandidates(explicit: string | undefined, os: Os = osOf()): string[][] {
  if (explicit) return [[explicit]];
  return os === 'win32' ? [['py', '-3'], ['python'], ['python3']] : [['python3'], ['python']];
}

export type PythonProbe = (argv: string[]) => { error?: Error; status: number | null; stdout: string };

/** Runs `argv -c …` and returns its outcome (spawnSync with `env`, no console window on Windows). */
function systemPythonProbe(env: NodeJS.ProcessEnv): PythonProbe {
  return (argv) => {
    const r = spawnSync(argv[0], [...argv.slice(1), '-c', PROBE], { encoding: 'utf8', env, windowsHide: true });
    return { error: r.error, status: r.status, stdout: r.stdout ?? '' };
  };
}

const PROBE = 'import sys, venv, ensurepip; print("%d.%d" % sys.version_info[:2])';

/** A Python 3.10+ interpreter with the venv module (its argv: `py -3` on Windows), or a clear error naming what to install. */
export function findBasePython(
  explicit: string | undefined,
  env: NodeJS.ProcessEnv,
  os: Os = osOf(),
  probe: PythonProbe = systemPythonProbe(env),
): string[] {
  const problems: string[] = [];
  for (const c of basePythonCandidates(explicit, os)) {
    const name = c.join(' ');
    const r = probe(c);
    if (r.error) {
      problems.push(`${name}: not found`);
      continue;
    }
    if (r.status !== 0) {
      problems.push(
        os === 'linux'
          ? `${name}: the venv/ensurepip modules are missing (Debian/Ubuntu: apt install python3-venv)`
          : `${name}: does not run Python with the venv/ensurepip modules`,
      );
      continue;
    }
    const [major, minor] = r.stdout.trim().split('.').map(Number);
    if (major !== 3 || minor < 10) {
      problems.push(`${name}: Python ${r.stdout.trim()} is too old (3.10+ needed)`);
      continue;
    }
    return c;
  }
  const hint =
    os === 'win32'
      ? ' (install Python 3.10+ from python.org, which adds the `py` launcher, or pass `kimina trainer setup --python PYTHON`)'
      : os === 'darwin'
        ? ' (install Python 3.10+, e.g. from python.org or Homebrew, or pass `kimina trainer setup --python PYTHON`)'
        : '';
  throw new PythonEnvError(`no usable Python for the trainer: ${problems.join('; ')}${hint}`);
}

function run(
  argv: string[],
  args: string[],
  onLine: (l: string) => void,
  env: NodeJS.ProcessEnv,
): Promise<{ code: number; tail: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(argv[0], [...argv.slice(1), ...args], {
      env: { ...env, PIP_DISABLE_PIP_VERSION_CHECK: '1' },
      windowsHide: true,
    });
    let tail = '';
    const feed = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      tail = (tail + text).slice(-4000);
      for (const line of text.split(/\r?\n/)) if (line.trim()) onLine(line);
    };
    child.stdout.on('data', feed);
    child.stderr.on('data', feed);
    child.on('error', reject);
    child.on('close', (code) => resolvePromise({ code: code ?? 1, tail }));
  });
}

export async function ensurePythonEnv(options: PythonEnvOptions): Promise<PythonEnvResult> {
  const t0 = Date.now();
  const onProgress = options.onProgress ?? (() => {});
  if (!existsSync(options.requirements))
    throw new PythonEnvError(`requirements file not found: ${options.requirements}`);
  const hash = options.layeredOn
    ? createHash('sha256')
        .update(requirementsHash(options.requirements))
        .update(baseHash(options.layeredOn))
        .digest('hex')
    : requirementsHash(options.requirements);
  const python = venvPython(options.dir);
  const marker = join(options.dir, MARKER);
  const modules = options.verifyModules ?? DEFAULT_MODULES;
  const previous = readMarker(marker);
  if (existsSync(python) && previous?.hash === hash) {
    return { python, created: false, seconds: (Date.now() - t0) / 1000, versions: previous.versions };
  }
  const base = findBasePython(options.basePython, options.env);
  if (existsSync(options.dir) && !existsSync(python)) {
    // a broken environment is replaced; any other folder (KIMINA_TRAINER_VENV pointing at the wrong place) is not deleted
    const isVenv = existsSync(join(options.dir, 'pyvenv.cfg')) || readdirSync(options.dir).length === 0;
    if (!isVenv)
      throw new PythonEnvError(
        `refusing to replace ${options.dir}: it is not a Python environment (no pyvenv.cfg); choose an empty or new folder`,
      );
    rmSync(options.dir, { recursive: true, force: true });
  }
  if (!existsSync(python)) {
    mkdirSync(dirname(options.dir), { recursive: true });
    onProgress(`creating ${options.dir}`);
    const v = await run(base, ['-m', 'venv', options.dir], onProgress, options.env);
    if (v.code !== 0)
      throw new PythonEnvError(`could not create the environment with ${base.join(' ')} -m venv:\n${v.tail}`);
  }
  if (options.layeredOn) await layer(python, venvPython(options.layeredOn), options.env);
  onProgress(
    options.layeredOn
      ? `installing ${options.requirements} on top of ${options.layeredOn}`
      : `installing ${options.requirements} (torch and friends: a few GB on first install)`,
  );
  await pipInstall(
    python,
    options.requirements,
    options.env,
    onProgress,
    options.pipAttempts ?? 3,
    options.pipRetryDelayMs ?? 10_000,
  );
  const versions = await moduleVersions(python, modules, options.env);
  writeFileSync(marker, JSON.stringify({ hash, versions }) + '\n');
  return { python, created: true, seconds: (Date.now() - t0) / 1000, versions };
}

/** pip install -r, run again after a failure: pip keeps what it downloaded, so each run gets further. */
async function pipInstall(
  python: string,
  requirements: string,
  env: NodeJS.ProcessEnv,
  onProgress: (l: string) => void,
  attempts: number,
  delayMs: number,
): Promise<void> {
  // pip's own retries cover refused connections; --timeout covers a stalled read of a large wheel
  const args = [
    '-m',
    'pip',
    'install',
    '--progress-bar',
    'off',
    '--retries',
    '10',
    '--timeout',
    '60',
    '-r',
    requirements,
  ];
  for (let attempt = 1; ; attempt++) {
    const pip = await run([python], args, onProgress, env);
    if (pip.code === 0) return;
    if (attempt >= attempts) {
      throw new PythonEnvError(
        `pip could not install the trainer requirements (${requirements}) in ${attempts} attempts; last output:\n${pip.tail}`,
      );
    }
    const lastError =
      pip.tail
        .split(/\r?\n/)
        .filter((l) => l.trim())
        .pop() ?? `exit code ${pip.code}`;
    onProgress(`pip failed (attempt ${attempt} of ${attempts}: ${lastError.trim()}); trying again`);
    await new Promise((r) => setTimeout(r, delayMs * attempt));
  }
}

/** The base's marker hash: it must be complete before a layer is built on it. */
function baseHash(base: string): string {
  const marker = readMarker(join(base, MARKER));
  if (!marker || !existsSync(venvPython(base)))
    throw new PythonEnvError(`the environment ${base} this one is built on is not complete: create it first`);
  return marker.hash;
}

/** Makes the base's site-packages visible after the layer's own, through a .pth file in the layer. */
async function layer(python: string, basePython: string, env: NodeJS.ProcessEnv): Promise<void> {
  const paths = async (py: string): Promise<string[]> => {
    const { stdout } = await execFileAsync(
      py,
      ['-c', 'import json, sysconfig; p = sysconfig.get_paths(); print(json.dumps([p["purelib"], p["platlib"]]))'],
      { env, windowsHide: true },
    );
    return JSON.parse(stdout) as string[];
  };
  const [own] = await paths(python);
  const beneath = [...new Set(await paths(basePython))];
  writeFileSync(join(own, 'kimina-layered-on.pth'), beneath.join('\n') + '\n');
}

function readMarker(path: string): { hash: string; versions: Record<string, string> } | null {
  try {
    const m = JSON.parse(readFileSync(path, 'utf8')) as { hash?: unknown; versions?: unknown };
    return typeof m.hash === 'string' && typeof m.versions === 'object' && m.versions
      ? { hash: m.hash, versions: m.versions as Record<string, string> }
      : null;
  } catch {
    return null;
  }
}

/** Imports each module and returns its version; throws naming the modules that fail to import. */
async function moduleVersions(
  python: string,
  modules: string[],
  env: NodeJS.ProcessEnv,
): Promise<Record<string, string>> {
  const script = [
    'import importlib, json',
    'out, bad = {}, {}',
    `for m in ${JSON.stringify(modules)}:`,
    '    try: out[m] = getattr(importlib.import_module(m), "__version__", "?")',
    '    except Exception as e: bad[m] = f"{type(e).__name__}: {e}"',
    'print(json.dumps({"ok": out, "bad": bad}))',
  ].join('\n');
  let parsed: { ok: Record<string, string>; bad: Record<string, string> };
  try {
    const { stdout } = await execFileAsync(python, ['-c', script], { maxBuffer: 1 << 20, env, windowsHide: true });
    parsed = JSON.parse(stdout.trim().split('\n').pop() ?? '');
  } catch (err) {
    throw new PythonEnvError(`could not run ${python}: ${err instanceof Error ? err.message : String(err)}`);
  }
  const bad = Object.entries(parsed.bad);
  if (bad.length)
    throw new PythonEnvError(
      `the trainer environment is missing modules: ${bad.map(([m, e]) => `${m} (${e})`).join('; ')}`,
    );
  return parsed.ok;
}
