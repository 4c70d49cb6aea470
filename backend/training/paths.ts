// Where the Python trainer sources and environments live.
import { existsSync } from 'node:fs';
import { join, posix, resolve, win32 } from 'node:path';
import type { ErrorKind } from '../protocol';
import { osOf, type Os } from '../lean/processes';
import type { Settings } from '../settings/settings';

/** The trainer's Python environment is not there (`kimina trainer setup` makes it): setup is needed, as data. */
export class TrainerMissing extends Error {
  readonly kind: ErrorKind = 'trainer-missing';
}

/** backend/trainer (from source: next to this folder; from the bundle dist/cli.js: ../backend/trainer). */
export function trainerSourceDir(): string {
  const candidates = [resolve(__dirname, '..', 'trainer'), resolve(__dirname, '..', 'backend', 'trainer')];
  const found = candidates.find((d) => existsSync(join(d, 'kimina_trainer', 'worker.py')));
  if (!found) throw new Error(`the Python trainer sources are missing (looked in ${candidates.join(', ')})`);
  return found;
}

/** A virtual environment's interpreter: `Scripts\\python.exe` on Windows, `bin/python` elsewhere. */
export function venvPython(venv: string, os: Os = osOf()): string {
  return os === 'win32' ? win32.join(venv, 'Scripts', 'python.exe') : posix.join(venv, 'bin', 'python');
}

/** The interpreter that runs the trainer: KIMINA_TRAINER_PYTHON, else the trainer environment's. */
export function trainerPython(s: Pick<Settings, 'trainerPython' | 'trainerVenv'>): string {
  return s.trainerPython ?? venvPython(s.trainerVenv);
}
