// Finding a running `kimina serve` to attach to: KIMINA_SERVER_URL (+ KIMINA_API_TOKEN), else the
// discovery file the server writes at <KIMINA_HOME>/serve.json ({"url", "token"?, "pid"}) while it runs.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { kiminaHome, readSome, type Env } from '../settings/settings';

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

export function discoveryPath(): string {
  return join(kiminaHome(), 'serve.json');
}

/** The live server's record in the discovery file, or null. */
function discovered(): { url: string; token?: string } | null {
  let raw: string;
  try {
    raw = readFileSync(discoveryPath(), 'utf8');
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
export function findServer(env?: Env): ServerAddress | null {
  const { apiToken: token, serverUrl } = readSome(['apiToken', 'serverUrl'], env);
  if (serverUrl) {
    const url = serverUrl;
    const file = token ? null : discovered();
    return { url, token: token ?? (file?.url === url ? file.token : undefined), source: 'setting' };
  }
  const file = discovered();
  return file ? { url: file.url, token: file.token ?? token, source: 'discovery' } : null;
}
