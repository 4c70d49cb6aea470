// A small Hugging Face hub client: list a repository's files at a revision and download them with
// resume (HTTP Range into `.part` files) and checksums (sha256 for LFS files, the git blob sha1 for
// the rest). The endpoint follows huggingface_hub's HF_ENDPOINT; the token HF_TOKEN (or the token file
// `hf auth login` writes; `huggingface-cli login` under its older name).
import axios, { isAxiosError, type AxiosResponse } from 'axios';
import { createHash, type Hash } from 'node:crypto';
import {
  createReadStream,
  createWriteStream,
  existsSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { Settings } from '../settings/settings';

export interface HubFile {
  path: string;
  size?: number;
  /** sha256 of the content, for files stored with Git LFS. */
  sha256?: string;
  /** The git blob id (sha1 of "blob <size>\0" + content), for files stored in git itself. */
  gitOid?: string;
}

export interface RepoListing {
  repo: string;
  revision: string;
  commit?: string;
  files: HubFile[];
}

/** The hub's part of the backend settings, under their own names (docs/settings.md). */
export type HubSettings = Pick<Settings, 'hfEndpoint' | 'hfToken' | 'hfTokenPath' | 'hfHubOffline' | 'hfHubCache'>;

/**
 * What the hub calls read: the settings as they are (HF_ENDPOINT: default https://huggingface.co; HF_TOKEN, else the
 * token file HF_TOKEN_PATH that `hf auth login` writes; HF_HUB_OFFLINE: the hub is not contacted; HF_HUB_CACHE:
 * huggingface_hub's cache, read, never written), plus where to tell users to put a model folder when the hub
 * cannot be reached, and a timeout.
 */
export interface HubOptions extends Partial<HubSettings> {
  offlineHint?: string;
  timeoutMs?: number;
}

/** Only the hub's settings of a larger settings object (so a spread into a request carries nothing else). */
export function hubOptionsOf(s: HubSettings): HubOptions {
  const { hfEndpoint, hfToken, hfTokenPath, hfHubOffline, hfHubCache } = s;
  return { hfEndpoint, hfToken, hfTokenPath, hfHubOffline, hfHubCache };
}

export function hubEndpoint(options: HubOptions = {}): string {
  return (options.hfEndpoint ?? 'https://huggingface.co').replace(/\/+$/, '');
}

function hubToken(options: HubOptions = {}): string | undefined {
  if (options.hfToken) return options.hfToken;
  if (!options.hfTokenPath) return undefined;
  try {
    return readFileSync(options.hfTokenPath, 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

const REPO_ID = /^[A-Za-z0-9][\w.-]*\/[\w.-]+$/;

export function checkRepoId(repo: string): void {
  if (!REPO_ID.test(repo) || repo.includes('..'))
    throw new Error(`'${repo}' is not a Hugging Face model id (expected owner/name, e.g. AI-MO/Kimina-Prover-RL-0.6B)`);
}

function headers(options: HubOptions): Record<string, string> {
  const token = hubToken(options);
  return { 'user-agent': 'kimina-prover', ...(token ? { authorization: `Bearer ${token}` } : {}) };
}

/** The hub did not answer at all (no network, DNS, refused): a pull falls back to the Hugging Face cache. */
export class HubUnreachable extends Error {
  override readonly name = 'HubUnreachable';
}

/** Turns a failed hub request into an error that says what to do. */
async function hubError(err: unknown, what: string, repo: string, options: HubOptions): Promise<Error> {
  if (!isAxiosError(err)) return err instanceof Error ? err : new Error(String(err));
  const endpoint = hubEndpoint(options);
  const host = new URL(endpoint).host;
  if (!err.response) {
    const code = err.code ?? (err.cause as NodeJS.ErrnoException | undefined)?.code ?? err.message;
    return new HubUnreachable(
      `cannot reach ${host}: ${code} (${what}); ${options.offlineHint ?? 'copy a model folder here or set KIMINA_MODEL to a local folder'}`,
    );
  }
  const status = err.response.status;
  let text = '';
  const data = err.response.data as unknown;
  if (typeof (data as Readable)?.[Symbol.asyncIterator] === 'function') {
    try {
      for await (const c of data as Readable) text += Buffer.from(c).toString('utf8');
    } catch {
      /* status is enough */
    }
  } else if (typeof data === 'string') text = data;
  else if (data) text = JSON.stringify(data);
  const detail = (() => {
    try {
      return (JSON.parse(text) as { error?: string }).error ?? text;
    } catch {
      return text;
    }
  })()
    .trim()
    .slice(0, 300);
  if (status === 401 || status === 403) {
    return new Error(
      `${host} refused access to ${repo} (HTTP ${status}${detail ? `: ${detail}` : ''}); for a gated or private model set HF_TOKEN to a token that may read it, or run \`hf auth login\``,
    );
  }
  if (status === 404)
    return new Error(
      `${host} has no ${what} (HTTP 404${detail ? `: ${detail}` : ''}); check the model id and revision`,
    );
  return new Error(`${host} answered HTTP ${status} for ${what}${detail ? `: ${detail}` : ''}`);
}

/** Lists the files of a model repository at a revision (branch, tag or commit). */
export async function listRepoFiles(repo: string, revision = 'main', options: HubOptions = {}): Promise<RepoListing> {
  checkRepoId(repo);
  if (options.hfHubOffline) {
    throw new Error(
      `HF_HUB_OFFLINE is set, so ${new URL(hubEndpoint(options)).host} is not contacted; ${options.offlineHint ?? 'copy a model folder here or set KIMINA_MODEL to a local folder'}`,
    );
  }
  const base = hubEndpoint(options);
  const rev = encodeURIComponent(revision);
  const request = { headers: headers(options), timeout: options.timeoutMs ?? 30_000 };
  let info: {
    sha?: string;
    siblings?: Array<{ rfilename: string; size?: number; blobId?: string; lfs?: { sha256?: string; size?: number } }>;
  };
  try {
    info = (await axios.get(`${base}/api/models/${repo}/revision/${rev}`, { ...request, params: { blobs: true } }))
      .data;
  } catch (err) {
    throw await hubError(err, `model ${repo} at revision ${revision}`, repo, options);
  }
  const siblings = info.siblings ?? [];
  let files: HubFile[] = siblings.map((s) => ({
    path: s.rfilename,
    size: s.lfs?.size ?? s.size,
    sha256: s.lfs?.sha256,
    gitOid: s.lfs ? undefined : s.blobId,
  }));
  if (files.length === 0 || files.some((f) => f.size === undefined)) {
    // Mirrors that ignore `blobs` give names only: the tree listing has sizes and ids.
    // Best effort when names are known: the headers of each file can still give its checksum.
    const tree =
      files.length > 0
        ? await listTree(repo, info.sha ?? revision, options).catch(() => [] as HubFile[])
        : await listTree(repo, info.sha ?? revision, options);
    if (tree.length > 0) files = tree;
  }
  return { repo, revision, commit: info.sha, files };
}

async function listTree(repo: string, revision: string, options: HubOptions): Promise<HubFile[]> {
  const files: HubFile[] = [];
  let url: string | undefined =
    `${hubEndpoint(options)}/api/models/${repo}/tree/${encodeURIComponent(revision)}?recursive=true`;
  while (url) {
    let r: AxiosResponse;
    try {
      r = await axios.get(url, { headers: headers(options), timeout: options.timeoutMs ?? 30_000 });
    } catch (err) {
      throw await hubError(err, `file tree of ${repo} at ${revision}`, repo, options);
    }
    for (const e of r.data as Array<{
      type: string;
      path: string;
      size?: number;
      oid?: string;
      lfs?: { oid?: string; size?: number };
    }>) {
      if (e.type !== 'file') continue;
      files.push({ path: e.path, size: e.lfs?.size ?? e.size, sha256: e.lfs?.oid, gitOid: e.lfs ? undefined : e.oid });
    }
    const next = /<([^>]+)>;\s*rel="next"/.exec(String(r.headers.link ?? ''));
    url = next ? next[1] : undefined;
  }
  return files;
}

export interface DownloadProgress {
  file: string;
  bytes: number;
  total?: number;
}

export interface DownloadOptions extends HubOptions {
  onProgress?: (p: DownloadProgress) => void;
  signal?: AbortSignal;
}

function resolveUrl(repo: string, revision: string, path: string, options: HubOptions): string {
  return `${hubEndpoint(options)}/${repo}/resolve/${encodeURIComponent(revision)}/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/**
 * When the listing carried no checksum: the hub's own headers on the resolve URL (before any CDN
 * redirect) give it: X-Linked-Etag / X-Linked-Size for LFS files (sha256), ETag for git files (blob id).
 */
async function checksumFromHeaders(
  repo: string,
  revision: string,
  file: HubFile,
  options: HubOptions,
): Promise<HubFile> {
  // Like huggingface_hub 2.4.0 (utils/_http.py, _httpx2_follow_hub_redirects_with_backoff): follow redirects
  // that stay on the hub's host (a renamed repository answers a relative 307), stop at one to another host
  // (the CDN): the checksum headers are on that redirect itself. At most 20.
  let url = resolveUrl(repo, revision, file.path, options);
  let r: AxiosResponse | undefined;
  for (let hop = 0; hop <= 20; hop++) {
    let hopAnswer: AxiosResponse;
    try {
      hopAnswer = await axios.head(url, {
        headers: { ...headers(options), 'accept-encoding': 'identity' },
        maxRedirects: 0,
        timeout: options.timeoutMs ?? 30_000,
        validateStatus: (status) => status < 400,
      });
    } catch (err) {
      throw await hubError(err, `file ${file.path} of ${repo}`, repo, options);
    }
    r = hopAnswer;
    const location: unknown =
      hopAnswer.status >= 300 && hopAnswer.status < 400 ? hopAnswer.headers.location : undefined;
    if (typeof location !== 'string') break;
    const next = new URL(location, url);
    if (next.origin !== new URL(url).origin) break; // same scheme, host and port only
    url = next.toString();
    if (hop === 20) throw new Error(`more than 20 redirects while looking up ${file.path} of ${repo}`);
  }
  if (!r) throw new Error(`no answer for ${file.path} of ${repo}`);
  const answer: AxiosResponse = r;
  const unquote = (v: unknown): string | undefined =>
    typeof v === 'string' ? v.replace(/^W\//, '').replace(/"/g, '').toLowerCase() : undefined;
  const linked = unquote(answer.headers['x-linked-etag']);
  const linkedSize = Number(answer.headers['x-linked-size']);
  if (linked && /^[0-9a-f]{64}$/.test(linked))
    return { ...file, sha256: linked, size: Number.isFinite(linkedSize) ? linkedSize : file.size };
  const etag = unquote(answer.headers.etag);
  const length = Number(answer.headers['content-length']);
  const size = file.size ?? (Number.isFinite(length) ? length : undefined);
  if (etag && /^[0-9a-f]{40}$/.test(etag) && size !== undefined) return { ...file, gitOid: etag, size };
  return { ...file, size };
}

function safeJoin(dir: string, path: string): string {
  if (path.startsWith('/') || path.split('/').some((p) => p === '..' || p === ''))
    throw new Error(`refusing the unsafe file name '${path}' from the hub`);
  return join(dir, ...path.split('/'));
}

async function hashFile(path: string, hash: Hash): Promise<void> {
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
}

/**
 * Downloads one file of a repository into `dir` (keeping its relative path). An existing `<file>.part`
 * is resumed with an HTTP Range request; the result is checked against the listing's checksum and only
 * then renamed into place. A file already present with the right size and checksum is kept.
 */
export async function downloadFile(
  repo: string,
  revision: string,
  listed: HubFile,
  dir: string,
  options: DownloadOptions = {},
): Promise<string> {
  const target = safeJoin(dir, listed.path);
  if (options.hfHubOffline)
    throw new Error(
      `HF_HUB_OFFLINE is set, so ${listed.path} of ${repo} is not downloaded; ${options.offlineHint ?? 'copy a model folder here or set KIMINA_MODEL to a local folder'}`,
    );
  const file = listed.sha256 || listed.gitOid ? listed : await checksumFromHeaders(repo, revision, listed, options);
  const part = `${target}.part`;
  // What the `.part` belongs to: it is resumed only for the same revision (the commit, when the listing has
  // one) and the same checksum; bytes of another commit's file would only fail the checksum at the end.
  const partMeta = `${part}.json`;
  const owner = JSON.stringify({ revision, sha256: file.sha256, gitOid: file.gitOid });
  mkdirSync(dirname(target), { recursive: true });
  if (existsSync(part)) {
    let same = false;
    try {
      same = readFileSync(partMeta, 'utf8') === owner;
    } catch {
      /* no record: not ours to resume */
    }
    if (!same) rmSync(part, { force: true });
  }
  const makeHash = (): { hash: Hash; kind: 'sha256' | 'git' | 'none' } => {
    if (file.sha256) return { hash: createHash('sha256'), kind: 'sha256' };
    if (file.gitOid && file.size !== undefined) {
      const h = createHash('sha1');
      h.update(`blob ${file.size}\0`);
      return { hash: h, kind: 'git' };
    }
    return { hash: createHash('sha256'), kind: 'none' };
  };
  const verify = (digest: string, kind: 'sha256' | 'git' | 'none'): void => {
    const expected = kind === 'sha256' ? file.sha256 : kind === 'git' ? file.gitOid : undefined;
    if (expected && digest !== expected.toLowerCase()) {
      rmSync(part, { force: true });
      rmSync(partMeta, { force: true });
      throw new Error(
        `checksum mismatch for ${file.path} of ${repo}: expected ${kind === 'git' ? 'git blob ' : 'sha256 '}${expected}, got ${digest}; the damaged download was deleted, run the command again`,
      );
    }
  };

  if (existsSync(target) && file.size !== undefined && statSync(target).size === file.size) {
    const { hash, kind } = makeHash();
    await hashFile(target, hash);
    const expected = kind === 'sha256' ? file.sha256 : kind === 'git' ? file.gitOid : undefined;
    if (!expected || hash.digest('hex') === expected.toLowerCase()) {
      options.onProgress?.({ file: file.path, bytes: file.size, total: file.size });
      return target;
    }
    rmSync(target);
  }

  let have = existsSync(part) ? statSync(part).size : 0;
  if (file.size !== undefined && have > file.size) {
    rmSync(part);
    have = 0;
  }
  const url = resolveUrl(repo, revision, file.path, options);
  let { hash, kind } = makeHash();
  let total = file.size;
  if (!(file.size !== undefined && have === file.size)) {
    let response: AxiosResponse<Readable>;
    try {
      response = await axios.get<Readable>(url, {
        headers: { ...headers(options), ...(have > 0 ? { range: `bytes=${have}-` } : {}) },
        responseType: 'stream',
        timeout: options.timeoutMs ?? 60_000,
        signal: options.signal,
        maxRedirects: 10,
        validateStatus: (s) => s === 200 || s === 206,
      });
    } catch (err) {
      throw await hubError(err, `file ${file.path} of ${repo}`, repo, options);
    }
    const resumed = response.status === 206;
    if (resumed) {
      const range = /bytes (\d+)-/.exec(String(response.headers['content-range'] ?? ''));
      if (!range || Number(range[1]) !== have) {
        response.data.destroy();
        rmSync(part, { force: true });
        throw new Error(
          `${file.path}: the hub answered an unexpected range (${String(response.headers['content-range'])}); run the command again`,
        );
      }
      await hashFile(part, hash);
    } else {
      have = 0; // the server sent the whole file: start over
      ({ hash, kind } = makeHash());
      const length = Number(response.headers['content-length']);
      if (total === undefined && Number.isFinite(length)) total = length;
    }
    let bytes = have;
    const count = new Transform({
      transform(chunk: Buffer, _encoding, done) {
        hash.update(chunk);
        bytes += chunk.length;
        options.onProgress?.({ file: file.path, bytes, total });
        done(null, chunk);
      },
    });
    writeFileSync(partMeta, owner);
    const out = createWriteStream(part, { flags: resumed ? 'a' : 'w' });
    let writeError: NodeJS.ErrnoException | undefined;
    out.once('error', (e) => {
      writeError = e;
    });
    try {
      await pipeline(response.data, count, out);
    } catch (err) {
      if (options.signal?.aborted)
        throw new Error(`download of ${file.path} cancelled; the partial file is kept for resuming`);
      if (writeError?.code === 'ENOSPC' || writeError?.code === 'EDQUOT')
        throw new Error(`no space left to write ${part}; free some space and run the command again to resume`);
      if (writeError) throw new Error(`cannot write ${part}: ${writeError.message}`);
      throw new Error(
        `download of ${file.path} from ${new URL(url).host} was interrupted (${(err as Error).message}); run the command again to resume`,
      );
    }
    if (total !== undefined && bytes !== total) {
      throw new Error(
        `download of ${file.path} ended early (${bytes} of ${total} bytes); run the command again to resume`,
      );
    }
  } else {
    await hashFile(part, hash);
  }
  verify(hash.digest('hex'), kind);
  renameSync(part, target);
  rmSync(partMeta, { force: true });
  options.onProgress?.({ file: file.path, bytes: total ?? statSync(target).size, total });
  return target;
}
