// kimina.engine = vllm against real processes and real HTTP: the backend starts the stand-in vLLM (a TEST DOUBLE,
// test/model/standInVllm/) as `python -m vllm.entrypoints.openai.api_server`, waits for /health, proves through
// it, stops it when idle and starts it again, survives its death mid-request, and leaves no process behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import axios from 'axios';
import { createEngine } from '../../../backend/model/index';
import type { Engine, SamplingOptions } from '../../../backend/model/engine';
import type { VllmEngine } from '../../../backend/model/vllm/engine';
import { VLLM_MAX_MODEL_LEN } from '../../../backend/model/vllm/load';
import { buildPrompt } from '../../../backend/prover/prompt';
import { extractProof } from '../../../backend/prover/extract';
import { PYTHON, STAND_IN_VLLM, alive, childEnvOf, configOf, engineCorePids, makeRig, until } from './standInSetup';

const STATEMENT = 'theorem add_zero_nat (n : ℕ) : n + 0 = n := by sorry';
const SAMPLING: SamplingOptions = { maxTokens: 4096, temperature: 1, topP: 1, seed: 7 };

async function withEngine(
  env: NodeJS.ProcessEnv,
  settings: Record<string, string>,
  body: (engine: VllmEngine, logs: string[]) => Promise<void>,
): Promise<void> {
  const rig = makeRig();
  const logs: string[] = [];
  const engine = (await createEngine(configOf(rig, settings), {
    home: rig.home,
    childEnv: childEnvOf(rig, env),
    log: (l) => logs.push(l),
  })) as Engine as VllmEngine;
  try {
    await body(engine, logs);
  } finally {
    await engine.close();
  }
}

test('start on the first request, /health, a prove-style generate, idle stop, restart on the next request', async () => {
  await withEngine({}, { KIMINA_VLLM_IDLE_MINUTES: String(0.6 / 60) }, async (engine, logs) => {
    assert.equal(engine.name, 'vllm');
    assert.equal(engine.maxContext, VLLM_MAX_MODEL_LEN);
    assert.match(engine.detail, /managed vLLM .*: not running: it starts on the first request/);
    assert.equal(await engine.server(), undefined, 'nothing starts while loading the engine');

    const prompt = buildPrompt(STATEMENT);
    const out = await engine.generate(
      Array.from({ length: 16 }, () => prompt),
      SAMPLING,
    );
    assert.equal(out.length, 16);
    for (const [k, g] of out.entries()) {
      assert.equal(g.finishReason, 'stop');
      assert.match(g.text, new RegExp(`Sample ${k} \\(seed ${7 + k}\\)`), 'one choice per sample, n on one request');
      const proof = extractProof(g.text, STATEMENT);
      assert.ok(proof.ok, `sample ${k} has a proof of the statement`);
    }
    const first = await engine.server();
    assert.ok(first?.pid && alive(first.pid));
    assert.ok(engine.detail.includes(`up on unix socket ${first.socketPath} (pid ${first.pid})`), engine.detail);
    assert.ok(
      logs.some((l) =>
        l.startsWith(
          `vLLM starting: ${PYTHON} -m vllm.entrypoints.openai.api_server on unix socket ${first.socketPath}`,
        ),
      ),
    );
    assert.ok(
      logs.some((l) => /^vllm: .*Loading weights took/.test(l)),
      'its log lines are streamed while it loads',
    );
    assert.ok(logs.some((l) => l.startsWith(`vLLM is up on unix socket ${first.socketPath} (pid ${first.pid})`)));
    const core = engineCorePids(logs)[0];
    assert.ok(core && alive(core), "the stand-in's engine core runs beside it");

    await until(() => !alive(first.pid!), 10_000);
    await until(() => logs.some((l) => /stopped after .* min without a request, so the GPU is given back/.test(l)));
    assert.ok(!alive(core), 'the engine core went with it');
    assert.ok(!existsSync(first.socketDir), 'its socket folder went with it');
    assert.match(engine.detail, /stopped after .* without a request; the next request starts it again/);

    const again = await engine.generate([prompt], SAMPLING);
    assert.ok(extractProof(again[0].text, STATEMENT).ok);
    const second = await engine.server();
    assert.equal(engine.starts, 2);
    assert.notEqual(second?.pid, first.pid);
    assert.notEqual(second?.apiKey, first.apiKey, 'a new random key per start');
  });
});

test('the API key is random and required on /v1; /health needs none (as vLLM)', async () => {
  await withEngine({}, {}, async (engine) => {
    await engine.generate([buildPrompt(STATEMENT)], SAMPLING);
    const server = (await engine.server())!;
    assert.ok(server.apiKey.length >= 32);
    const get = (path: string, key?: string) =>
      axios.get(`http://localhost${path}`, {
        socketPath: server.socketPath,
        headers: key ? { Authorization: `Bearer ${key}` } : {},
        validateStatus: () => true,
      });
    assert.equal((await get('/v1/models')).status, 401);
    assert.deepEqual((await get('/v1/models', 'not-the-key')).data, { error: 'Unauthorized' });
    const listed = await get('/v1/models', server.apiKey);
    assert.equal(listed.status, 200);
    assert.equal(listed.data.data[0].owned_by, 'vllm');
    assert.equal(listed.data.data[0].max_model_len, VLLM_MAX_MODEL_LEN);
    assert.equal((await get('/health')).status, 200);
  });
});

test('the server dying mid-request fails that request with its last lines; the next request starts it again', async () => {
  const rig = makeRig();
  const flag = join(rig.home, '..', 'die-once');
  writeFileSync(flag, '');
  await withEngine({ STAND_IN_VLLM_DIE_ONCE: flag, STAND_IN_VLLM_CHUNK_DELAY_MS: '20' }, {}, async (engine, logs) => {
    const prompt = buildPrompt(STATEMENT);
    await assert.rejects(
      engine.generate([prompt, prompt], SAMPLING),
      (err: Error) =>
        /^vLLM died during the request/.test(err.message) &&
        /exited with code 1/.test(err.message) &&
        /EngineCore_DP0 died unexpectedly/.test(err.message) &&
        /The next request starts it again/.test(err.message),
    );
    const core = engineCorePids(logs)[0];
    await until(() => !alive(core), 5000); // the orphaned engine core is ended with its group
    const out = await engine.generate([prompt], SAMPLING);
    assert.ok(extractProof(out[0].text, STATEMENT).ok);
    assert.equal(engine.starts, 2);
  });
});

test('a server that exits while loading: a clear error with its stderr tail; the next request tries again', async () => {
  await withEngine({ STAND_IN_VLLM_FAIL_LOAD: 'CUDA out of memory (stand-in)' }, {}, async (engine) => {
    const prompt = buildPrompt(STATEMENT);
    for (let i = 0; i < 2; i++)
      await assert.rejects(
        engine.generate([prompt], SAMPLING),
        /vLLM stopped while starting: vLLM \(pid \d+\) exited with code 1; its last lines:[\s\S]*CUDA out of memory/,
      );
    assert.equal(engine.starts, 2);
    assert.match(engine.detail, /its last start failed/);
  });
});

test('refused, saying how to fix it: no NVIDIA GPU, no vllm in the trainer environment, no trainer python', async () => {
  const rig = makeRig();
  const load = (env: NodeJS.ProcessEnv, settings: Record<string, string> = {}) =>
    createEngine(configOf(rig, settings), { home: rig.home, childEnv: childEnvOf(rig, env), log: () => {} });
  await assert.rejects(
    load({ PATH: rig.emptyBin }),
    /needs an NVIDIA GPU on Linux, and there is none here \(nvidia-smi not found\)/,
  );
  await assert.rejects(load({ PYTHONPATH: '' }), /has no vllm: install it with `kimina trainer setup --gpu`/);
  await assert.rejects(
    load({}, { KIMINA_TRAINER_PYTHON: join(rig.home, 'no-venv', 'bin', 'python') }),
    /no-venv\/bin\/python is not there: install it with `kimina trainer setup --gpu`/,
  );
});

test('the stand-in refuses a flag vLLM does not know, as vLLM does; every flag the backend passes is known', () => {
  const r = spawnSync(PYTHON, ['-m', 'vllm.entrypoints.openai.api_server', '--model', '/m', '--no-such-flag'], {
    env: { PYTHONPATH: STAND_IN_VLLM },
    encoding: 'utf8',
  });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /unrecognized arguments: --no-such-flag/);
});

test('no process is left after close, the engine core included', async () => {
  let pids: number[] = [];
  await withEngine({}, {}, async (engine, logs) => {
    await engine.generate([buildPrompt(STATEMENT)], SAMPLING);
    pids = [(await engine.server())!.pid!, ...engineCorePids(logs)];
    assert.ok(pids.every(alive));
  });
  await until(() => !pids.some(alive), 5000);
});

test('a request cancelled while vLLM loads ends at once; the start goes on and the next request uses it', async () => {
  await withEngine({ STAND_IN_VLLM_LOAD_SECONDS: '1.5' }, {}, async (engine, logs) => {
    const controller = new AbortController();
    const cancelled = engine.generate([buildPrompt(STATEMENT)], { ...SAMPLING, signal: controller.signal });
    await until(() => logs.some((l) => l.startsWith('vLLM starting')));
    controller.abort();
    assert.deepEqual(
      (await cancelled).map((g) => g.finishReason),
      ['cancelled'],
    );
    assert.match(engine.detail, /starting \(loading the weights/);
    const out = await engine.generate([buildPrompt(STATEMENT)], SAMPLING);
    assert.ok(extractProof(out[0].text, STATEMENT).ok);
    assert.equal(engine.starts, 1, 'the start under way was used, not a second one');
  });
});

test('closing the engine while vLLM loads stops it at once', async () => {
  const rig = makeRig();
  const logs: string[] = [];
  const engine = (await createEngine(configOf(rig), {
    home: rig.home,
    childEnv: childEnvOf(rig, { STAND_IN_VLLM_LOAD_SECONDS: '120' }),
    log: (l) => logs.push(l),
  })) as Engine as VllmEngine;
  const request = engine.generate([buildPrompt(STATEMENT)], SAMPLING);
  await until(() => engineCorePids(logs).length > 0);
  const pid = Number(/\(pid (\d+)\)/.exec(logs.find((l) => l.startsWith('vLLM starting'))!)![1]);
  const t0 = Date.now();
  await engine.close();
  assert.ok(Date.now() - t0 < 10_000, 'not the two minutes of loading');
  await assert.rejects(request, /vLLM's start was given up \(the engine closed\)/);
  await until(() => !alive(pid) && !engineCorePids(logs).some(alive), 5000);
  assert.match(engine.detail, /stopped: the engine closed/);
});

test('an idle time beyond what a timer holds (about 24.8 days) keeps the server up, as 0 does, not 1 ms', async () => {
  await withEngine({}, { KIMINA_VLLM_IDLE_MINUTES: '100000' }, async (engine) => {
    await engine.generate([buildPrompt(STATEMENT)], SAMPLING);
    const server = await engine.server();
    assert.ok(server?.pid);
    await new Promise((r) => setTimeout(r, 500));
    assert.ok(alive(server.pid!), 'not stopped for idleness');
    assert.equal(engine.starts, 1);
  });
});
