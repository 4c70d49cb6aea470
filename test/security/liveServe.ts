// A live `kimina serve` (the real CLI in its own process) over the stand-in REPL (TEST DOUBLE for Lean), in a
// fresh KIMINA_HOME, for the attack tests in this folder; plus a client that sends what a well-behaved local
// client sends (JSON, the server's token) and a /health probe that measures how fast it answers.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';

export const TOKEN = 'security-test-token';
const root = join(__dirname, '..', '..');

export interface LiveServe {
  url: string;
  home: string;
  child: ChildProcess;
  log(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  post(path: string, body: unknown, headers?: Record<string, string>): Promise<{ status: number; json: any; headers: Headers; ms: number }>;
  /** GET /health; throws unless it answers 200. */
  health(): Promise<{ ms: number }>;
  stop(): Promise<void>;
}

export async function startServe(extraEnv: Record<string, string> = {}, options: { home?: string; port?: number } = {}): Promise<LiveServe> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'kimina-sec-home-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'backend/cli.ts', 'serve', '--port', String(options.port ?? 0)], {
    cwd: root,
    env: { ...process.env, ...standInReplEnv({ importDelayMs: 0 }), KIMINA_SANDBOX: 'none', KIMINA_REPL_MEMORY_MB: '0', KIMINA_MAX_REPLS: '2',
      KIMINA_HOME: home, KIMINA_DB: '', KIMINA_LEAN_PROJECT: home, KIMINA_API_TOKEN: TOKEN, LEAN_SERVER_API_KEY: '',
      KIMINA_SERVER_URL: '', KIMINA_TRAINING_DIR: '', KIMINA_ENGINE: '', ...extraEnv },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stderr!.on('data', (c: Buffer) => { log += c.toString(); });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) => child.once('exit', (code, signal) => r({ code, signal })));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`kimina serve did not start:\n${log}`)), 60_000);
    child.stdout!.on('data', (c: Buffer) => {
      const m = /listening on (http:\/\/\S+)/.exec(c.toString());
      if (m) { clearTimeout(timer); resolve(m[1]); }
    });
    void exited.then(({ code }) => { clearTimeout(timer); reject(new Error(`kimina serve exited ${code}:\n${log}`)); });
  });
  const auth = { authorization: `Bearer ${TOKEN}` };
  return {
    url, home, child, exited, log: () => log,
    async post(path, body, headers = {}) {
      const t0 = performance.now();
      const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json', ...auth, ...headers }, body: JSON.stringify(body) });
      const text = await res.text();
      let json: unknown;
      try { json = JSON.parse(text); } catch { json = text; }
      return { status: res.status, json, headers: res.headers, ms: performance.now() - t0 };
    },
    async health() {
      const t0 = performance.now();
      const res = await fetch(`${url}/health`, { headers: auth, signal: AbortSignal.timeout(20_000) });
      if (res.status !== 200) throw new Error(`/health answered ${res.status}: ${await res.text()}`);
      await res.json();
      return { ms: performance.now() - t0 };
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill('SIGTERM');
        const guard = setTimeout(() => child.kill('SIGKILL'), 10_000);
        await exited;
        clearTimeout(guard);
      }
      if (!options.home) rmSync(home, { recursive: true, force: true });
    },
  };
}
