// TEST DOUBLE: a stand-in Hugging Face hub (a real HTTP server on 127.0.0.1) serving the endpoints the
// model store uses: /api/models/<repo>/revision/<rev>?blobs=true, /api/models/<repo>/tree/<rev>, and
// /<repo>/resolve/<rev>/<file> with HTTP Range. It can cut a transfer short, serve wrong bytes, or
// demand a token, to exercise resume, checksum and error paths.
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

interface StandInRepo {
  commit: string;
  files: Record<string, Buffer | string>;
  /** Files that the listing marks as LFS (sha256); the rest get a git blob id. */
  lfs?: string[];
  /** Require `Authorization: Bearer <token>`. */
  token?: string;
}

export interface StandInHubOptions {
  repos: Record<string, StandInRepo>;
  /** Leave `size`, `blobId` and `lfs` out of the revision listing (forces the tree listing). */
  namesOnly?: boolean;
  /** Send file bodies in 64 KB pieces this many ms apart (a slow link). */
  slowMs?: number;
  /** Answer 404 for the tree listing (a mirror without it). */
  noTree?: boolean;
  /** Page size of the tree listing (Link: rel="next" beyond it). */
  treePageSize?: number;
  /**
   * Renamed repositories, old name -> new name: /<old>/resolve/… answers 307 with a relative Location to
   * /<new>/resolve/… (same host), the redirect huggingface_hub 2.4.0 follows for HEAD /resolve
   * (utils/_http.py, _httpx2_follow_hub_redirects_with_backoff: same-origin redirects are followed).
   */
  renamed?: Record<string, string>;
}

export interface StandInHub {
  endpoint: string;
  /** Every request: method, path and Range header. */
  log: Array<{ method: string; path: string; range?: string; authorization?: string }>;
  /** Cut the next transfer of `file` after `bytes` bytes (once). */
  cutNext(file: string, bytes: number): void;
  /** Serve these bytes for `file` instead of the listed content (a corrupted mirror). */
  corrupt(file: string, bytes: Buffer): void;
  close(): Promise<void>;
}

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
const gitOid = (b: Buffer): string => createHash('sha1').update(`blob ${b.length}\0`).update(b).digest('hex');

export async function startStandInHub(o: StandInHubOptions): Promise<StandInHub> {
  const log: StandInHub['log'] = [];
  const cuts = new Map<string, number>();
  const corrupted = new Map<string, Buffer>();
  const bytesOf = (repo: StandInRepo, f: string): Buffer => Buffer.from(repo.files[f]);

  const authorized = (repo: StandInRepo, req: IncomingMessage): boolean =>
    !repo.token || req.headers.authorization === `Bearer ${repo.token}`;

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const path = decodeURIComponent(url.pathname);
    log.push({ method: req.method ?? '', path, range: req.headers.range, authorization: req.headers.authorization });
    const json = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    const api = /^\/api\/models\/([^/]+\/[^/]+)\/(revision|tree)\/([^/]+)$/.exec(path);
    const resolve = /^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/.exec(path);
    const repoName = api?.[1] ?? resolve?.[1];
    if (resolve && repoName && o.renamed?.[repoName]) {
      res.writeHead(307, { location: `/${o.renamed[repoName]}/resolve/${resolve[2]}/${resolve[3]}` });
      res.end();
      return;
    }
    const repo = repoName ? (o.repos[repoName] ?? o.repos[o.renamed?.[repoName] ?? '']) : undefined;
    if (!repo) {
      json(404, { error: 'Repository not found' });
      return;
    }
    if (!authorized(repo, req)) {
      json(401, {
        error: `Access to model ${repoName} is restricted. You must have access to it and be authenticated to access it. Please log in.`,
      });
      return;
    }
    const rev = api?.[3] ?? resolve?.[2];
    if (rev !== 'main' && rev !== repo.commit) {
      json(404, { error: `Revision Not Found for url ${path}` });
      return;
    }
    const names = Object.keys(repo.files).sort();
    if (api?.[2] === 'revision') {
      json(200, {
        id: repoName,
        sha: repo.commit,
        siblings: names.map((f) => {
          if (o.namesOnly) return { rfilename: f };
          const b = bytesOf(repo, f);
          return repo.lfs?.includes(f)
            ? {
                rfilename: f,
                size: b.length,
                blobId: gitOid(Buffer.from(`pointer ${f}`)),
                lfs: { sha256: sha256(b), size: b.length, pointerSize: 130 },
              }
            : { rfilename: f, size: b.length, blobId: gitOid(b) };
        }),
      });
      return;
    }
    if (api?.[2] === 'tree' && o.noTree) {
      json(404, { error: 'no tree here' });
      return;
    }
    if (api?.[2] === 'tree') {
      const page = o.treePageSize ?? 1000;
      const start = Number(url.searchParams.get('cursor') ?? 0);
      const entries = names.slice(start, start + page).map((f) => {
        const b = bytesOf(repo, f);
        return repo.lfs?.includes(f)
          ? {
              type: 'file',
              path: f,
              size: 130,
              oid: gitOid(Buffer.from(`pointer ${f}`)),
              lfs: { oid: sha256(b), size: b.length, pointerSize: 130 },
            }
          : { type: 'file', path: f, size: b.length, oid: gitOid(b) };
      });
      const headers: Record<string, string> = { 'content-type': 'application/json' };
      if (start + page < names.length) {
        const next = new URL(req.url ?? '/', `http://${req.headers.host}`);
        next.searchParams.set('cursor', String(start + page));
        headers.link = `<${next.toString()}>; rel="next"`;
      }
      res.writeHead(200, headers);
      res.end(JSON.stringify(entries));
      return;
    }
    const file = resolve![3];
    if (!(file in repo.files)) {
      json(404, { error: 'Entry not found' });
      return;
    }
    const body = corrupted.get(file) ?? bytesOf(repo, file);
    const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
    const from = range ? Number(range[1]) : 0;
    if (from > body.length) {
      res.writeHead(416);
      res.end();
      return;
    }
    const slice = body.subarray(from);
    const lfs = repo.lfs?.includes(file) ?? false;
    const listed = bytesOf(repo, file);
    // Like huggingface.co: LFS files carry the content's sha256 in X-Linked-Etag, git files their blob id in ETag.
    const head: Record<string, string | number> = {
      'content-length': slice.length,
      'x-repo-commit': repo.commit,
      etag: lfs ? `"${sha256(listed).slice(0, 32)}-1"` : `"${gitOid(listed)}"`,
      ...(lfs ? { 'x-linked-etag': `"${sha256(listed)}"`, 'x-linked-size': listed.length } : {}),
    };
    if (req.method === 'HEAD') {
      res.writeHead(200, head);
      res.end();
      return;
    }
    if (range) head['content-range'] = `bytes ${from}-${body.length - 1}/${body.length}`;
    res.writeHead(range ? 206 : 200, head);
    const cut = cuts.get(file);
    if (cut !== undefined) {
      cuts.delete(file);
      res.write(slice.subarray(0, cut), () => setTimeout(() => res.destroy(), 20));
      return;
    }
    if (o.slowMs) {
      let at = 0;
      const tick = (): void => {
        if (res.destroyed) return;
        if (at >= slice.length) {
          res.end();
          return;
        }
        res.write(slice.subarray(at, at + 65536));
        at += 65536;
        setTimeout(tick, o.slowMs);
      };
      tick();
      return;
    }
    res.end(slice);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    log,
    cutNext: (file, bytes) => cuts.set(file, bytes),
    corrupt: (file, bytes) => corrupted.set(file, bytes),
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A folder's files by their path inside it (a model folder to serve as a hub repository). */
export function filesOf(dir: string, prefix = ''): Record<string, Buffer> {
  const out: Record<string, Buffer> = {};
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) Object.assign(out, filesOf(path, `${prefix}${name}/`));
    else out[`${prefix}${name}`] = readFileSync(path);
  }
  return out;
}
