// Which Node runs the backend (extension/runtime.ts), and the first-run notice of a package without the
// in-process engine (the darwin-x64 vsix), for every platform (injected).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backendRuntime, hasOnnxEngine, missingEngineNotice } from '../../extension/runtime';

test("kimina.nodePath unset: VS Code's own runtime as Node; set: that Node", () => {
  const vscodeHost = {
    execPath: '/Applications/Visual Studio Code.app/Contents/MacOS/Electron',
    versions: { ...process.versions, electron: '34.5.8', node: '20.19.1' },
  };
  const own = backendRuntime('', vscodeHost);
  assert.equal(own.command, vscodeHost.execPath);
  assert.deepEqual(own.env, { ELECTRON_RUN_AS_NODE: '1' });
  assert.match(own.describe, /VS Code's own runtime \(Electron 34\.5\.8, Node 20\.19\.1/);
  const given = backendRuntime(' /usr/local/bin/node ', vscodeHost);
  assert.deepEqual([given.command, given.env], ['/usr/local/bin/node', {}]);
});

test('the backend runs on a Node started the way the extension starts it (ELECTRON_RUN_AS_NODE is harmless on Node)', async () => {
  const { spawnSync } = await import('node:child_process');
  const rt = backendRuntime('', process);
  const r = spawnSync(rt.command, ['-e', 'console.log(process.versions.node)'], {
    env: { ...process.env, ...rt.env, NODE_OPTIONS: '' },
    encoding: 'utf8',
  });
  assert.equal(r.stdout.trim(), process.versions.node);
});

test('a package without onnxruntime-node says so once and offers the OpenAI-compatible engine', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-ext-'));
  assert.equal(hasOnnxEngine(dir), false);
  const notice = missingEngineNotice('onnx', hasOnnxEngine(dir), 'darwin', 'x64');
  assert.match(notice ?? '', /not available on Intel Macs \(darwin-x64\).*OpenAI-compatible server/);
  assert.equal(missingEngineNotice('openai', false, 'darwin', 'x64'), null);
  assert.equal(missingEngineNotice('auto', false, 'darwin', 'x64'), notice, 'auto (the default) runs onnx there');
  mkdirSync(join(dir, 'node_modules', 'onnxruntime-node'), { recursive: true });
  writeFileSync(join(dir, 'node_modules', 'onnxruntime-node', 'package.json'), '{}');
  assert.equal(hasOnnxEngine(dir), true);
  assert.equal(missingEngineNotice('onnx', hasOnnxEngine(dir), 'darwin', 'arm64'), null);
});
