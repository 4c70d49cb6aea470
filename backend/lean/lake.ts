// Whether Lean's build tool can be found: in one of the PATH folders (the searchPath setting, handed down) or in
// elan's default folder. Without a REPL build the verifier falls back to `lake env lean`; without lake nothing checks.
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { ErrorKind } from '../protocol';
import { exeName, osOf, type Os } from './processes';

/** Lean cannot be run (no REPL command, no lake): setup is needed, as data (the language server's hints). */
export class LeanNotAvailable extends Error {
  readonly kind: ErrorKind = 'lean-missing';
}

export function lakeFound(searchPath: readonly string[], os: Os = osOf()): boolean {
  const dirs = [...searchPath, join(homedir(), '.elan', 'bin')];
  return dirs.some((d) => d && existsSync(join(d, exeName('lake', os)))); // lake.exe on Windows
}
