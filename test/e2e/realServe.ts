// Starts the real `kimina serve` (from source, through tsx) for an end-to-end test, in its own KIMINA_HOME,
// with the stand-in REPL (TEST DOUBLE for Lean) behind its verifier, so no Lean toolchain is needed.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';
import { root } from './harness';

export interface RealServe {
  url: string;
  home: string;
  log(): string;
  close(): Promise<void>;
}

export async function startRealServe(options: { token: string; env?: Record<string, string> }): Promise<RealServe> {
  const home = mkdtempSync(join(tmpdir(), 'kimina-e2e-serve-'));
  const child: ChildProcess = spawn(
    process.execPath,
    ['--import', 'tsx', join(root, 'backend', 'cli.ts'), 'serve', '--port', '0'],
    {
      cwd: root,
      env: {
        ...process.env,
        ...standInReplEnv(),
        KIMINA_SANDBOX: 'none',
        KIMINA_REPL_MEMORY_MB: '0',
        KIMINA_MAX_REPLS: '2',
        KIMINA_HOME: home,
        KIMINA_DB: join(home, 'kimina.db'),
        KIMINA_TRAINING_DIR: join(home, 'training'),
        KIMINA_LEAN_PROJECT: home,
        KIMINA_API_TOKEN: options.token,
        ...options.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let log = '';
  child.stderr!.on('data', (c: Buffer) => {
    log += c.toString();
  });
  child.stdout!.on('data', (c: Buffer) => {
    log += c.toString();
  });
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const graceful = await Promise.race([
      exited.then(() => true),
      new Promise((r) => setTimeout(() => r(false), 12_000)),
    ]);
    if (!graceful) {
      child.kill('SIGKILL');
      await exited;
    }
  };
  let url: string;
  try {
    url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`kimina serve did not start within 30 s:\n${log}`)), 30_000);
      child.stdout!.on('data', (c: Buffer) => {
        const m = /listening on (http:\/\/\S+)/.exec(c.toString());
        if (m) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`kimina serve exited ${code}:\n${log}`));
      });
    });
  } catch (err) {
    await stop();
    rmSync(home, { recursive: true, force: true });
    throw err;
  }
  return {
    url,
    home,
    log: () => log,
    async close() {
      await stop();
      rmSync(home, { recursive: true, force: true });
    },
  };
}
