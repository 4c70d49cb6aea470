// The trainer suite's Python environment: test/trainer/.venv (git-ignored), created from
// backend/trainer/requirements-cpu.txt by the same code as `kimina trainer setup`, once; later calls return at once.
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ensurePythonEnv } from '../../backend/training/pythonEnv';

export const repoRoot = resolve(__dirname, '..', '..');
export const trainerSource = join(repoRoot, 'backend', 'trainer');
export const testVenv = join(repoRoot, 'test', 'trainer', '.venv');

async function withLock<T>(dir: string, fn: () => Promise<T>): Promise<T> {
  const lock = `${dir}.lock`;
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 20 * 60_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        /* raced */
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  try {
    return await fn();
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

let cached: Promise<string> | null = null;

/** Path of the suite's Python interpreter, creating the environment on first use. */
export function testPython(): Promise<string> {
  cached ??= withLock(testVenv, async () => {
    const r = await ensurePythonEnv({
      env: process.env,
      dir: testVenv,
      requirements: join(trainerSource, 'requirements-cpu.txt'),
      onProgress: (line) => {
        if (/^(creating|installing|Successfully|pip failed)/.test(line)) console.log(`[trainer env] ${line}`);
      },
    });
    if (r.created) console.log(`[trainer env] created in ${r.seconds.toFixed(0)} s: ${JSON.stringify(r.versions)}`);
    return r.python;
  });
  return cached;
}
