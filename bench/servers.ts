// The two verification servers bench:verify sets side by side, each started as its own process over the
// same stand-in REPL (a test double that answers at once, so what is measured is the server's overhead):
// - `kimina serve` from dist/cli.js;
// - kimina-lean-server itself (Python, FastAPI), from a source checkout the user names with
//   KLS_SRC=/path/to/kimina-lean-server; its dependencies come from PyPI (its requirements.txt) into
//   bench/kls/.venv. It starts REPLs as `lake env <repl_path>`, so a `lake` shim on its PATH starts the
//   stand-in instead; `from prisma import Prisma` needs a generated client (which downloads Prisma's
//   engines), and the database is off unless LEAN_SERVER_DATABASE_URL is set, so a stand-in `prisma`
//   module that refuses to connect is put first on its PYTHONPATH, then the checkout's own client/ (kimina_client,
// which the server imports).
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { standInReplScript } from '../backend/demo/stand-in-repl/index';

const repoRoot = resolve(__dirname, '..');

export interface RunningServer {
  name: string;
  url: string;
  pid: number;
  token?: string;
  stop(): Promise<void>;
}

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.once('error', rej);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
  });
}

async function waitForHealth(url: string, child: ChildProcess, output: () => string, seconds = 60): Promise<void> {
  const until = Date.now() + seconds * 1000;
  while (Date.now() < until) {
    if (child.exitCode !== null)
      throw new Error(`exited with ${child.exitCode} before answering /health:\n${output().slice(-2000)}`);
    try {
      if ((await fetch(`${url}/health`)).ok) return;
    } catch {
      /* not listening yet */
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`no answer on ${url}/health within ${seconds} s:\n${output().slice(-2000)}`);
}

function stopper(child: ChildProcess): () => Promise<void> {
  return () =>
    new Promise<void>((res) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        res();
        return;
      }
      const hard = setTimeout(() => {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
      }, 10_000);
      child.once('exit', () => {
        clearTimeout(hard);
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          /* gone */
        }
        res();
      });
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        res();
      }
    });
}

function launch(
  cmd: string,
  args: string[],
  options: { cwd: string; env: NodeJS.ProcessEnv },
): { child: ChildProcess; output: () => string } {
  const child = spawn(cmd, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let text = '';
  child.stdout!.on('data', (d: Buffer) => {
    text = (text + d.toString()).slice(-20_000);
  });
  child.stderr!.on('data', (d: Buffer) => {
    text = (text + d.toString()).slice(-20_000);
  });
  return { child, output: () => text };
}

/** `kimina serve` on a free port, `repls` REPLs, no sandbox (kimina-lean-server has none), REPLs logging to `log`. */
export async function startKiminaServe(
  repls: number,
  log: string,
  extraEnv: Record<string, string> = {},
): Promise<RunningServer> {
  const cli = join(repoRoot, 'dist', 'cli.js');
  if (!existsSync(cli)) throw new Error('dist/cli.js is missing: run npm run build');
  const port = await freePort();
  const token = 'bench-token';
  const home = mkdtempSync(join(tmpdir(), 'kimina-bench-home-'));
  const { child, output } = launch(process.execPath, [cli, 'serve', '--host', '127.0.0.1', '--port', String(port)], {
    cwd: home,
    env: {
      ...process.env,
      KIMINA_HOME: home,
      KIMINA_API_TOKEN: token,
      KIMINA_SANDBOX: 'none',
      KIMINA_MAX_REPLS: String(repls),
      KIMINA_REPL_COMMAND: `${JSON.stringify(process.execPath)} ${JSON.stringify(standInReplScript)}`,
      KIMINA_REPL_MEMORY_MB: '0',
      STAND_IN_LOG: log,
      ...extraEnv,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child, output);
  return { name: 'kimina serve', url, pid: child.pid!, token, stop: stopper(child) };
}

/** Why kimina-lean-server cannot be run here, or null when it can. */
export function klsUnavailable(src: string | undefined): string | null {
  if (!src)
    return 'KLS_SRC is not set (a checkout of github.com/project-numina/kimina-lean-server; its server is not on PyPI, only kimina-client is)';
  if (!existsSync(join(src, 'server', 'main.py'))) return `KLS_SRC=${src} has no server/main.py`;
  if (spawnSync('python3', ['--version']).status !== 0) return 'python3 is not on PATH';
  return null;
}

/** bench/kls/.venv with kimina-lean-server's pinned requirements (from PyPI); created once. */
function klsPython(src: string): string {
  const venv = join(repoRoot, 'bench', 'kls', '.venv');
  const python = join(venv, 'bin', 'python');
  const ready = join(venv, '.requirements-installed');
  if (existsSync(ready)) return python;
  console.error(`installing kimina-lean-server's requirements into ${venv} (once)…`);
  const steps: [string, string[]][] = [
    ['python3', ['-m', 'venv', venv]],
    [python, ['-m', 'pip', 'install', '-q', '-r', join(src, 'requirements.txt')]],
  ];
  for (const [cmd, args] of steps) {
    const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (exit ${r.status})`);
  }
  writeFileSync(ready, new Date().toISOString());
  return python;
}

/** kimina-lean-server itself on a free port, `repls` REPLs, over the stand-in REPL (through the lake shim). */
export async function startKiminaLeanServer(
  src: string,
  repls: number,
  log: string,
  extraEnv: Record<string, string> = {},
): Promise<RunningServer> {
  const python = klsPython(src);
  const shims = mkdtempSync(join(tmpdir(), 'kls-shims-'));
  // `lake env <repl_path>` -> the stand-in REPL
  writeFileSync(
    join(shims, 'lake'),
    `#!/bin/sh\n# bench shim: kimina-lean-server runs "lake env <repl>"; start the stand-in REPL instead\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(standInReplScript)}\n`,
  );
  chmodSync(join(shims, 'lake'), 0o755);
  mkdirSync(join(shims, 'prisma'));
  writeFileSync(
    join(shims, 'prisma', '__init__.py'),
    [
      '# bench shim: the database is off (no LEAN_SERVER_DATABASE_URL); a generated Prisma client is not needed',
      'class Prisma:',
      '    async def connect(self):',
      '        raise RuntimeError("bench: no database")',
      '    async def disconnect(self):',
      '        pass',
      '',
    ].join('\n'),
  );
  const project = mkdtempSync(join(tmpdir(), 'kls-project-'));
  const port = await freePort();
  const { child, output } = launch(python, ['-m', 'server'], {
    cwd: src,
    env: {
      ...process.env,
      PATH: `${shims}:${process.env.PATH ?? ''}`,
      PYTHONPATH: `${shims}:${join(src, 'client')}`,
      STAND_IN_LOG: log,
      LEAN_SERVER_HOST: '127.0.0.1',
      LEAN_SERVER_PORT: String(port),
      LEAN_SERVER_MAX_REPLS: String(repls),
      LEAN_SERVER_PROJECT_DIR: project,
      LEAN_SERVER_REPL_PATH: 'repl',
      LEAN_SERVER_ENVIRONMENT: 'prod',
      LEAN_SERVER_LOG_LEVEL: 'WARNING',
      ...extraEnv,
    },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHealth(url, child, output, 120);
  return { name: 'kimina-lean-server', url, pid: child.pid!, stop: stopper(child) };
}
