// A live `kimina serve` (the real CLI in its own process) over the stand-in REPL (TEST DOUBLE for Lean), in a
// fresh KIMINA_HOME, for the attack tests in this folder; plus a client that sends what a well-behaved local
// client sends (JSON, the server's token) and a /health probe that measures how fast it answers.
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';
import { spawnServe } from '../api/spawnServe';

export const TOKEN = 'security-test-token';

/** The trusted statement of the reward items these tests send. */
export const STATEMENT =
  'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  sorry';
/** A well-formed Kimina answer whose check the stand-in REPL holds for `ms` (its stand_in_slow_ rule). */
export const slowAnswer = (ms: number): string =>
  [
    '<think>',
    'Subtract 3, halve, done.',
    '</think>',
    'Linear arithmetic.',
    '',
    '```lean4',
    'import Mathlib',
    '',
    'theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by',
    `  linarith -- stand_in_slow_${ms}`,
    '```',
  ].join('\n');

export interface LiveServe {
  url: string;
  home: string;
  child: ChildProcess;
  log(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  post(
    path: string,
    body: unknown,
    headers?: Record<string, string>,
  ): Promise<{ status: number; json: any; headers: Headers; ms: number }>;
  /** GET /health; throws unless it answers 200. */
  health(): Promise<{ ms: number }>;
  stop(): Promise<void>;
}

export async function startServe(
  extraEnv: Record<string, string> = {},
  options: { home?: string; port?: number } = {},
): Promise<LiveServe> {
  const home = options.home ?? mkdtempSync(join(tmpdir(), 'kimina-sec-home-'));
  const { child, url, log, exited } = await spawnServe(
    {
      ...process.env,
      ...standInReplEnv({ importDelayMs: 0 }),
      KIMINA_SANDBOX: 'none',
      KIMINA_REPL_MEMORY_MB: '0',
      KIMINA_MAX_REPLS: '2',
      KIMINA_HOME: home,
      KIMINA_DB: '',
      KIMINA_LEAN_PROJECT: home,
      KIMINA_API_TOKEN: TOKEN,
      LEAN_SERVER_API_KEY: '',
      KIMINA_SERVER_URL: '',
      KIMINA_TRAINING_DIR: '',
      KIMINA_ENGINE: '',
      ...extraEnv,
    },
    options.port ?? 0,
    60_000,
  );
  const auth = { authorization: `Bearer ${TOKEN}` };
  return {
    url,
    home,
    child,
    exited,
    log,
    async post(path, body, headers = {}) {
      const t0 = performance.now();
      const res = await fetch(url + path, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth, ...headers },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = text;
      }
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
