// The Hugging Face cache as huggingface_hub itself writes it: `snapshot_download` (from the trainer's Python
// environment, test/trainer/.venv) downloads from the stand-in hub through HF_ENDPOINT into a temporary
// HF_HUB_CACHE, and `pullModel` then takes the model from there, offline included, without a download.
// Also: a `.part` resumed only for the same commit, files gone from a new listing removed before
// conversion, and the checksum lookup following a relative redirect.
import { test, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { downloadFile, hubOptionsOf, listRepoFiles } from '../../backend/model/hub';
import { cachedListing, findCachedSnapshot } from '../../backend/model/hubCache';
import * as store from '../../backend/model/modelStore';
import {
  CHECKPOINT_SUBDIR,
  ONNX_LAYOUT_MARKER,
  readManifest,
  type ConvertCheckpoint,
} from '../../backend/model/modelStore';
import { kiminaHome, readSettings } from '../../backend/settings/settings';
import { startStandInHub, type StandInHub } from './standInHub';

// The settings as the CLI and the language server hand them down, read from this process's environment.
const pullModel = (id: string, o: Partial<store.PullOptions> = {}) =>
  store.pullModel(id, { ...hubOptionsOf(readSettings()), home: kiminaHome(), ...o });
const storeDirOf = (id: string) => store.storeDirOf(kiminaHome(), id);
const resolveModelDir = (spec: string) => store.resolveModelDir(kiminaHome(), spec, readSettings().hfHubCache);
const hubCacheDir = () => readSettings().hfHubCache;

const root = join(__dirname, '..', '..');
const python = join(root, 'test', 'trainer', '.venv', 'bin', 'python');
const noVenv = existsSync(python)
  ? false
  : 'no trainer venv at test/trainer/.venv (CI creates it before the unit suite; locally symlink it, see HELPERS)';

const REPO = 'AI-MO/Kimina-Prover-RL-1.7B';
const weights = Buffer.alloc(200_000);
for (let i = 0; i < weights.length; i++) weights[i] = (i * 31) % 253;
const repoAt = (commit: string, files: Record<string, Buffer | string>) => ({
  commit,
  files,
  lfs: Object.keys(files).filter((f) => f.endsWith('.safetensors')),
});
const COMMIT_A = 'a1'.repeat(20);
const COMMIT_B = 'b2'.repeat(20);
const baseFiles = {
  'config.json': JSON.stringify({ model_type: 'qwen3', hidden_size: 8 }),
  'tokenizer.json': '{"model":{"type":"BPE"}}',
  'tokenizer_config.json': '{"chat_template":"{{ messages }}"}',
};

/** TEST DOUBLE for backend/model/onnx/convert.ts: records the checkpoint files it was given. */
const recordingConvert =
  (seen: string[][]): ConvertCheckpoint =>
  async (src, out) => {
    seen.push(readdirSync(src).sort());
    mkdirSync(join(out, 'onnx'), { recursive: true });
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json'])
      writeFileSync(join(out, f), readFileSync(join(src, f)));
    writeFileSync(join(out, 'onnx', 'model.onnx'), `graph ${ONNX_LAYOUT_MARKER}`);
    writeFileSync(join(out, 'onnx', 'model.kv16.onnx'), 'float16-cache graph');
  };

let hub: StandInHub | undefined;
let home: string;
const saved = { ...process.env };
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'kimina-hfcache-'));
  process.env.KIMINA_HOME = join(home, 'kimina');
  process.env.HF_HUB_CACHE = join(home, 'hf', 'hub');
});
afterEach(async () => {
  await hub?.close();
  hub = undefined;
  for (const k of [
    'KIMINA_HOME',
    'HF_HUB_CACHE',
    'HF_HOME',
    'HF_HUB_OFFLINE',
    'TRANSFORMERS_OFFLINE',
    'XDG_CACHE_HOME',
    'HUGGINGFACE_HUB_CACHE',
  ])
    if (saved[k] === undefined) delete process.env[k];
    else process.env[k] = saved[k];
});

/** huggingface_hub's own snapshot_download into HF_HUB_CACHE, from the stand-in hub (async: the hub is in this process). */
function snapshotDownload(endpoint: string, cache: string, repo: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(
      python,
      ['-c', 'import sys; from huggingface_hub import snapshot_download; print(snapshot_download(sys.argv[1]))', repo],
      {
        env: {
          PATH: process.env.PATH,
          HOME: home,
          HF_ENDPOINT: endpoint,
          HF_HUB_CACHE: cache,
          HF_HUB_DISABLE_TELEMETRY: '1',
          HF_HUB_DISABLE_PROGRESS_BARS: '1',
        },
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (c) => (out += c));
    child.stderr.on('data', (c) => (err += c));
    child.on('close', (code) => (code === 0 ? resolve(out.trim()) : reject(new Error(`snapshot_download: ${err}`))));
  });
}

test(
  'a model huggingface_hub cached is pulled offline from the cache: no request, no download',
  { skip: noVenv },
  async () => {
    hub = await startStandInHub({
      repos: { [REPO]: repoAt(COMMIT_A, { ...baseFiles, 'model.safetensors': weights }) },
    });
    const cache = process.env.HF_HUB_CACHE!;
    const snapshotDir = await snapshotDownload(hub.endpoint, cache, REPO);
    assert.equal(snapshotDir, join(cache, 'models--AI-MO--Kimina-Prover-RL-1.7B', 'snapshots', COMMIT_A));
    // What we read of the library's layout: refs/main -> the commit, the snapshot's links -> blobs named by checksum.
    const snapshot = findCachedSnapshot(REPO, 'main', hubCacheDir())!;
    assert.equal(snapshot.commit, COMMIT_A);
    const listed = await listRepoFiles(REPO, 'main', { hfEndpoint: hub.endpoint });
    const fromCache = cachedListing(snapshot);
    assert.deepEqual(
      fromCache.files.map((f) => [f.path, f.size, f.sha256 ?? f.gitOid]),
      listed.files.map((f) => [f.path, f.size, f.sha256 ?? f.gitOid]),
    );

    assert.throws(
      () => resolveModelDir(REPO),
      /the Hugging Face cache has it \(.*snapshots.*\), so the pull downloads nothing/,
    );
    hub.log.length = 0;
    process.env.HF_HUB_OFFLINE = '1';
    const seen: string[][] = [];
    const events: string[] = [];
    const r = await pullModel(REPO, {
      hfEndpoint: hub.endpoint,
      convert: recordingConvert(seen),
      onEvent: (e) => events.push(e.message ?? e.file ?? ''),
    });
    assert.equal(hub.log.length, 0, 'offline: the hub is never contacted');
    assert.equal(r.downloadedBytes, 0);
    assert.equal(r.cachedBytes, weights.length + Object.values(baseFiles).reduce((s, t) => s + t.length, 0));
    assert.equal(r.manifest.commit, COMMIT_A);
    assert.ok(
      events.some((m) => /offline: using the Hugging Face cache .*models--AI-MO--Kimina-Prover-RL-1\.7B/.test(m)),
    );
    assert.deepEqual(readFileSync(join(storeDirOf(REPO), CHECKPOINT_SUBDIR, 'model.safetensors')), weights);
    assert.equal(seen.length, 1);
    assert.equal(resolveModelDir(REPO), storeDirOf(REPO));

    // Online, the same commit in the cache: only the listing is asked of the hub, no file is downloaded.
    delete process.env.HF_HUB_OFFLINE;
    hub.log.length = 0;
    const again = await pullModel(REPO, { hfEndpoint: hub.endpoint, convert: recordingConvert(seen), force: true });
    assert.deepEqual(
      hub.log.map((l) => l.path),
      [`/api/models/${REPO}/revision/main`],
    );
    assert.equal(again.downloadedBytes, 0);
  },
);

/** huggingface_hub 2.4.0's own move of a repo blob into the cache-wide shared store (utils/_shared_blobs.py
 * publish_blob_to_shared_store, what a Xet download does): `<cache>/blobs/<xx>/<xet hash>`, the repo's
 * blobs/<etag> becoming a relative link to it. The stand-in hub serves no Xet, so the library is asked directly. */
function publishToSharedStore(cache: string, blob: string, xetHash: string, size: number): Promise<void> {
  const code =
    'import sys; from huggingface_hub.utils._shared_blobs import publish_blob_to_shared_store as p; ' +
    'assert p(blob_path=sys.argv[1], xet_hash=sys.argv[2], cache_dir=sys.argv[3], expected_size=int(sys.argv[4]))';
  return new Promise((resolve, reject) => {
    const child = spawn(python, ['-c', code, blob, xetHash, cache, String(size)], {
      env: { PATH: process.env.PATH, HOME: home, HF_HUB_CACHE: cache, HF_HUB_DISABLE_TELEMETRY: '1' },
    });
    let err = '';
    child.stderr.on('data', (c) => (err += c));
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`publish_blob_to_shared_store: ${err}`))));
  });
}

test(
  "a cached blob in huggingface_hub's shared store (Xet files) is still found by its checksum, offline",
  { skip: noVenv },
  async () => {
    hub = await startStandInHub({
      repos: { [REPO]: repoAt(COMMIT_A, { ...baseFiles, 'model.safetensors': weights }) },
    });
    const cache = process.env.HF_HUB_CACHE!;
    await snapshotDownload(hub.endpoint, cache, REPO);
    const listed = await listRepoFiles(REPO, 'main', { hfEndpoint: hub.endpoint });
    const sha = listed.files.find((f) => f.path === 'model.safetensors')!.sha256!;
    const repoBlob = join(cache, 'models--AI-MO--Kimina-Prover-RL-1.7B', 'blobs', sha);
    const xetHash = 'e7'.repeat(32); // the store names content by its Xet hash, not its sha256
    await publishToSharedStore(cache, repoBlob, xetHash, weights.length);
    assert.ok(lstatSync(repoBlob).isSymbolicLink());
    assert.equal(realpathSync(repoBlob), realpathSync(join(cache, 'blobs', xetHash.slice(0, 2), xetHash)));

    const fromCache = cachedListing(findCachedSnapshot(REPO, 'main', hubCacheDir())!);
    assert.deepEqual(
      fromCache.files.map((f) => [f.path, f.size, f.sha256 ?? f.gitOid]),
      listed.files.map((f) => [f.path, f.size, f.sha256 ?? f.gitOid]),
    );
    hub.log.length = 0;
    process.env.HF_HUB_OFFLINE = '1';
    const r = await pullModel(REPO, { hfEndpoint: hub.endpoint, convert: recordingConvert([]) });
    assert.equal(hub.log.length, 0);
    assert.equal(r.downloadedBytes, 0);
    assert.deepEqual(readFileSync(join(storeDirOf(REPO), CHECKPOINT_SUBDIR, 'model.safetensors')), weights);
  },
);

test('the cache folder as huggingface_hub finds it: HF_HUB_CACHE, HF_HOME/hub, XDG_CACHE_HOME, ~/.cache', () => {
  delete process.env.HF_HUB_CACHE;
  process.env.HF_HOME = join(home, 'hfhome');
  assert.equal(hubCacheDir(), join(home, 'hfhome', 'hub'));
  delete process.env.HF_HOME;
  process.env.XDG_CACHE_HOME = join(home, 'xdg');
  assert.equal(hubCacheDir(), join(home, 'xdg', 'huggingface', 'hub'));
  process.env.HUGGINGFACE_HUB_CACHE = join(home, 'legacy');
  assert.equal(hubCacheDir(), join(home, 'legacy'));
  process.env.HF_HUB_CACHE = join(home, 'new');
  assert.equal(hubCacheDir(), join(home, 'new'));
  // Offline as huggingface_hub reads it (constants.py: HF_HUB_OFFLINE or TRANSFORMERS_OFFLINE).
  delete process.env.HF_HUB_OFFLINE;
  assert.equal(readSettings().hfHubOffline, false);
  process.env.TRANSFORMERS_OFFLINE = '1';
  assert.equal(readSettings().hfHubOffline, true);
});

test('offline with no cached model: a clear error naming the cache, and the hub is not contacted', async () => {
  hub = await startStandInHub({ repos: { [REPO]: repoAt(COMMIT_A, { ...baseFiles, 'model.safetensors': weights }) } });
  process.env.HF_HUB_OFFLINE = '1';
  await assert.rejects(
    pullModel(REPO, { hfEndpoint: hub.endpoint }),
    /HF_HUB_OFFLINE is set and the Hugging Face cache \(.*hf\/hub\) has no AI-MO\/Kimina-Prover-RL-1\.7B at main/,
  );
  assert.deepEqual(hub.log, []);
});

test('a .part is resumed only for the same commit', async () => {
  const files = { ...baseFiles, 'model.safetensors': weights };
  hub = await startStandInHub({ repos: { [REPO]: repoAt(COMMIT_A, files) } });
  const dir = join(home, 'dl');
  const listing = await listRepoFiles(REPO, 'main', { hfEndpoint: hub.endpoint });
  const file = listing.files.find((f) => f.path === 'model.safetensors')!;
  hub.cutNext('model.safetensors', 50_000);
  await assert.rejects(
    downloadFile(REPO, COMMIT_A, file, dir, { hfEndpoint: hub.endpoint }),
    /interrupted|ended early/,
  );
  assert.ok(existsSync(join(dir, 'model.safetensors.part')));
  // Same commit: resumed with a Range request.
  hub.cutNext('model.safetensors', 50_000);
  await assert.rejects(downloadFile(REPO, COMMIT_A, file, dir, { hfEndpoint: hub.endpoint }));
  assert.match(hub.log.filter((l) => l.path.endsWith('model.safetensors')).at(-1)!.range ?? '', /^bytes=\d+-$/);
  // The repository moved to another commit (new weights): the old bytes are dropped, the file fetched whole.
  await hub.close();
  const newWeights = Buffer.from(weights).reverse();
  hub = await startStandInHub({ repos: { [REPO]: repoAt(COMMIT_B, { ...files, 'model.safetensors': newWeights }) } });
  const listingB = await listRepoFiles(REPO, 'main', { hfEndpoint: hub.endpoint });
  const fileB = listingB.files.find((f) => f.path === 'model.safetensors')!;
  await downloadFile(REPO, COMMIT_B, fileB, dir, { hfEndpoint: hub.endpoint });
  const gets = hub.log.filter((l) => l.method === 'GET' && l.path.endsWith('model.safetensors'));
  assert.equal(gets.length, 1);
  assert.equal(gets[0].range, undefined, 'no Range: the .part of commit A was not resumed');
  assert.deepEqual(readFileSync(join(dir, 'model.safetensors')), newWeights);
  assert.ok(!existsSync(join(dir, 'model.safetensors.part.json')));
});

test('checkpoint files missing from a new listing are removed before conversion', async () => {
  const half = weights.length / 2;
  const sharded = {
    ...baseFiles,
    'model-00001-of-00002.safetensors': weights.subarray(0, half),
    'model-00002-of-00002.safetensors': weights.subarray(half),
    'model.safetensors.index.json': '{"weight_map":{}}',
  };
  hub = await startStandInHub({ repos: { [REPO]: repoAt(COMMIT_A, sharded) } });
  const seen: string[][] = [];
  await pullModel(REPO, { hfEndpoint: hub.endpoint, convert: recordingConvert(seen) });
  assert.ok(seen[0].includes('model-00001-of-00002.safetensors'));
  await hub.close();
  hub = await startStandInHub({ repos: { [REPO]: repoAt(COMMIT_B, { ...baseFiles, 'model.safetensors': weights }) } });
  await pullModel(REPO, { hfEndpoint: hub.endpoint, convert: recordingConvert(seen) });
  assert.deepEqual(seen[1], ['config.json', 'model.safetensors', 'tokenizer.json', 'tokenizer_config.json']);
  assert.equal(readManifest(storeDirOf(REPO))?.commit, COMMIT_B);
});

test('the checksum lookup follows a relative redirect (a renamed repository) and so catches wrong bytes', async () => {
  const OLD = 'AI-MO/Old-Name';
  hub = await startStandInHub({
    repos: { [REPO]: repoAt(COMMIT_A, { ...baseFiles, 'model.safetensors': weights }) },
    renamed: { [OLD]: REPO },
    namesOnly: true,
    noTree: true,
  });
  const listing = await listRepoFiles(OLD, 'main', { hfEndpoint: hub.endpoint });
  const file = listing.files.find((f) => f.path === 'model.safetensors')!;
  assert.equal(file.sha256, undefined, 'names only: the checksum must come from the resolve headers');
  hub.corrupt('model.safetensors', Buffer.alloc(weights.length, 1));
  await assert.rejects(
    downloadFile(OLD, COMMIT_A, file, join(home, 'dl'), { hfEndpoint: hub.endpoint }),
    /checksum mismatch for model\.safetensors/,
  );
  const heads = hub.log.filter((l) => l.method === 'HEAD').map((l) => l.path);
  assert.deepEqual(heads, [
    `/${OLD}/resolve/${COMMIT_A}/model.safetensors`,
    `/${REPO}/resolve/${COMMIT_A}/model.safetensors`,
  ]);
});
