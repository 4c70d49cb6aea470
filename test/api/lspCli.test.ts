// `kimina lsp --stdio` as the extension starts it: a child process speaking LSP on stdin/stdout, with all
// logging on stderr, which initializes, answers kimina/status and exits cleanly on shutdown + exit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { type BackendStatus, lspMethods } from '../../backend/protocol';
import { startStandInServe } from '../e2e/standInServe';

test('kimina lsp --stdio: initialize, status through an attached server, shutdown, exit 0', async () => {
  const serve = await startStandInServe();
  const home = mkdtempSync(join(tmpdir(), 'kimina-lsp-cli-'));
  const child = spawn(process.execPath, ['--import', 'tsx', 'backend/cli.ts', 'lsp', '--stdio'], {
    env: { ...process.env, KIMINA_HOME: home, KIMINA_SERVER_URL: serve.url },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => {
    stderr += c.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const client = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  client.listen();
  try {
    const init = (await client.sendRequest('initialize', {
      processId: process.pid,
      rootUri: null,
      capabilities: {},
    })) as { serverInfo: { name: string } };
    assert.equal(init.serverInfo.name, 'kimina-lsp');
    await client.sendNotification('initialized', {});
    let status = (await client.sendRequest(lspMethods.status, {})) as BackendStatus;
    for (let i = 0; i < 50 && status.state === 'starting'; i++) {
      await new Promise((r) => setTimeout(r, 100));
      status = (await client.sendRequest(lspMethods.status, {})) as BackendStatus;
    }
    assert.equal(status.state, 'ready');
    assert.equal(status.server?.url, serve.url);
    await client.sendRequest('shutdown');
    await client.sendNotification('exit');
    assert.equal(await exited, 0);
    assert.match(stderr, /forwarding proofs to http:\/\/127\.0\.0\.1/);
  } finally {
    client.dispose();
    child.kill();
    await serve.close();
    rmSync(home, { recursive: true, force: true });
  }
});
