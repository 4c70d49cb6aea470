import { test, beforeEach, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { downloadFile, hubOptionsOf, listRepoFiles } from '../../backend/model/hub';
import * as store from '../../backend/model/modelStore';
import {
  CHECKPOINT_SUBDIR,
  DEFAULT_MODEL,
  ONNX_LAYOUT_MARKER,
  readManifest,
  type ConvertCheckpoint,
  type PullEvent,
} from '../../backend/model/modelStore';
import { kiminaHome, readSettings } from '../../backend/settings/settings';
import { io } from '../../backend/model/onnx/qwen3Graph';
import { startStandInHub, type StandInHub } from './standInHub';

// The commands read the settings and hand them down; these tests read them from the environment they set.
const pullModel = (id: string, o: Partial<store.PullOptions> = {}) =>
  store.pullModel(id, { ...hubOptionsOf(readSettings()), home: kiminaHome(), ...o });
const storeDirOf = (id: string) => store.storeDirOf(kiminaHome(), id);
const locateModel = (spec?: string) => store.locateModel(kiminaHome(), spec);
const resolveModelDir = (spec?: string) => store.resolveModelDir(kiminaHome(), spec);
const listModels = (defaultSpec?: string) => store.listModels(kiminaHome(), defaultSpec);

const REPO = 'AI-MO/Kimina-Prover-RL-0.6B';
const weights = Buffer.alloc(300_000);
for (let i = 0; i < weights.length; i++) weights[i] = (i * 7919) % 251;
const checkpoint = {
  commit: 'c0ffee'.padEnd(40, '0'),
  files: {
    'config.json': JSON.stringify({ model_type: 'qwen3', hidden_size: 8 }),
    'generation_config.json': '{}',
    'tokenizer.json': '{"model":{"type":"BPE"}}',
    'tokenizer_config.json': '{"chat_template":"{{ messages }}"}',
    'model.safetensors': weights,
    'README.md': '# card',
    'pytorch_model.bin': Buffer.alloc(1000),
    'onnx/model_quantized.onnx': 'optimum export, not ours',
  },
  lfs: ['model.safetensors', 'pytorch_model.bin'],
};

/** TEST DOUBLE for backend/model/onnx/convert.ts: writes a folder in the engine's layout without real weights. */
const standInConvert =
  (calls: string[]): ConvertCheckpoint =>
  async (src, out, { quantize, onProgress }) => {
    calls.push(`${src} -> ${out} (${quantize})`);
    assert.ok(existsSync(join(src, 'model.safetensors')));
    mkdirSync(join(out, 'onnx'), { recursive: true });
    for (const f of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json'])
      writeFileSync(join(out, f), readFileSync(join(src, f)));
    onProgress?.({ done: 1, total: 2, stage: 'layers' });
    // the current graph's markers: our layout, and the shared-prefix input (modelFolder graphHasSharedPrefix)
    writeFileSync(join(out, 'onnx', 'model.onnx'), `graph ${ONNX_LAYOUT_MARKER} ${io.sharedBias}`);
    writeFileSync(join(out, 'onnx', 'model.kv16.onnx'), 'float16-cache graph'); // the real converter writes both
    onProgress?.({ done: 2, total: 2, stage: 'written' });
  };

let hub: StandInHub;
let home: string;
beforeEach(async () => {
  await hub?.close();
  home = mkdtempSync(join(tmpdir(), 'kimina-store-'));
  process.env.KIMINA_HOME = home;
  process.env.HF_HUB_CACHE = join(home, 'hf-cache'); // never the user's real cache
  hub = await startStandInHub({ repos: { [REPO]: checkpoint } });
});
after(async () => {
  await hub?.close();
  delete process.env.KIMINA_HOME;
  delete process.env.HF_HUB_CACHE;
});

test('listing: sizes, LFS sha256 and git ids from the revision API; the tree API (paged) when names only', async () => {
  const listing = await listRepoFiles(REPO, 'main', { hfEndpoint: hub.endpoint });
  assert.equal(listing.commit, checkpoint.commit);
  const st = listing.files.find((f) => f.path === 'model.safetensors')!;
  assert.equal(st.size, weights.length);
  assert.equal(st.sha256, createHash('sha256').update(weights).digest('hex'));
  assert.match(listing.files.find((f) => f.path === 'config.json')!.gitOid!, /^[0-9a-f]{40}$/);
  await hub.close();
  hub = await startStandInHub({ repos: { [REPO]: checkpoint }, namesOnly: true, treePageSize: 3 });
  const tree = await listRepoFiles(REPO, 'main', { hfEndpoint: hub.endpoint });
  assert.equal(tree.files.length, Object.keys(checkpoint.files).length);
  assert.deepEqual(
    tree.files.find((f) => f.path === 'model.safetensors'),
    st,
  );
  assert.ok(hub.log.filter((r) => r.path.includes('/tree/')).length >= 3, 'followed the Link pages');
});

test('pull: downloads the checkpoint (no README, .bin or foreign ONNX), converts to 4-bit, writes a manifest', async () => {
  const calls: string[] = [];
  const events: PullEvent[] = [];
  const result = await pullModel(REPO, {
    hfEndpoint: hub.endpoint,
    convert: standInConvert(calls),
    onEvent: (e) => events.push(e),
  });
  const dir = storeDirOf(REPO);
  assert.equal(result.dir, dir);
  assert.equal(dir, join(home, 'models', 'AI-MO', 'Kimina-Prover-RL-0.6B'));
  assert.deepEqual(readdirSync(join(dir, CHECKPOINT_SUBDIR)).sort(), [
    'config.json',
    'generation_config.json',
    'model.safetensors',
    'tokenizer.json',
    'tokenizer_config.json',
  ]);
  assert.deepEqual(readFileSync(join(dir, CHECKPOINT_SUBDIR, 'model.safetensors')), weights);
  assert.deepEqual(calls, [`${join(dir, CHECKPOINT_SUBDIR)} -> ${dir} (q4)`]);
  assert.equal(readManifest(dir)?.quantize, 'q4');
  assert.equal(readManifest(dir)?.commit, checkpoint.commit);
  assert.equal(resolveModelDir(REPO), dir);
  const downloads = events.filter((e) => e.stage === 'download');
  assert.equal(downloads.at(-1)!.done, downloads.at(-1)!.total);
  assert.ok(events.some((e) => e.stage === 'convert' && e.done === 2));
  assert.ok(!hub.log.some((r) => r.path.endsWith('README.md') || r.path.endsWith('.bin')));
  assert.ok(
    hub.log.filter((r) => r.path.includes('/resolve/')).every((r) => r.path.includes(`/resolve/${checkpoint.commit}/`)),
    'files pinned to the listed commit',
  );

  // A second pull finds everything in place: no downloads, no conversion.
  const before = hub.log.length;
  const again = await pullModel(REPO, { hfEndpoint: hub.endpoint, convert: standInConvert(calls) });
  assert.equal(again.converted, false);
  assert.equal(calls.length, 1);
  assert.ok(hub.log.slice(before).every((r) => !r.path.includes('/resolve/')));
});

test('resume: an interrupted transfer continues from the .part file with a Range request', async () => {
  hub.cutNext('model.safetensors', 100_000);
  const calls: string[] = [];
  await assert.rejects(
    pullModel(REPO, { hfEndpoint: hub.endpoint, convert: standInConvert(calls) }),
    /interrupted|ended early/,
  );
  const part = join(storeDirOf(REPO), CHECKPOINT_SUBDIR, 'model.safetensors.part');
  const kept = statSync(part).size;
  assert.ok(kept > 0 && kept < weights.length, `partial file kept (${kept} bytes)`);
  await pullModel(REPO, { hfEndpoint: hub.endpoint, convert: standInConvert(calls) });
  const ranged = hub.log.filter((r) => r.path.endsWith('model.safetensors') && r.range);
  assert.deepEqual(
    ranged.map((r) => r.range),
    [`bytes=${kept}-`],
  );
  assert.deepEqual(readFileSync(join(storeDirOf(REPO), CHECKPOINT_SUBDIR, 'model.safetensors')), weights);
  assert.ok(!existsSync(part));
});

test('checksum mismatch: the damaged file is deleted and the error says so', async () => {
  const bad = Buffer.from(weights);
  bad[1234] ^= 0xff;
  hub.corrupt('model.safetensors', bad);
  await assert.rejects(
    pullModel(REPO, { hfEndpoint: hub.endpoint, convert: standInConvert([]) }),
    /checksum mismatch for model.safetensors of AI-MO\/Kimina-Prover-RL-0.6B: expected sha256 [0-9a-f]{64}, got [0-9a-f]{64}; the damaged download was deleted/,
  );
  const ck = join(storeDirOf(REPO), CHECKPOINT_SUBDIR);
  assert.ok(!existsSync(join(ck, 'model.safetensors')) && !existsSync(join(ck, 'model.safetensors.part')));
  // Non-LFS files are checked against their git blob id.
  hub.corrupt('config.json', Buffer.from('{"tampered":true}'));
  const listing = await listRepoFiles(REPO, 'main', { hfEndpoint: hub.endpoint });
  const cfg = { ...listing.files.find((f) => f.path === 'config.json')!, size: '{"tampered":true}'.length };
  await assert.rejects(
    downloadFile(REPO, 'main', cfg, mkdtempSync(join(tmpdir(), 'kimina-dl-')), { hfEndpoint: hub.endpoint }),
    /checksum mismatch for config.json.*git blob/,
  );
});

test('a repository that ships ONNX in our layout is used without conversion', async () => {
  await hub.close();
  hub = await startStandInHub({
    repos: {
      'me/ready': {
        commit: 'a'.repeat(40),
        files: {
          'config.json': '{}',
          'tokenizer.json': '{}',
          'tokenizer_config.json': '{}',
          'model.safetensors': 'big weights we do not need',
          'onnx/model.onnx': `header ${ONNX_LAYOUT_MARKER} rest`,
          'onnx/model.onnx_data': Buffer.alloc(5000, 1),
        },
      },
    },
  });
  const r = await pullModel('me/ready', { hfEndpoint: hub.endpoint });
  assert.equal(r.converted, false);
  assert.equal(r.manifest.source, 'hub-onnx');
  assert.ok(existsSync(join(r.dir, 'onnx', 'model.onnx_data')));
  assert.ok(!existsSync(join(r.dir, 'model.safetensors')));
  assert.equal(resolveModelDir('me/ready'), r.dir);
});

test('hub errors: offline, unknown repo, gated repo with and without HF_TOKEN, bad ids, no weights', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  await assert.rejects(
    pullModel(REPO, { hfEndpoint: `http://127.0.0.1:${port}` }),
    (e: Error) =>
      e.message.startsWith(`cannot reach 127.0.0.1:${port}: ECONNREFUSED`) &&
      e.message.includes(`copy a model folder to ${storeDirOf(REPO)} or set KIMINA_MODEL to a local folder`),
  );
  process.env.HF_HUB_OFFLINE = '1';
  try {
    await assert.rejects(
      pullModel(REPO, { hfEndpoint: hub.endpoint }),
      /HF_HUB_OFFLINE is set and the Hugging Face cache \(.*hf-cache\) has no AI-MO\/Kimina-Prover-RL-0\.6B at main; copy a model folder to/,
    );
  } finally {
    delete process.env.HF_HUB_OFFLINE;
  }
  await assert.rejects(
    pullModel('nobody/nothing', { hfEndpoint: hub.endpoint }),
    /has no model nobody\/nothing at revision main \(HTTP 404/,
  );
  await assert.rejects(pullModel(REPO, { hfEndpoint: hub.endpoint, revision: 'v9' }), /at revision v9 \(HTTP 404/);
  await assert.rejects(pullModel('../etc', { hfEndpoint: hub.endpoint }), /not a Hugging Face model id/);
  await hub.close();
  hub = await startStandInHub({
    repos: {
      'gated/m': { ...checkpoint, token: 'hf_secret' },
      'empty/m': { commit: 'b'.repeat(40), files: { 'config.json': '{}' } },
    },
  });
  await assert.rejects(
    pullModel('gated/m', { hfEndpoint: hub.endpoint, hfToken: 'wrong' }),
    /refused access to gated\/m \(HTTP 401.*set HF_TOKEN/,
  );
  process.env.HF_TOKEN = 'hf_secret';
  try {
    const r = await pullModel('gated/m', { hfEndpoint: hub.endpoint, convert: standInConvert([]) });
    assert.equal(r.converted, true);
    assert.ok(hub.log.filter((l) => l.path.includes('/resolve/')).every((l) => l.authorization === 'Bearer hf_secret'));
  } finally {
    delete process.env.HF_TOKEN;
  }
  await assert.rejects(
    pullModel('empty/m', { hfEndpoint: hub.endpoint }),
    /has neither an ONNX export in Kimina's layout nor safetensors weights/,
  );
});

test('list and resolve: formats, sizes, default marker, folder paths, clear errors', async () => {
  assert.deepEqual(listModels(), []);
  assert.throws(
    () => resolveModelDir(),
    new RegExp(`no model available: ${DEFAULT_MODEL} is not in .*; run \`kimina model pull ${DEFAULT_MODEL}\``),
  );
  await pullModel(REPO, { hfEndpoint: hub.endpoint, convert: standInConvert([]) });
  const half = storeDirOf('someone/half');
  mkdirSync(join(half, CHECKPOINT_SUBDIR), { recursive: true });
  writeFileSync(join(half, CHECKPOINT_SUBDIR, 'model.safetensors'), 'x');
  const list = listModels();
  assert.deepEqual(
    list.map((m) => [m.id, m.format, m.isDefault]),
    [
      [REPO, 'onnx', true],
      ['someone/half', 'checkpoint', false],
    ],
  );
  assert.ok(list[0].bytes > weights.length);
  assert.equal(list[0].quantize, 'q4');
  assert.throws(() => resolveModelDir('someone/half'), /someone\/half was downloaded but not converted yet/);
  // A folder given as KIMINA_MODEL, outside the store.
  const folder = mkdtempSync(join(tmpdir(), 'kimina-folder-'));
  mkdirSync(join(folder, 'onnx'));
  writeFileSync(join(folder, 'config.json'), '{}');
  writeFileSync(join(folder, 'onnx', 'model.onnx'), 'g');
  assert.equal(resolveModelDir(folder), folder);
  assert.equal(locateModel(folder).format, 'onnx');
  const withFolder = listModels(folder);
  assert.deepEqual(
    withFolder.filter((m) => m.isDefault).map((m) => m.dir),
    [folder],
  );
  assert.throws(() => resolveModelDir(join(folder, 'missing')), /does not exist/);
  assert.throws(() => resolveModelDir(join(folder, 'onnx')), /is not a model folder/);
});

test('one pull per model at a time; a stale lock is taken over; a foreign ONNX export is replaced by conversion', async () => {
  await hub.close();
  hub = await startStandInHub({
    repos: {
      [REPO]: { ...checkpoint, files: { ...checkpoint.files, 'onnx/model.onnx': 'optimum graph with concat cache' } },
    },
  });
  const dir = storeDirOf(REPO);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, '.pull.lock'), String(process.ppid));
  await assert.rejects(
    pullModel(REPO, { hfEndpoint: hub.endpoint, convert: standInConvert([]) }),
    new RegExp(`another \`kimina model pull\` of ${REPO} is running \\(pid ${process.ppid}\\)`),
  );
  writeFileSync(join(dir, '.pull.lock'), '2147483646');
  const calls: string[] = [];
  const r = await pullModel(REPO, { hfEndpoint: hub.endpoint, convert: standInConvert(calls) });
  assert.equal(r.converted, true);
  assert.equal(calls.length, 1);
  assert.match(readFileSync(join(dir, 'onnx', 'model.onnx'), 'utf8'), new RegExp(ONNX_LAYOUT_MARKER));
  assert.ok(!existsSync(join(dir, '.pull.lock')), 'lock released');
});

test("without checksums in any listing, the hub's X-Linked-Etag / ETag headers are used", async () => {
  await hub.close();
  hub = await startStandInHub({ repos: { [REPO]: checkpoint }, namesOnly: true, noTree: true });
  const listing = await listRepoFiles(REPO, 'main', { hfEndpoint: hub.endpoint });
  assert.ok(listing.files.every((f) => f.size === undefined && !f.sha256 && !f.gitOid));
  const dir = mkdtempSync(join(tmpdir(), 'kimina-dl-'));
  const st = listing.files.find((f) => f.path === 'model.safetensors')!;
  await downloadFile(REPO, 'main', st, dir, { hfEndpoint: hub.endpoint });
  assert.deepEqual(readFileSync(join(dir, 'model.safetensors')), weights);
  const bad = Buffer.from(weights);
  bad[7] ^= 1;
  hub.corrupt('model.safetensors', bad);
  hub.corrupt('config.json', Buffer.from('{"model_type":"qwen4","hidden_size":8}'));
  await assert.rejects(
    downloadFile(REPO, 'main', st, mkdtempSync(join(tmpdir(), 'kimina-dl-')), { hfEndpoint: hub.endpoint }),
    /checksum mismatch for model.safetensors.*sha256/,
  );
  const cfg = listing.files.find((f) => f.path === 'config.json')!;
  await assert.rejects(
    downloadFile(REPO, 'main', cfg, mkdtempSync(join(tmpdir(), 'kimina-dl-')), { hfEndpoint: hub.endpoint }),
    /checksum mismatch for config.json.*git blob/,
  );
  assert.ok(hub.log.some((r) => r.method === 'HEAD'));
});

test('a cancelled download keeps its .part file and says so; the next pull resumes it', async () => {
  const controller = new AbortController();
  const big = Buffer.alloc(4_000_000, 9);
  await hub.close();
  hub = await startStandInHub({
    repos: { [REPO]: { ...checkpoint, files: { ...checkpoint.files, 'model.safetensors': big } } },
  });
  await assert.rejects(
    pullModel(REPO, {
      hfEndpoint: hub.endpoint,
      convert: standInConvert([]),
      signal: controller.signal,
      onEvent: (e) => {
        if (e.file === 'model.safetensors' && (e.done ?? 0) > 1_000_000) controller.abort();
      },
    }),
    /download of model.safetensors cancelled; the partial file is kept for resuming/,
  );
  const part = join(storeDirOf(REPO), CHECKPOINT_SUBDIR, 'model.safetensors.part');
  const kept = existsSync(part) ? statSync(part).size : -1;
  assert.ok(kept > 0 && kept < big.length, `partial file kept (${kept} bytes)`);
  await pullModel(REPO, { hfEndpoint: hub.endpoint, convert: standInConvert([]) });
  assert.deepEqual(readFileSync(join(storeDirOf(REPO), CHECKPOINT_SUBDIR, 'model.safetensors')), big);
  assert.ok(
    hub.log.some((r) => r.path.endsWith('model.safetensors') && r.range !== undefined),
    'resumed with Range',
  );
});
