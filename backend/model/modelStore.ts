// The local model store: ~/.kimina/models/<org>/<name> holds one model folder per hub id, in the layout
// the ONNX engine loads (config.json, tokenizer files, onnx/model.onnx); `checkpoint/` keeps the
// downloaded safetensors checkpoint it was converted from (training starts from it). `pullModel`
// downloads from the hub and converts; `listModels` and `resolveModelDir` answer what is available.
import {
  copyFileSync,
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { ErrorKind } from '../protocol';
import { mkdirInside } from '../store/safePaths';
import { graphHasSharedPrefix, LAYOUT_VALUE, ONNX_KV16_FILE } from './onnx/modelFolder';
import {
  checkRepoId,
  HubUnreachable,
  downloadFile,
  listRepoFiles,
  type DownloadProgress,
  type HubFile,
  type HubOptions,
  type RepoListing,
} from './hub';
import { cachedBlobFor, cachedListing, findCachedSnapshot, type CachedSnapshot } from './hubCache';

/** The model the prover uses when none is configured (Kimina-Prover-RL 0.6B, Qwen3-based). */
export const DEFAULT_MODEL = 'AI-MO/Kimina-Prover-RL-0.6B';
/** Written into model.onnx metadata by the converter: graphs in our split-cache layout carry it. */
export const ONNX_LAYOUT_MARKER = LAYOUT_VALUE;
const MANIFEST = '.kimina-model.json';
export const CHECKPOINT_SUBDIR = 'checkpoint';

type ModelFormat = 'onnx' | 'checkpoint' | 'incomplete';

export interface Manifest {
  id: string;
  revision: string;
  commit?: string;
  /** 'hub-onnx': the repository ships our ONNX layout; 'converted': built from its checkpoint. */
  source: 'hub-onnx' | 'converted';
  quantize?: Quantize;
  files: HubFile[];
  pulledAt: string;
}

export type Quantize = 'q4' | 'fp32';

interface ConvertProgress {
  done: number;
  total: number;
  stage?: string;
}
/** The checkpoint converter (backend/model/onnx/convert.ts), passed in so the store stays independent of it. */
export type ConvertCheckpoint = (
  srcDir: string,
  outDir: string,
  options: { quantize: Quantize; onProgress?: (p: ConvertProgress) => void },
) => Promise<unknown>;

/** The model store of a KIMINA_HOME (the setting, handed down). */
function modelsRoot(home: string): string {
  return join(home, 'models');
}

/** The store folder of a hub id (which need not exist). */
export function storeDirOf(home: string, id: string): string {
  checkRepoId(id);
  const [org, name] = id.split('/');
  return join(modelsRoot(home), org, name);
}

function expandHome(p: string): string {
  return p === '~' ? homedir() : p.startsWith('~/') ? join(homedir(), p.slice(2)) : p;
}

/** True when `spec` names a folder (a path) rather than a hub id. */
export function isFolderSpec(spec: string): boolean {
  return (
    isAbsolute(spec) ||
    spec.startsWith('.') ||
    spec.startsWith('~') ||
    spec.includes('\\') ||
    spec.split('/').length !== 2 ||
    existsSync(spec)
  );
}

function detectFormat(dir: string): ModelFormat {
  if (existsSync(join(dir, 'onnx', 'model.onnx')) && existsSync(join(dir, 'config.json'))) return 'onnx';
  const hasWeights = (d: string): boolean => existsSync(d) && readdirSync(d).some((f) => f.endsWith('.safetensors'));
  if (hasWeights(dir) || hasWeights(join(dir, CHECKPOINT_SUBDIR))) return 'checkpoint';
  return 'incomplete';
}

export function readManifest(dir: string): Manifest | undefined {
  try {
    return JSON.parse(readFileSync(join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch {
    return undefined;
  }
}

function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) total += folderBytes(p);
    else if (entry.isFile()) total += statSync(p).size;
  }
  return total;
}

export interface ResolvedModel {
  id: string;
  dir: string;
  format: ModelFormat;
}

/** Where a model spec (folder path or hub id; default DEFAULT_MODEL) lives, whatever state it is in. */
export function locateModel(home: string, spec: string = DEFAULT_MODEL): ResolvedModel {
  if (isFolderSpec(spec)) {
    const dir = resolve(expandHome(spec));
    return { id: dir, dir, format: existsSync(dir) ? detectFormat(dir) : 'incomplete' };
  }
  const dir = storeDirOf(home, spec);
  return { id: spec, dir, format: existsSync(dir) ? detectFormat(dir) : 'incomplete' };
}

/** No model the engine can load is there (none pulled, not converted, no such folder): setup is needed, as data. */
export class ModelNotAvailable extends Error {
  readonly kind: ErrorKind = 'model-missing';
}

/** The folder of a model ready for the ONNX engine, or an error saying how to get one. */
export function resolveModelDir(home: string, spec: string = DEFAULT_MODEL, cacheDir?: string): string {
  const m = locateModel(home, spec);
  const folder = m.id === m.dir;
  if (m.format === 'onnx') return m.dir;
  if (folder && !existsSync(m.dir))
    throw new ModelNotAvailable(`the model folder ${m.dir} (KIMINA_MODEL) does not exist`);
  if (m.format === 'checkpoint') {
    throw new ModelNotAvailable(
      folder
        ? `${m.dir} holds a checkpoint without an ONNX graph; convert it with \`kimina model convert ${m.dir}\``
        : `${m.id} was downloaded but not converted yet: run \`kimina model pull ${m.id}\` again to finish`,
    );
  }
  throw new ModelNotAvailable(
    folder
      ? `${m.dir} is not a model folder (expected config.json, tokenizer.json and onnx/model.onnx)`
      : `no model available: ${m.id} is not in ${modelsRoot(home)}; run \`kimina model pull ${m.id}\` (or set KIMINA_MODEL to a model folder)${cacheDir ? cacheHint(m.id, cacheDir) : ''}`,
  );
}

/** When the Hugging Face cache holds the model: the pull then copies it from there, no download. */
function cacheHint(id: string, cacheDir: string): string {
  try {
    const snapshot = findCachedSnapshot(id, 'main', cacheDir);
    return snapshot ? `; the Hugging Face cache has it (${snapshot.dir}), so the pull downloads nothing` : '';
  } catch {
    return '';
  }
}

/** A folder with the model's tokenizer files, when one is at hand locally (for counting tokens). */
export function findTokenizerDir(home: string, spec: string = DEFAULT_MODEL): string | undefined {
  try {
    const { dir } = locateModel(home, spec);
    for (const d of [dir, join(dir, CHECKPOINT_SUBDIR)]) if (existsSync(join(d, 'tokenizer.json'))) return d;
  } catch {
    /* not a valid id: nothing local */
  }
  return undefined;
}

export interface ModelEntry {
  id: string;
  dir: string;
  bytes: number;
  format: ModelFormat;
  isDefault: boolean;
  quantize?: Quantize;
}

/** Every model in the store, plus `defaultSpec` when it is a folder outside it; the default one marked. */
export function listModels(home: string, defaultSpec: string = DEFAULT_MODEL): ModelEntry[] {
  const root = modelsRoot(home);
  const def = (() => {
    try {
      return locateModel(home, defaultSpec).dir;
    } catch {
      return undefined;
    }
  })();
  const entries: ModelEntry[] = [];
  const add = (id: string, dir: string): void => {
    entries.push({
      id,
      dir,
      bytes: folderBytes(dir),
      format: detectFormat(dir),
      isDefault: dir === def,
      quantize: readManifest(dir)?.quantize,
    });
  };
  if (existsSync(root)) {
    for (const org of readdirSync(root, { withFileTypes: true })) {
      if (!org.isDirectory()) continue;
      for (const name of readdirSync(join(root, org.name), { withFileTypes: true })) {
        if (name.isDirectory()) add(`${org.name}/${name.name}`, join(root, org.name, name.name));
      }
    }
  }
  if (def && !entries.some((e) => e.dir === def) && existsSync(def) && isFolderSpec(defaultSpec)) add(def, def);
  return entries.sort((a, b) => a.id.localeCompare(b.id));
}

/** Files a checkpoint conversion needs: top-level configs, tokenizer files, chat template, safetensors. */
function isCheckpointFile(path: string): boolean {
  if (path.includes('/')) return false;
  return /\.(json|jinja|txt|safetensors)$/.test(path) && !/^(README|LICENSE)/i.test(path);
}

export interface PullEvent {
  stage: 'listing' | 'download' | 'convert' | 'done';
  /** download: bytes so far over all files; convert: converter's progress. */
  done?: number;
  total?: number;
  file?: string;
  message?: string;
}

export interface PullOptions extends HubOptions {
  /** KIMINA_HOME: the store is its models/ folder. */
  home: string;
  revision?: string;
  quantize?: Quantize;
  /** Required when the repository has no ONNX export in our layout. */
  convert?: ConvertCheckpoint;
  /** Convert again even when the store already holds a graph built from this commit. */
  force?: boolean;
  onEvent?: (e: PullEvent) => void;
  signal?: AbortSignal;
}

export interface PullResult {
  id: string;
  dir: string;
  manifest: Manifest;
  downloadedBytes: number;
  /** Bytes taken from the Hugging Face cache instead of the hub. */
  cachedBytes: number;
  /** The cache snapshot used, if any. */
  cacheSnapshot?: string;
  converted: boolean;
}

/** Places a cached blob at `target`: a hard link when the cache is on the same file system, else a copy. */
function placeFromCache(blob: string, target: string): void {
  mkdirSync(dirname(target), { recursive: true });
  if (existsSync(target) && statSync(target).ino === statSync(blob).ino) return;
  rmSync(target, { force: true });
  rmSync(`${target}.part`, { force: true });
  try {
    linkSync(blob, target);
  } catch {
    copyFileSync(blob, target);
  }
}

interface Fetched {
  downloaded: number;
  cached: number;
}

async function downloadAll(
  id: string,
  commit: string,
  files: HubFile[],
  dir: string,
  o: PullOptions,
  snapshot: CachedSnapshot | undefined,
): Promise<Fetched> {
  const total = files.reduce((s, f) => s + (f.size ?? 0), 0);
  let finished = 0;
  const got: Fetched = { downloaded: 0, cached: 0 };
  for (const file of files) {
    const blob = snapshot && cachedBlobFor(snapshot, file);
    if (blob) {
      placeFromCache(blob, join(dir, ...file.path.split('/')));
      got.cached += file.size ?? 0;
      finished += file.size ?? 0;
      o.onEvent?.({ stage: 'download', file: `${file.path} (from the Hugging Face cache)`, done: finished, total });
      continue;
    }
    await downloadFile(id, commit, file, dir, {
      ...o,
      onProgress: (p: DownloadProgress) =>
        o.onEvent?.({ stage: 'download', file: p.file, done: finished + p.bytes, total }),
    });
    got.downloaded += file.size ?? 0;
    finished += file.size ?? 0;
  }
  return got;
}

/**
 * Removes files under `dir` (or its `under` subfolder) that the listing does not name: shards of an
 * earlier commit must not be converted under the new manifest. Partial downloads of listed files stay.
 */
function pruneToListing(dir: string, files: HubFile[], under = ''): void {
  const keep = new Set(files.map((f) => f.path));
  const root = under ? join(dir, under) : dir;
  if (!existsSync(root)) return;
  const visit = (d: string): void => {
    for (const entry of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, entry.name);
      const rel = relative(dir, p).split(sep).join('/');
      if (entry.isDirectory()) visit(p);
      else if (
        !keep.has(rel) &&
        !(rel.endsWith('.part') && keep.has(rel.slice(0, -5))) &&
        !(rel.endsWith('.part.json') && keep.has(rel.slice(0, -10)))
      )
        rmSync(p, { force: true });
    }
  };
  visit(root);
}

/** The listing to pull: the hub's; the cache's when HF_HUB_OFFLINE is set or the hub cannot be reached. */
async function listForPull(
  id: string,
  revision: string,
  o: PullOptions,
): Promise<{ listing: RepoListing; snapshot?: CachedSnapshot; offline: boolean }> {
  const cached = o.hfHubCache ? findCachedSnapshot(id, revision, o.hfHubCache) : undefined;
  if (o.hfHubOffline) {
    if (!cached)
      throw new Error(
        `HF_HUB_OFFLINE is set and the Hugging Face cache (${o.hfHubCache ?? 'HF_HUB_CACHE: not given'}) has no ${id} at ${revision}; ${o.offlineHint}`,
      );
    return { listing: cachedListing(cached), snapshot: cached, offline: true };
  }
  try {
    const listing = await listRepoFiles(id, revision, o);
    // The cache's snapshot of exactly this commit (an older one may hold other files under the same names).
    const snapshot = listing.commit && o.hfHubCache ? findCachedSnapshot(id, listing.commit, o.hfHubCache) : undefined;
    return { listing, snapshot, offline: false };
  } catch (err) {
    if (cached && err instanceof HubUnreachable)
      return { listing: cachedListing(cached), snapshot: cached, offline: true };
    throw err;
  }
}

/**
 * Downloads a model from the hub into the store. A repository that ships onnx/model.onnx in our layout
 * is used as is; otherwise its safetensors checkpoint goes to `checkpoint/` and is converted
 * (4-bit by default, for CPU). Interrupted downloads resume on the next pull.
 */
export async function pullModel(id: string, o: PullOptions): Promise<PullResult> {
  const revision = o.revision ?? 'main';
  const hubOptions: PullOptions = {
    ...o,
    offlineHint:
      o.offlineHint ?? `copy a model folder to ${storeDirOf(o.home, id)} or set KIMINA_MODEL to a local folder`,
  };
  o.onEvent?.({ stage: 'listing', message: `listing ${id}@${revision}` });
  const { listing, snapshot, offline } = await listForPull(id, revision, hubOptions);
  if (snapshot)
    o.onEvent?.({
      stage: 'listing',
      message: `${offline ? 'offline: using' : 'using'} the Hugging Face cache ${snapshot.dir} (commit ${snapshot.commit.slice(0, 12)})`,
    });
  const dir = storeDirOf(o.home, id);
  mkdirInside(modelsRoot(o.home), dir); // files in it are replaced and deleted: it must lie in the store, symlinks resolved
  const release = takePullLock(dir, id);
  try {
    return await pullInto(dir, id, revision, listing, o, hubOptions, snapshot);
  } finally {
    release();
  }
}

/** One pull per model folder at a time: a lock file holding the pid, taken over when that process is gone. */
function takePullLock(dir: string, id: string): () => void {
  const lock = join(dir, '.pull.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' });
      return () => rmSync(lock, { force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const pid = Number(readFileSync(lock, 'utf8'));
      if (Number.isInteger(pid) && pid > 0 && pid !== process.pid && isAlive(pid)) {
        throw new Error(`another \`kimina model pull\` of ${id} is running (pid ${pid}); wait for it or stop it`);
      }
      rmSync(lock, { force: true }); // stale: its process is gone
    }
  }
  throw new Error(`cannot lock ${dir} for pulling ${id}`);
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function pullInto(
  dir: string,
  id: string,
  revision: string,
  listing: RepoListing,
  o: PullOptions,
  hubOptions: PullOptions,
  snapshot: CachedSnapshot | undefined,
): Promise<PullResult> {
  const commit = listing.commit ?? revision;
  const paths = new Set(listing.files.map((f) => f.path));
  // Both ways end alike: the manifest written last (a pull stopped before it claims nothing), then the result.
  const finish = (manifest: Manifest, got: { downloaded: number; cached: number }, converted: boolean): PullResult => {
    writeFileSync(join(dir, MANIFEST), JSON.stringify(manifest, null, 2) + '\n');
    o.onEvent?.({ stage: 'done', message: dir });
    return {
      id,
      dir,
      manifest,
      downloadedBytes: got.downloaded,
      cachedBytes: got.cached,
      cacheSnapshot: snapshot?.dir,
      converted,
    };
  };

  // 1. A ready ONNX export in our layout? Fetch model.onnx (small: weights are external) and look.
  // Our graphs keep weights in external data, so model.onnx is small; a big one is another layout.
  const onnx = listing.files.find((f) => f.path === 'onnx/model.onnx');
  if (onnx && (onnx.size === undefined || onnx.size < 64 * 1024 * 1024)) {
    await downloadAll(id, commit, [onnx], dir, { ...hubOptions, onEvent: undefined }, snapshot); // no progress: it is small
    const path = join(dir, 'onnx', 'model.onnx');
    if (readFileSync(path).includes(ONNX_LAYOUT_MARKER)) {
      const files = listing.files.filter(
        (f) => f.path.startsWith('onnx/') || (isCheckpointFile(f.path) && !f.path.endsWith('.safetensors')),
      );
      const got = await downloadAll(id, commit, files, dir, hubOptions, snapshot);
      pruneToListing(dir, files, 'onnx');
      const manifest: Manifest = {
        id,
        revision,
        commit: listing.commit,
        source: 'hub-onnx',
        files,
        pulledAt: new Date().toISOString(),
      };
      return finish(manifest, got, false);
    }
    rmSync(join(dir, 'onnx'), { recursive: true, force: true }); // another layout (Optimum, …): convert instead
  }

  // 2. The checkpoint, then our conversion.
  const files = listing.files.filter((f) => isCheckpointFile(f.path));
  if (!files.some((f) => f.path.endsWith('.safetensors'))) {
    throw new Error(
      `${id}@${revision} has neither an ONNX export in Kimina's layout nor safetensors weights to convert (files: ${[...paths].slice(0, 20).join(', ')})`,
    );
  }
  const checkpoint = join(dir, CHECKPOINT_SUBDIR);
  const got = await downloadAll(id, commit, files, checkpoint, hubOptions, snapshot);
  pruneToListing(checkpoint, files);
  const quantize = o.quantize ?? 'q4';
  const previous = readManifest(dir);
  const upToDate =
    !o.force &&
    previous?.source === 'converted' &&
    previous.commit === listing.commit &&
    previous.quantize === quantize &&
    detectFormat(dir) === 'onnx' &&
    existsSync(join(dir, ONNX_KV16_FILE)) && // converted before the float16-cache graph existed: convert again
    graphHasSharedPrefix(dir); // converted before shared-prefix attention existed: convert again
  if (!upToDate) {
    if (!o.convert)
      throw new Error(`${id} has no ONNX export in Kimina's layout and no converter is available to build one`);
    o.onEvent?.({
      stage: 'convert',
      message: `converting ${id} to ONNX (${quantize === 'q4' ? '4-bit weights, for CPU' : 'fp32'})`,
    });
    rmSync(join(dir, MANIFEST), { force: true });
    await o.convert(checkpoint, dir, {
      quantize,
      onProgress: (p) => o.onEvent?.({ stage: 'convert', done: p.done, total: p.total, message: p.stage }),
    });
    for (const extra of ['chat_template.jinja', 'special_tokens_map.json']) {
      if (existsSync(join(checkpoint, extra)) && !existsSync(join(dir, extra)))
        copyFileSync(join(checkpoint, extra), join(dir, extra));
    }
    if (detectFormat(dir) !== 'onnx')
      throw new Error(`converting ${id} did not produce ${join(dir, 'onnx', 'model.onnx')}`);
  }
  const manifest: Manifest = {
    id,
    revision,
    commit: listing.commit,
    source: 'converted',
    quantize,
    files,
    pulledAt: new Date().toISOString(),
  };
  return finish(manifest, got, !upToDate);
}
