// Paths that stay inside: every folder or file the backend deletes or writes from a derived path (a toolchain
// tag, a run id, a workspace entry) is checked to lie strictly inside its parent after resolving symlinks, and
// KIMINA_HOME's contents are created owner-only (0700 folders, 0600 files).
import {
  chmodSync,
  closeSync,
  existsSync,
  openSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  realpathSync,
  rmSync,
} from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/** Refused path: it would leave its parent folder. */
export class OutsideParentError extends Error {
  constructor(
    readonly parent: string,
    readonly path: string,
  ) {
    super(`refusing to touch ${path}: it is not inside ${parent}`);
    this.name = 'OutsideParentError';
  }
}

/** realpath of the deepest existing ancestor of `p`, plus the not-yet-existing rest. */
function resolveExisting(p: string): string {
  let head = resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      // lstat first: a dangling symlink exists as a link and must resolve through realpath (which throws)
      lstatSync(head);
      return resolve(realpathSync(head), ...rest.reverse());
    } catch {
      const up = dirname(head);
      if (up === head) return resolve(head, ...rest.reverse());
      rest.push(head.slice(up.length + (up.endsWith(sep) ? 0 : 1)));
      head = up;
    }
  }
}

/** True when `path` lies strictly inside `parent`, both resolved through symlinks. */
export function isInside(parent: string, path: string): boolean {
  const rel = relative(resolveExisting(parent), resolveExisting(path));
  return rel !== '' && !rel.startsWith('..') && !isAbsolute(rel);
}

/** Throws OutsideParentError unless `path` lies strictly inside `parent`; returns `path`. */
export function assertInside(parent: string, path: string): string {
  if (!isInside(parent, path)) throw new OutsideParentError(parent, path);
  // `path` itself may be a symlink that points inside while its own location is elsewhere: check both
  const lexical = relative(resolve(parent), resolve(path));
  if (lexical === '' || lexical.startsWith('..') || isAbsolute(lexical)) throw new OutsideParentError(parent, path);
  return path;
}

/** Removes `path` (recursively) only when it lies inside `parent`; a symlink is removed as a link. */
export function removeInside(parent: string, path: string): void {
  assertInside(parent, path);
  rmSync(path, { recursive: true, force: true });
}

/** Creates `path` (and its missing ancestors up to `parent`) only when it lies inside `parent`. */
export function mkdirInside(parent: string, path: string, mode?: number): string {
  assertInside(parent, path);
  mkdirSync(path, { recursive: true, ...(mode !== undefined ? { mode } : {}) });
  return path;
}

/** A folder only its owner can enter (0700), created if missing; an existing one is narrowed to 0700. */
export function ensurePrivateDir(dir: string): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  if (isDedicated(dir)) narrow(dir, 0o700);
  return dir;
}

/** A folder that is ours to narrow: not `/`, the user's home, its parent, or the temp folder (a KIMINA_HOME set to one of them). */
function isDedicated(dir: string): boolean {
  const d = resolveExisting(dir);
  return ![resolve('/'), homedir(), dirname(homedir()), tmpdir()].some((shared) => resolveExisting(shared) === d);
}

function narrow(path: string, mode: number): void {
  try {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return; // never chmod through a link
    if ((st.mode & 0o777) !== mode && (st.mode & 0o077) !== 0) chmodSync(path, mode);
  } catch {
    /* gone meanwhile, or not ours: leave it */
  }
}

/**
 * Fixes an existing install: KIMINA_HOME and every folder and file in it lose group/other permissions
 * (folders 0700, files 0600, owner's execute bits kept on files such as a venv's scripts). Symlinks are not
 * followed. Bounded: at most `limit` entries are visited (models and venvs can be large; their top levels come first).
 */
function makeHomePrivate(home: string, limit = 20_000): { fixed: number } {
  if (!existsSync(home)) {
    ensurePrivateDir(home);
    return { fixed: 1 };
  }
  if (!isDedicated(home)) return { fixed: 0 };
  let fixed = 0;
  let seen = 0;
  const queue = [home];
  for (let next = 0; next < queue.length && seen < limit; next++) {
    const path = queue[next];
    seen++;
    let st;
    try {
      st = lstatSync(path);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) continue;
    const mode = st.mode & 0o777;
    if (mode & 0o077) {
      try {
        chmodSync(path, mode & 0o700);
        fixed++;
      } catch {
        /* not ours */
      }
    }
    if (st.isDirectory()) {
      try {
        for (const name of readdirSync(path)) queue.push(`${path}${sep}${name}`);
      } catch {
        /* unreadable */
      }
    }
  }
  return { fixed };
}

/**
 * Owner-only from now on for a long-running backend: KIMINA_HOME is 0700 and its existing contents lose
 * group/other bits (makeHomePrivate), and what this process creates later is 0700/0600 (umask 077; children
 * such as REPLs and trainers inherit it).
 */
export function enterPrivateHome(home: string): void {
  process.umask(0o077);
  ensurePrivateDir(home);
  makeHomePrivate(home);
}

/** Creates `path` empty with mode 0600 unless it exists (SQLite then gives its -wal and -shm files the same mode). */
export function touchPrivateFile(path: string): void {
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch {
    /* exists */
  }
}
