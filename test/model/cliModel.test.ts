import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ONNX_LAYOUT_MARKER } from '../../backend/model/modelStore';
import { startStandInHub } from './standInHub';
import { tinyCheckpointFiles } from './tinyCheckpoint';

const CLI = join(__dirname, '..', '..', 'backend', 'cli.ts');

function kimina(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', CLI, ...args],
      { env: { ...process.env, ...env }, timeout: 60_000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

const hubPromise = startStandInHub({
  repos: {
    'me/ready': {
      commit: 'd'.repeat(40),
      lfs: ['onnx/model.onnx_data'],
      files: {
        'config.json': '{}',
        'generation_config.json': '{}',
        'tokenizer.json': '{}',
        'tokenizer_config.json': '{}',
        'onnx/model.onnx': `graph ${ONNX_LAYOUT_MARKER}`,
        'onnx/model.onnx_data': Buffer.alloc(2_500_000, 3),
      },
    },
    'tiny-org/ck': { commit: 'f'.repeat(40), files: tinyCheckpointFiles(), lfs: ['model.safetensors'] },
  },
});
after(async () => (await hubPromise).close());

test('kimina model pull / list / path through the real CLI against a stand-in hub', async () => {
  const hub = await hubPromise;
  const env = {
    KIMINA_HOME: mkdtempSync(join(tmpdir(), 'kimina-cli-')),
    HF_ENDPOINT: hub.endpoint,
    KIMINA_MODEL: 'me/ready',
  };
  const empty = await kimina(['model', 'list'], env);
  assert.equal(empty.code, 0);
  assert.match(empty.stdout, /no models yet; run `kimina model pull AI-MO\/Kimina-Prover-RL-0.6B`/);

  const pulled = await kimina(['model', 'pull', 'me/ready'], env);
  assert.equal(pulled.code, 0, pulled.stderr);
  assert.match(pulled.stderr, /downloading me\/ready \[#{24}\] 2\.50 MB \/ 2\.50 MB [\d.]+ [KMG]?B\/s$/m);
  assert.match(pulled.stderr, /me\/ready is ready in .*models\/me\/ready/);

  const list = await kimina(['model', 'list'], env);
  assert.match(list.stdout, /^\s+NAME\s+SIZE\s+FORMAT\s+PATH$/m);
  assert.match(list.stdout, /^\*\s+me\/ready\s+2\.50 MB\s+onnx\s+\S+models\/me\/ready$/m);
  assert.match(list.stdout, /^engine: kimina\.engine = auto: Chosen per machine/m);
  const vllm = await kimina(['model', 'list'], { ...env, KIMINA_ENGINE: 'vllm' });
  assert.match(
    vllm.stdout,
    /^engine: kimina\.engine = vllm: A vLLM server the backend starts from the trainer environment/m,
  );

  const path = await kimina(['model', 'path'], env);
  assert.equal(path.stdout.trim(), join(env.KIMINA_HOME, 'models', 'me', 'ready'));

  // The engine's calibration beside the model (as it writes it at first run): listed with the rows it implies, a
  // GPU-like cost taking 8 rows at once; kimina.rowsAtOnce (KIMINA_ROWS_AT_ONCE) overrides them.
  const key = 'c-api-gqa/fp32/16t/cpu/Some CPU';
  writeFileSync(join(path.stdout.trim(), 'calibration.json'), JSON.stringify({ [key]: { a: 8, m: 0.3, b: 2e-5 } }));
  const calibrated = await kimina(['model', 'list'], env);
  assert.match(
    calibrated.stdout,
    /^ {2}me\/ready on c-api-gqa\/fp32\/16t\/cpu\/Some CPU: calibrated 8\.0 ms \+ 0\.3 ms per further row \+ 0\.02 µs per cached token a step: 8 rows at once \(expected first proof ~\d+ (?:s|min) over the recipe's answers\)$/m,
  );
  const forced = await kimina(['model', 'list', '--json'], { ...env, KIMINA_ROWS_AT_ONCE: '3' });
  const [entry] = JSON.parse(forced.stdout) as Array<{ calibrations: { key: string; rows: number; from: string }[] }>;
  assert.deepEqual(
    entry.calibrations.map((c) => [c.key, c.rows, c.from]),
    [[key, 3, 'setting']],
  );
});

test('kimina model pull converts a checkpoint with the real converter and shows its progress', async () => {
  const hub = await hubPromise;
  const env = {
    KIMINA_HOME: mkdtempSync(join(tmpdir(), 'kimina-cli-')),
    HF_ENDPOINT: hub.endpoint,
    KIMINA_MODEL: 'tiny-org/ck',
  };
  const pulled = await kimina(['model', 'pull', 'tiny-org/ck', '--quantize', 'fp32'], env);
  assert.equal(pulled.code, 0, pulled.stderr);
  assert.match(pulled.stderr, /kimina: converting tiny-org\/ck to ONNX \(fp32\)/);
  assert.match(pulled.stderr, /^converting \[#{24}\] (\d+)\/\1 /m);
  assert.match(pulled.stderr, /tiny-org\/ck is ready in .* \(converted, fp32\)/);
  const list = await kimina(['model', 'list', '--json'], env);
  const [entry] = JSON.parse(list.stdout) as Array<{
    id: string;
    format: string;
    quantize: string;
    isDefault: boolean;
  }>;
  assert.deepEqual([entry.id, entry.format, entry.quantize, entry.isDefault], ['tiny-org/ck', 'onnx', 'fp32', true]);
});

test('Ctrl-C during a pull exits 130 and keeps the partial file for the next pull', async () => {
  const hub = await startStandInHub({
    slowMs: 20,
    repos: {
      'slow/model': {
        commit: '1'.repeat(40),
        lfs: ['model.safetensors'],
        files: {
          'config.json': '{}',
          'model.safetensors': Buffer.alloc(8_000_000, 5),
        },
      },
    },
  });
  try {
    const home = mkdtempSync(join(tmpdir(), 'kimina-cli-'));
    const part = join(home, 'models', 'slow', 'model', 'checkpoint', 'model.safetensors.part');
    const child = spawn(process.execPath, ['--import', 'tsx', CLI, 'model', 'pull', 'slow/model'], {
      env: { ...process.env, KIMINA_HOME: home, HF_ENDPOINT: hub.endpoint },
    });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    for (let i = 0; i < 400 && !(existsSync(part) && statSync(part).size > 0); i++)
      await new Promise((r) => setTimeout(r, 25));
    child.kill('SIGINT');
    assert.equal(await exited, 130, stderr);
    assert.match(stderr, /download of model.safetensors cancelled; the partial file is kept for resuming/);
    assert.ok(statSync(part).size > 0 && statSync(part).size < 8_000_000);
  } finally {
    await hub.close();
  }
});

test('kimina model: offline and usage errors', async () => {
  const env = { KIMINA_HOME: mkdtempSync(join(tmpdir(), 'kimina-cli-')), HF_ENDPOINT: 'http://127.0.0.1:9' };
  const offline = await kimina(['model', 'pull'], env);
  assert.equal(offline.code, 1);
  assert.match(
    offline.stderr,
    /kimina: cannot reach 127\.0\.0\.1:9: ECONNREFUSED .*set KIMINA_MODEL to a local folder/,
  );
  const missing = await kimina(['model', 'path'], env);
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /run `kimina model pull AI-MO\/Kimina-Prover-RL-0.6B`/);
  const bad = await kimina(['model', 'frobnicate'], env);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /unknown command 'frobnicate'/);
  assert.equal(
    (await kimina(['model', 'pull', 'x', '--quantize', 'q8'], env)).stderr.trim(),
    "kimina: --quantize must be q4 or fp32, got 'q8'",
  );
});
