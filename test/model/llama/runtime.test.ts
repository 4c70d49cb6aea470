// Installing node-llama-cpp (backend/model/llama/runtime.ts) with a test double of npm: a shell script that logs
// each run and writes what npm would (node_modules/node-llama-cpp/package.json), placed beside a stand-in Node in
// a folder with a space, as Node's default Windows folder (C:\Program Files\nodejs) has. Nothing is downloaded.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { installNodeLlamaCpp, npmCommand } from '../../../backend/model/llama/runtime';

/** Test double of npm: logs 'start'/'end' around a pause, then installs a stub node-llama-cpp. */
function fakeNodeFolder(name: string): { execPath: string; log: string } {
  const root = mkdtempSync(join(tmpdir(), 'kimina-npm-'));
  const bin = join(root, 'Program Files & Co', 'nodejs');
  mkdirSync(bin, { recursive: true });
  const log = join(root, 'npm.log');
  const script = join(bin, name);
  writeFileSync(
    script,
    `#!/bin/sh
echo "start $*" >> '${log}'
sleep 0.3
mkdir -p node_modules/node-llama-cpp
echo '{}' > node_modules/node-llama-cpp/package.json
echo end >> '${log}'
`,
  );
  chmodSync(script, 0o755);
  writeFileSync(join(bin, 'node.exe'), '');
  return { execPath: join(bin, 'node.exe'), log };
}

test('npm beside a Node in a folder with a space (and an &) starts through the shell Windows needs', async (t) => {
  if (process.platform === 'win32') return t.skip('the double is a POSIX shell script');
  const node = fakeNodeFolder('npm.cmd');
  const npm = npmCommand('win32', node.execPath, false);
  assert.equal(npm.shell, true);
  assert.ok(npm.command.startsWith('"') && npm.command.endsWith('npm.cmd"'), npm.command);
  const dir = join(mkdtempSync(join(tmpdir(), 'kimina-home-')), 'engines', 'node-llama-cpp-x');
  await installNodeLlamaCpp(dir, ['@node-llama-cpp/win-x64'], process.env, () => undefined, npm);
  assert.match(readFileSync(node.log, 'utf8'), /^start install .*@node-llama-cpp\/win-x64@/m);
  assert.deepEqual(JSON.parse(readFileSync(join(dir, '.kimina-installed.json'), 'utf8')).packages, [
    '@node-llama-cpp/win-x64',
  ]);
  // Off Windows npm starts without a shell, unquoted.
  assert.deepEqual(npmCommand('linux', '/no/such/folder/node', false), { command: 'npm', shell: false });
});

test('two backends installing at once: npm runs once, the second waits and finds it installed', async (t) => {
  if (process.platform === 'win32') return t.skip('the double is a POSIX shell script');
  const node = fakeNodeFolder('npm');
  const npm = npmCommand('linux', node.execPath, false);
  const dir = join(mkdtempSync(join(tmpdir(), 'kimina-home-')), 'engines', 'node-llama-cpp-x');
  const lines: string[] = [];
  const packages = ['@node-llama-cpp/linux-x64'];
  await Promise.all([
    installNodeLlamaCpp(dir, packages, process.env, (l) => lines.push(l), npm),
    installNodeLlamaCpp(dir, packages, process.env, (l) => lines.push(l), npm),
  ]);
  const runs = readFileSync(node.log, 'utf8').trim().split('\n');
  assert.equal(runs.length, 2, `npm ran more than once: ${runs.join(' | ')}`);
  assert.ok(runs[0].startsWith('start') && runs[1] === 'end');
  assert.ok(lines.some((l) => l.includes('another process is installing')));
  assert.equal(existsSync(`${dir}.lock`), false, 'the lock is released');
});
