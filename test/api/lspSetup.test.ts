// The language-server face's setup requests over real JSON-RPC streams: kimina/setup/pullModel downloads a
// model from a stand-in Hugging Face hub (a TEST DOUBLE serving the scripted ONNX model's files) into the
// store, reports `$/progress` on the client's token (begin, percentages, end), can be cancelled, and
// the face builds its services afresh afterwards; bad parameters get a clear failure, not an exception.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CancellationTokenSource } from 'vscode-jsonrpc/node';
import {
  WorkDoneProgress,
  type WorkDoneProgressBegin,
  type WorkDoneProgressReport,
  type WorkDoneProgressEnd,
} from 'vscode-languageserver/node';
import { type SetupResult, lspMethods } from '../../backend/protocol';
import type { ProveService } from '../../backend/editor/service';
import * as store from '../../backend/model/modelStore';
import { kiminaHome } from '../../backend/settings/settings';
import { writeScriptedModel } from '../../backend/demo/models/scriptedModel';
import { filesOf, startStandInHub, type StandInHub } from '../model/standInHub';
import { connectFace, settledStatus, type FaceClient } from './faceClient';
import { fakeLake, makeReplFixture } from '../lean/replFixture';

const locateModel = (spec: string) => store.locateModel(kiminaHome(), spec);
const storeDirOf = (id: string) => store.storeDirOf(kiminaHome(), id);

const repo = 'kimina-test/setup-model';
let scratch: string;
let hub: StandInHub;
let conn: FaceClient;
let builds = 0;
const saved = { home: process.env.KIMINA_HOME, hf: process.env.HF_ENDPOINT };
const savedLean = {
  PATH: process.env.PATH,
  KIMINA_REPL_GIT_URL: process.env.KIMINA_REPL_GIT_URL,
  KIMINA_REPL_FLUSH_FIX: process.env.KIMINA_REPL_FLUSH_FIX,
};

/** A service that needs the pulled model: it fails (as the real one does) until the store holds it. */
async function serviceNeedingModel(): Promise<ProveService> {
  builds++;
  if (locateModel(repo).format !== 'onnx') throw new store.ModelNotAvailable(`model ${repo} is not in the store`);
  return {
    kind: 'in-process',
    describe: async () => ({ model: repo }),
    prove: async () => {
      throw new Error('not used');
    },
    check: async () => {
      throw new Error('not used');
    },
    close: async () => {},
  };
}

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'kimina-lsp-setup-'));
  writeScriptedModel(join(scratch, 'model'), { variant: 'fix' });
  const files = filesOf(join(scratch, 'model'));
  hub = await startStandInHub({
    repos: { [repo]: { commit: 'b'.repeat(40), files, lfs: Object.keys(files).filter((f) => f.startsWith('onnx/')) } },
    slowMs: 5,
  });
  process.env.KIMINA_HOME = join(scratch, 'home');
  process.env.HF_ENDPOINT = hub.endpoint;
  // Lean setup: real git on the repository rebuilt from the listing of the real repl, a lake TEST DOUBLE.
  const fixture = makeReplFixture();
  process.env.KIMINA_REPL_GIT_URL = fixture.dir;
  process.env.KIMINA_REPL_FLUSH_FIX = fixture.flushFix;
  process.env.PATH = `${fakeLake(join(scratch, 'lake'))}:${process.env.PATH}`;
  conn = await connectFace(serviceNeedingModel);
});

after(async () => {
  await conn?.close();
  await hub?.close();
  process.env.KIMINA_HOME = saved.home;
  process.env.HF_ENDPOINT = saved.hf;
  if (saved.home === undefined) delete process.env.KIMINA_HOME;
  if (saved.hf === undefined) delete process.env.HF_ENDPOINT;
  for (const [k, v] of Object.entries(savedLean))
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  rmSync(scratch, { recursive: true, force: true });
});

type Progress = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

test('without the model the face reports an error status naming what to set up', async () => {
  const status = await settledStatus(conn.client);
  assert.equal(status.state, 'error');
  assert.equal(status.setup?.model, true);
});

test('a cancelled pull answers cancelled and leaves the services as they were', async () => {
  const source = new CancellationTokenSource();
  const seen: Progress[] = [];
  const token = 'cancel-1';
  const listening = conn.client.onProgress(WorkDoneProgress.type, token, (v) => {
    seen.push(v);
    if (v.kind === 'report') source.cancel();
  });
  const result = (await conn.client.sendRequest(
    lspMethods.pullModel,
    { model: repo, workDoneToken: token },
    source.token,
  )) as SetupResult;
  listening.dispose();
  assert.equal(result.ok, false);
  assert.equal(result.cancelled, true);
  assert.equal(seen[0]?.kind, 'begin');
  assert.equal(seen.at(-1)?.kind, 'end');
  assert.equal((await settledStatus(conn.client)).state, 'error');
});

test('pullModel downloads with $/progress on the client token, then the services start with the model', async () => {
  const seen: Progress[] = [];
  const token = 'pull-1';
  const listening = conn.client.onProgress(WorkDoneProgress.type, token, (v) => {
    seen.push(v);
  });
  const buildsBefore = builds;
  const result = (await conn.client.sendRequest(lspMethods.pullModel, {
    model: repo,
    workDoneToken: token,
  })) as SetupResult;
  listening.dispose();
  assert.equal(result.ok, true, result.message);
  assert.match(result.message, new RegExp(`${repo} is ready in `));
  assert.ok(existsSync(storeDirOf(repo)));
  const begin = seen[0] as WorkDoneProgressBegin;
  assert.equal(begin.kind, 'begin');
  assert.equal(begin.title, `pulling ${repo}`);
  assert.equal(begin.cancellable, true);
  const reports = seen.filter((v): v is WorkDoneProgressReport => v.kind === 'report');
  assert.ok(
    reports.some((r) => /^downloading /.test(r.message ?? '')),
    JSON.stringify(reports.slice(0, 3)),
  );
  const percents = reports.flatMap((r) => (r.percentage === undefined ? [] : [r.percentage]));
  assert.ok(percents.length > 0);
  assert.deepEqual(
    percents,
    [...percents].sort((a, b) => a - b),
    'percentages never go back',
  );
  assert.equal(seen.at(-1)?.kind, 'end');
  const status = await settledStatus(conn.client);
  assert.equal(status.state, 'ready', JSON.stringify(status));
  assert.equal(status.model, repo);
  assert.ok(builds > buildsBefore, 'the services were built again after the pull');
});

test('bad parameters get a failed result with the reason, and the face keeps answering', async () => {
  const noModel = (await conn.client.sendRequest(lspMethods.pullModel, { model: '  ' })) as SetupResult;
  assert.deepEqual(noModel, { ok: false, message: 'kimina/setup/pullModel needs a model id' });
  const noProject = (await conn.client.sendRequest(lspMethods.setupLean, {})) as SetupResult;
  assert.deepEqual(noProject, { ok: false, message: 'kimina/setup/lean needs the Lean project folder' });
  const notLean = (await conn.client.sendRequest(lspMethods.setupLean, { project: scratch })) as SetupResult;
  assert.equal(notLean.ok, false);
  assert.match(notLean.message, /no lean-toolchain/);
  assert.equal((await settledStatus(conn.client)).state, 'ready');
});

test('Set Up Lean: an unbuilt Mathlib project answers the command that builds it; with build: true it is built, with progress', async () => {
  const project = join(scratch, 'mathlib-project');
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'lean-toolchain'), 'leanprover/lean4:v4.9.0\n');
  writeFileSync(
    join(project, 'lake-manifest.json'),
    JSON.stringify({ version: 7, name: 'p', packages: [{ name: 'mathlib' }] }),
  );
  const seen: string[] = [];
  const listening = conn.client.onProgress(WorkDoneProgress.type, 'lean-1', (v) => {
    if (v.kind === 'report' && v.message) seen.push(v.message);
  });
  const first = (await conn.client.sendRequest(lspMethods.setupLean, {
    project,
    workDoneToken: 'lean-1',
  })) as SetupResult;
  listening.dispose();
  assert.equal(first.ok, false);
  assert.equal(first.buildCommand, 'lake exe cache get && lake build');
  assert.match(first.message, /not built for import Mathlib/);
  assert.ok(
    seen.some((m) => /repl for v4\.9\.0: tag v4\.9\.0 .*flush fix [0-9a-f]{7} applied/.test(m)),
    seen.join('\n'),
  );
  const building: string[] = [];
  const listening2 = conn.client.onProgress(WorkDoneProgress.type, 'lean-2', (v) => {
    if (v.kind === 'report' && v.message) building.push(v.message);
  });
  const second = (await conn.client.sendRequest(lspMethods.setupLean, {
    project,
    build: true,
    workDoneToken: 'lean-2',
  })) as SetupResult;
  listening2.dispose();
  assert.equal(second.ok, true, second.message);
  assert.ok(
    building.some((m) => /Downloading Mathlib's cache \(TEST DOUBLE\)/.test(m)),
    building.join('\n'),
  );
  assert.ok(
    existsSync(join(project, '.lake', 'packages', 'mathlib', '.lake', 'build', 'lib', 'lean', 'Mathlib.olean')),
  );
  assert.match(readFileSync(join(scratch, 'lake', 'lake.log'), 'utf8'), /lake exe cache get\nlake build/);
});
