// The vLLM server process alone (backend/model/vllm/server.ts), on the stand-in vLLM (a TEST DOUBLE,
// test/model/standInVllm/): it listens on a Unix socket in a private folder and on no TCP port, a server stuck in
// shutdown is killed after the grace, and a backend that exits takes its servers (and their socket folders) with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync, readlinkSync, statSync } from 'node:fs';
import { join } from 'node:path';
import axios from 'axios';
import { VllmServer } from '../../../backend/model/vllm/server';
import { alive, engineCorePids, makeRig, serverOptions, until } from './standInSetup';

test('the API key reaches vLLM by environment: not on its command line (ps), not in its log lines; /v1 needs it', async () => {
  const rig = makeRig();
  const logs: string[] = [];
  const server = await VllmServer.start(serverOptions(rig, logs, { VLLM_API_KEY: 'a key of the user environment' }));
  try {
    assert.ok(server.apiKey.length >= 32);
    const cmdline = readFileSync(`/proc/${server.pid}/cmdline`, 'utf8'); // what `ps` shows every local user
    assert.match(cmdline, /vllm\.entrypoints\.openai\.api_server/);
    assert.ok(!cmdline.includes(server.apiKey), 'the key is not on the command line');
    assert.ok(!logs.some((l) => l.includes(server.apiKey)), 'the key is in no log line');
    const models = `${server.baseUrl}/models`;
    const socketPath = server.socketPath;
    const none = await axios.get(models, { socketPath, validateStatus: () => true });
    assert.equal(none.status, 401, 'no key: refused');
    const theirs = await axios.get(models, {
      socketPath,
      headers: { Authorization: 'Bearer a key of the user environment' },
      validateStatus: () => true,
    });
    assert.equal(theirs.status, 401, "the environment's own VLLM_API_KEY is replaced by the random one");
    const ours = await axios.get(models, { socketPath, headers: { Authorization: `Bearer ${server.apiKey}` } });
    assert.equal(ours.status, 200);
  } finally {
    await server.stop();
  }
});

/** The inodes of the sockets a process holds open (/proc/<pid>/fd links of the form socket:[inode]). */
function socketInodes(pid: number): Set<string> {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`, { encoding: 'utf8' }).toString());
    if (m) inodes.add(m[1]);
  }
  return inodes;
}

/** The inodes of every listening TCP socket on this machine, IPv4 and IPv6 (/proc/net/tcp{,6}, state 0A). */
function tcpListenInodes(): Set<string> {
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    if (!existsSync(table)) continue;
    for (const line of readFileSync(table, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      if (f[3] === '0A') inodes.add(f[9]);
    }
  }
  return inodes;
}

test('it listens on a Unix socket in a folder only this user can enter, on no TCP port, and the folder goes with it', async () => {
  const rig = makeRig();
  const server = await VllmServer.start(serverOptions(rig, []));
  const { socketDir, socketPath } = server;
  try {
    const args = readFileSync(`/proc/${server.pid}/cmdline`, 'utf8').split('\0');
    assert.equal(args[args.indexOf('--uds') + 1], socketPath);
    assert.ok(!args.includes('--host') && !args.includes('--port'), args.join(' '));
    assert.equal(statSync(socketDir).mode & 0o777, 0o700, 'the folder is private');
    assert.ok(statSync(socketPath).isSocket(), 'the socket file is there');
    const held = socketInodes(server.pid!);
    assert.ok(held.size > 0, 'the server holds its socket open');
    const listening = [...tcpListenInodes()].filter((inode) => held.has(inode));
    assert.deepEqual(listening, [], 'no TCP port listens in the server process');
    const health = await axios.get('http://localhost/health', { socketPath, validateStatus: () => true });
    assert.equal(health.status, 200);
  } finally {
    await server.stop();
  }
  assert.ok(!existsSync(socketDir), 'the folder is removed once the server has stopped');
});

test('a server that ignores SIGTERM is killed, group and all, after the grace', async () => {
  const rig = makeRig();
  const logs: string[] = [];
  const server = await VllmServer.start(
    serverOptions(rig, logs, { STAND_IN_VLLM_IGNORE_SIGTERM: '1' }, { stopGraceMs: 300 }),
  );
  const pids = [server.pid!, ...engineCorePids(logs)];
  assert.equal(pids.length, 2);
  const t0 = Date.now();
  await server.stop();
  assert.ok(Date.now() - t0 >= 250, 'SIGTERM alone did not end it');
  assert.equal(server.running, false);
  assert.match(server.exitWords(), /was ended by SIGKILL/);
  await until(() => !pids.some(alive), 5000);
});

test('a backend that exits without stopping its server leaves no vLLM process behind', async () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, 'exitingBackend.ts')], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.status, 0, r.stderr);
  const { pids, socketDir } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { pids: number[]; socketDir: string };
  assert.equal(pids.length, 2);
  await until(() => !pids.some(alive), 5000);
  assert.ok(!existsSync(socketDir), 'its socket folder is removed');
});

test('a backend killed outright (SIGKILL: no exit hook) leaves no vLLM process behind either', async () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, 'killedBackend.ts')], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.signal, 'SIGKILL', r.stderr);
  const { pids, socketDir } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { pids: number[]; socketDir: string };
  assert.equal(pids.length, 2);
  await until(() => !pids.some(alive), 10_000);
  await until(() => !existsSync(socketDir), 5000); // the lifeline removes it after the group has ended
});

test('a server that never answers /health is given up after the start timeout, and stopped', async () => {
  const rig = makeRig();
  const start = VllmServer.start(serverOptions(rig, [], { STAND_IN_VLLM_LOAD_SECONDS: '60' }, { startTimeoutMs: 800 }));
  await assert.rejects(
    start,
    /vLLM did not answer GET \/health within 1 s of starting, and was stopped; vLLM \(pid \d+\) (was ended by SIGTERM|exited with code 0)/,
  );
});

test('a python that cannot be run: the start fails at once, saying so', async () => {
  const rig = makeRig();
  await assert.rejects(
    VllmServer.start(serverOptions(rig, [], {}, { python: join(rig.home, 'missing', 'python') })),
    /vLLM did not start: .*missing\/python: spawn .*ENOENT/,
  );
});
