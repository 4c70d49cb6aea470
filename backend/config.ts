// Backend settings from the environment, with defaults. One place, so every module reads the same names.
import { homedir } from 'node:os';
import { join } from 'node:path';

function num(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n)) throw new Error(`${name} must be a number, got ${JSON.stringify(raw)}`);
  return n;
}
function str(name: string, fallback: string): string {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

/** Where the backend keeps its database, models and environments. */
export function kiminaHome(): string {
  return str('KIMINA_HOME', join(homedir(), '.kimina'));
}

export const env = { num, str };
