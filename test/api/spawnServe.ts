// Starts the real `kimina serve` as a process (through tsx) in its own KIMINA_HOME, with TEST DOUBLES behind
// it: the stand-in REPL for Lean (and, when a test gives KIMINA_MODEL, the scripted model).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';

const root = join(__dirname, '..', '..');

export interface Served {
  child: ChildProcess;
  url: string;
  home: string;
  log: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const children: ChildProcess[] = [];
const homes: string[] = [];

/** Kills what a failed test left running (every spawnServe child) and removes serve()'s homes (call from `after`). */
export function cleanUpServes(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const d of homes.splice(0)) rmSync(d, { recursive: true, force: true });
}

/**
 * Spawns the real `kimina serve` (through tsx) with this environment and waits for the URL it prints;
 * rejects with its log when it exits first or does not start within `startMs`.
 */
export async function spawnServe(env: NodeJS.ProcessEnv, port = 0, startMs = 30_000): Promise<Omit<Served, 'home'>> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'backend/cli.ts', 'serve', '--port', String(port)], {
    cwd: root,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let log = '';
  child.stderr!.on('data', (c: Buffer) => {
    log += c.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.once('exit', (code, signal) => r({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kimina serve did not start:\n${log}`)), startMs);
    child.stdout!.on('data', (c: Buffer) => {
      const m = /listening on (http:\/\/\S+)/.exec(c.toString());
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    void exited.then(({ code }) => {
      clearTimeout(timer);
      reject(new Error(`kimina serve exited ${code}:\n${log}`));
    });
  });
  return { child, url, log: () => log, exited };
}

export async function serve(
  extraEnv: Record<string, string> = {},
  home = mkdtempSync(join(tmpdir(), 'kimina-serve-home-')),
): Promise<Served> {
  homes.push(home);
  const started = spawnServe({
    ...process.env,
    ...standInReplEnv(),
    KIMINA_ENGINE: 'onnx',
    KIMINA_DEVICE: 'cpu',
    KIMINA_THREADS: '1',
    KIMINA_SANDBOX: 'none',
    KIMINA_REPL_MEMORY_MB: '0',
    KIMINA_MAX_REPLS: '1',
    KIMINA_HOME: home,
    KIMINA_DB: join(home, 'kimina.db'),
    KIMINA_LEAN_PROJECT: home,
    KIMINA_API_TOKEN: '',
    LEAN_SERVER_API_KEY: '',
    KIMINA_SERVER_URL: '',
    ...extraEnv,
  });
  return { ...(await started), home };
}

/** Signals the server and measures how long it takes to exit (killing it after 10 s so the suite never hangs). */
export async function stop(s: Served, signal: NodeJS.Signals): Promise<{ ms: number; code: number | null }> {
  const start = Date.now();
  s.child.kill(signal);
  const guard = setTimeout(() => s.child.kill('SIGKILL'), 10_000);
  const { code } = await s.exited;
  clearTimeout(guard);
  return { ms: Date.now() - start, code };
}
