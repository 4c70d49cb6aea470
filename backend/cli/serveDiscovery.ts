// The discovery file `kimina serve` keeps at <KIMINA_HOME>/serve.json while it runs ({"url", "token"?, "pid"},
// mode 0600 since it may hold the API token), read by backend/editor/discovery.ts to attach the editor.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

interface DiscoveryRecord {
  url: string;
  token?: string;
  pid: number;
}

/** What this server wrote, and the record of another live server it replaced (given back on exit). */
export interface WrittenDiscovery {
  path: string;
  record: DiscoveryRecord;
  replaced: string | null;
}

function liveOtherServer(raw: string): boolean {
  try {
    const pid = (JSON.parse(raw) as { pid?: unknown }).pid;
    if (typeof pid !== 'number' || pid === process.pid) return false;
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The URL a local client should use: a wildcard listen address is reached through loopback. */
function connectUrl(host: string, port: number): string {
  const bare = host.replace(/^\[|\]$/g, '');
  const reachable = bare === '0.0.0.0' || bare === '' ? '127.0.0.1' : bare === '::' ? '::1' : bare;
  return `http://${reachable.includes(':') ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * Writes the file atomically (temp file created 0600, then renamed); returns what was written, or null on
 * failure. The newest server wins; the record of a live one it replaces is kept to give back on exit.
 */
export function writeDiscoveryFile(
  o: { host: string; port: number; token?: string },
  path: string,
): WrittenDiscovery | null {
  const record: DiscoveryRecord = {
    url: connectUrl(o.host, o.port),
    ...(o.token ? { token: o.token } : {}),
    pid: process.pid,
  };
  const temp = `${path}.${process.pid}.tmp`;
  let replaced: string | null = null;
  try {
    replaced = readFileSync(path, 'utf8');
  } catch {
    /* none yet */
  }
  if (replaced !== null && !liveOtherServer(replaced)) replaced = null;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(temp, JSON.stringify(record) + '\n', { mode: 0o600 });
    renameSync(temp, path);
    return { path, record, replaced };
  } catch (err) {
    rmSync(temp, { force: true });
    console.error(
      `kimina: could not write ${path} (the editor will not find this server by itself): ${(err as Error).message}`,
    );
    return null;
  }
}

/** Removes the file (or gives back the record it replaced, if that server still runs), unless another server has since replaced it. */
export function removeDiscoveryFile(written: WrittenDiscovery | null): void {
  if (!written) return;
  try {
    const current = JSON.parse(readFileSync(written.path, 'utf8')) as { pid?: unknown };
    if (current.pid !== written.record.pid) return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    // unreadable or malformed: ours was overwritten badly; removing it is still right
  }
  if (written.replaced !== null && liveOtherServer(written.replaced)) {
    const temp = `${written.path}.${process.pid}.tmp`;
    try {
      writeFileSync(temp, written.replaced, { mode: 0o600 });
      renameSync(temp, written.path);
      return;
    } catch {
      rmSync(temp, { force: true });
    }
  }
  rmSync(written.path, { force: true });
}
