// The vLLM server process alone (backend/model/vllm/server.ts), on the stand-in vLLM (a TEST DOUBLE,
// test/model/standInVllm/): a server stuck in shutdown is killed after the grace, and a backend that exits
// takes its servers with it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import axios from 'axios';
import { VllmServer } from '../../../backend/model/vllm/server';
import { PYTHON, alive, childEnvOf, engineCorePids, makeRig, until } from './standInSetup';

test('the API key reaches vLLM by environment: not on its command line (ps), not in its log lines; /v1 needs it', async () => {
  const rig = makeRig();
  const logs: string[] = [];
  const server = await VllmServer.start({
    python: PYTHON,
    modelDir: rig.modelDir,
    servedModelName: 'm',
    maxModelLen: 1024,
    gpuMemoryUtilization: 0.5,
    seed: 0,
    env: childEnvOf(rig, { VLLM_API_KEY: 'a key of the user environment' }),
    log: (l) => logs.push(l),
  });
  try {
    assert.ok(server.apiKey.length >= 32);
    const cmdline = readFileSync(`/proc/${server.pid}/cmdline`, 'utf8'); // what `ps` shows every local user
    assert.match(cmdline, /vllm\.entrypoints\.openai\.api_server/);
    assert.ok(!cmdline.includes(server.apiKey), 'the key is not on the command line');
    assert.ok(!logs.some((l) => l.includes(server.apiKey)), 'the key is in no log line');
    const models = `${server.baseUrl}/models`;
    const none = await axios.get(models, { validateStatus: () => true });
    assert.equal(none.status, 401, 'no key: refused');
    const theirs = await axios.get(models, {
      headers: { Authorization: 'Bearer a key of the user environment' },
      validateStatus: () => true,
    });
    assert.equal(theirs.status, 401, "the environment's own VLLM_API_KEY is replaced by the random one");
    const ours = await axios.get(models, { headers: { Authorization: `Bearer ${server.apiKey}` } });
    assert.equal(ours.status, 200);
  } finally {
    await server.stop();
  }
});

test('a server that ignores SIGTERM is killed, group and all, after the grace', async () => {
  const rig = makeRig();
  const logs: string[] = [];
  const server = await VllmServer.start({
    python: PYTHON,
    modelDir: rig.modelDir,
    servedModelName: 'm',
    maxModelLen: 1024,
    gpuMemoryUtilization: 0.5,
    seed: 0,
    env: childEnvOf(rig, { STAND_IN_VLLM_IGNORE_SIGTERM: '1' }),
    log: (l) => logs.push(l),
    stopGraceMs: 300,
  });
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
  const { pids } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { pids: number[] };
  assert.equal(pids.length, 2);
  await until(() => !pids.some(alive), 5000);
});

test('a backend killed outright (SIGKILL: no exit hook) leaves no vLLM process behind either', async () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', join(__dirname, 'killedBackend.ts')], {
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(r.signal, 'SIGKILL', r.stderr);
  const { pids } = JSON.parse(r.stdout.trim().split('\n').pop()!) as { pids: number[] };
  assert.equal(pids.length, 2);
  await until(() => !pids.some(alive), 10_000);
});

test('a server that never answers /health is given up after the start timeout, and stopped', async () => {
  const rig = makeRig();
  const start = VllmServer.start({
    python: PYTHON,
    modelDir: rig.modelDir,
    servedModelName: 'm',
    maxModelLen: 1024,
    gpuMemoryUtilization: 0.5,
    seed: 0,
    env: childEnvOf(rig, { STAND_IN_VLLM_LOAD_SECONDS: '60' }),
    log: () => {},
    startTimeoutMs: 800,
  });
  await assert.rejects(
    start,
    /vLLM did not answer GET \/health within 1 s of starting, and was stopped; vLLM \(pid \d+\) (was ended by SIGTERM|exited with code 0)/,
  );
});

test('a python that cannot be run: the start fails at once, saying so', async () => {
  const rig = makeRig();
  await assert.rejects(
    VllmServer.start({
      python: join(rig.home, 'missing', 'python'),
      modelDir: rig.modelDir,
      servedModelName: 'm',
      maxModelLen: 1024,
      gpuMemoryUtilization: 0.5,
      seed: 0,
      env: childEnvOf(rig),
      log: () => {},
    }),
    /vLLM did not start: .*missing\/python: spawn .*ENOENT/,
  );
});
