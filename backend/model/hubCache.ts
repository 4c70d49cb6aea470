// Reading the Hugging Face cache that huggingface_hub (and so vLLM, transformers, TRL) writes, so a model a
// user already downloaded there is used without downloading it again, offline included. The layout, as
// huggingface_hub 2.4.0 writes it (file_download.py, constants.py):
//   <HF_HUB_CACHE>/models--<org>--<name>/refs/<revision>       the commit a branch or tag pointed at
//   <HF_HUB_CACHE>/models--<org>--<name>/snapshots/<commit>/…  the files, symlinks into ../../blobs
//   <HF_HUB_CACHE>/models--<org>--<name>/blobs/<etag>          content; named by the file's sha256 (LFS)
//                                                              or its git blob id (other files)
//   <HF_HUB_CACHE>/blobs/<xx>/<xet hash>                       the cache-wide shared store (2.x, Xet files:
//                                                              utils/_shared_blobs.py): the repo's blobs/<etag>
//                                                              is then a relative link to it, so the checksum is
//                                                              the repo blob's name, not the store file's
// The cache folder is the HF_HUB_CACHE setting (backend/settings/settings.ts: $HF_HOME/hub, HF_HOME
// $XDG_CACHE_HOME/huggingface or ~/.cache/huggingface), handed down as `cacheDir`.
// Nothing here writes to the cache.
import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, statSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { checkRepoId, type HubFile, type RepoListing } from './hub';

export interface CachedSnapshot {
  repo: string;
  /** The revision asked for (a branch, tag or commit). */
  revision: string;
  commit: string;
  dir: string;
}

/** `AI-MO/Kimina-Prover-RL-1.7B` -> `<cache>/models--AI-MO--Kimina-Prover-RL-1.7B`. */
function cachedRepoDir(repo: string, cacheDir: string): string {
  checkRepoId(repo);
  return join(cacheDir, `models--${repo.replace('/', '--')}`);
}

const COMMIT = /^[0-9a-f]{40}$/;

/** The snapshot of `repo` at `revision` in the cache, or undefined when the cache has none. */
export function findCachedSnapshot(repo: string, revision: string, cacheDir: string): CachedSnapshot | undefined {
  const repoDir = cachedRepoDir(repo, cacheDir);
  if (!existsSync(repoDir)) return undefined;
  let commit: string | undefined;
  if (COMMIT.test(revision)) commit = revision;
  else {
    // refs/<revision>: `main`, a tag, or `refs/pr/1` (huggingface_hub keeps the slashes as folders).
    if (revision.split('/').some((p) => p === '..' || p === '' || p === '.')) return undefined;
    try {
      const text = readFileSync(join(repoDir, 'refs', ...revision.split('/')), 'utf8').trim();
      if (COMMIT.test(text)) commit = text;
    } catch {
      return undefined;
    }
  }
  if (!commit) return undefined;
  const dir = join(repoDir, 'snapshots', commit);
  return existsSync(dir) && statSync(dir).isDirectory() ? { repo, revision, commit, dir } : undefined;
}

function walk(dir: string, root: string, out: string[]): void {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) walk(p, root, out);
    else if (entry.isFile() || entry.isSymbolicLink()) out.push(relative(root, p).split(sep).join('/'));
  }
}

/**
 * One snapshot file as a listing entry: its size and, from the repo blob it links to, its checksum (a 64-hex
 * blob name is the content's sha256, a 40-hex one its git blob id). The repo blob may itself link into the
 * cache-wide shared store (`<cache>/blobs/<xx>/<xet hash>`, huggingface_hub 2.4.0 publish_blob_to_shared_store);
 * its name, not the store file's, is the checksum. A link that leads out of the repo's blobs folder (or, for
 * the content, out of the shared store), or to nothing, is left out.
 */
function cachedFile(snapshot: CachedSnapshot, path: string): (HubFile & { blob: string }) | undefined {
  const p = join(snapshot.dir, ...path.split('/'));
  let real: string;
  let repoBlob: string;
  let blobs: string;
  try {
    real = realpathSync(p);
    if (!lstatSync(p).isSymbolicLink()) return { path, size: statSync(real).size, blob: real }; // copies: no checksum
    blobs = realpathSync(join(snapshot.dir, '..', '..', 'blobs')).concat(sep);
    // One step of the snapshot's link: ../../blobs/<etag> (the snapshot folder itself may be reached by links).
    repoBlob = resolve(realpathSync(dirname(p)), readlinkSync(p));
    repoBlob = join(realpathSync(dirname(repoBlob)), basename(repoBlob));
  } catch {
    return undefined; // a dangling link (blob deleted)
  }
  if (!repoBlob.startsWith(blobs) || repoBlob.slice(blobs.length).includes(sep)) return undefined;
  const shared = join(realpathSync(join(snapshot.dir, '..', '..', '..')), 'blobs').concat(sep);
  if (!real.startsWith(blobs) && !real.startsWith(shared)) return undefined;
  const size = statSync(real).size;
  const name = basename(repoBlob);
  if (/^[0-9a-f]{64}$/.test(name)) return { path, size, sha256: name, blob: real };
  if (/^[0-9a-f]{40}$/.test(name)) return { path, size, gitOid: name, blob: real };
  return { path, size, blob: real };
}

/** A listing of the snapshot's files, as `listRepoFiles` would give it (for offline pulls). */
export function cachedListing(snapshot: CachedSnapshot): RepoListing {
  const paths: string[] = [];
  walk(snapshot.dir, snapshot.dir, paths);
  const files = paths
    .sort()
    .map((p) => cachedFile(snapshot, p))
    .filter((f): f is HubFile & { blob: string } => f !== undefined)
    .map(({ blob: _blob, ...f }) => f);
  return { repo: snapshot.repo, revision: snapshot.revision, commit: snapshot.commit, files };
}

/**
 * The cached blob holding exactly `file` (same size, and the checksum the listing gives, when it gives
 * one and the cache names its blobs by it), or undefined.
 */
export function cachedBlobFor(snapshot: CachedSnapshot, file: HubFile): string | undefined {
  const c = cachedFile(snapshot, file.path);
  if (!c || (file.size !== undefined && c.size !== file.size)) return undefined;
  if (file.sha256) return c.sha256 === file.sha256.toLowerCase() ? c.blob : undefined;
  if (file.gitOid) return c.gitOid === file.gitOid.toLowerCase() ? c.blob : undefined;
  return file.size !== undefined ? c.blob : undefined;
}
