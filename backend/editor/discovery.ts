// Finding a running `kimina serve` to attach to: KIMINA_SERVER_URL (+ KIMINA_API_TOKEN), else the
// discovery file the server writes at <KIMINA_HOME>/serve.json ({"url", "token"?, "pid"}) while it runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kiminaHome } from '../config';

export interface ServerAddress { url: string; token?: string; source: 'setting' | 'discovery' }

function alive(pid: unknown): boolean {
  if (typeof pid !== 'number') return true;
  try { process.kill(pid, 0); return true; } catch (err) { return (err as NodeJS.ErrnoException).code === 'EPERM'; }
}

export function discoveryPath(): string {
  return join(kiminaHome(), 'serve.json');
}

export function findServer(env: NodeJS.ProcessEnv = process.env): ServerAddress | null {
  const token = env.KIMINA_API_TOKEN || undefined;
  if (env.KIMINA_SERVER_URL) return { url: env.KIMINA_SERVER_URL.replace(/\/+$/, ''), token, source: 'setting' };
  let raw: string;
  try { raw = readFileSync(discoveryPath(), 'utf8'); } catch { return null; }
  try {
    const found = JSON.parse(raw) as { url?: unknown; token?: unknown; pid?: unknown };
    if (typeof found.url !== 'string' || !alive(found.pid)) return null;
    return { url: found.url.replace(/\/+$/, ''), token: typeof found.token === 'string' ? found.token : token, source: 'discovery' };
  } catch {
    return null;
  }
}
