// Finding a running `kimina serve` to attach to: KIMINA_SERVER_URL (+ KIMINA_API_TOKEN), else the
// discovery file the server writes at <KIMINA_HOME>/serve.json ({"url", "token"?, "pid"}) while it runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Settings } from '../settings/settings';

/** What finding a server reads: the setting, its token, and KIMINA_HOME (where the discovery file is). */
export type ServerSettings = Pick<Settings, 'apiToken' | 'serverUrl' | 'home'>;

export interface ServerAddress {
  url: string;
  token?: string;
  source: 'setting' | 'discovery';
}

function alive(pid: unknown): boolean {
  if (typeof pid !== 'number') return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The discovery file in a KIMINA_HOME. */
export function discoveryPath(home: string): string {
  return join(home, 'serve.json');
}

/** The live server's record in the discovery file, or null. */
function discovered(home: string): { url: string; token?: string } | null {
  let raw: string;
  try {
    raw = readFileSync(discoveryPath(home), 'utf8');
  } catch {
    return null;
  }
  try {
    const found = JSON.parse(raw) as { url?: unknown; token?: unknown; pid?: unknown };
    if (typeof found.url !== 'string' || !alive(found.pid)) return null;
    return { url: found.url.replace(/\/+$/, ''), ...(typeof found.token === 'string' ? { token: found.token } : {}) };
  } catch {
    return null;
  }
}

/**
 * KIMINA_SERVER_URL (with KIMINA_API_TOKEN, else the token of the discovery file when it names the same
 * server, so a server's random token needs no setting), else the discovery file.
 */
export function findServer(settings: ServerSettings): ServerAddress | null {
  const { apiToken: token, serverUrl, home } = settings;
  if (serverUrl) {
    const url = serverUrl;
    const file = token ? null : discovered(home);
    return { url, token: token ?? (file?.url === url ? file.token : undefined), source: 'setting' };
  }
  const file = discovered(home);
  return file ? { url: file.url, token: file.token ?? token, source: 'discovery' } : null;
}
