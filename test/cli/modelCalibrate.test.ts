// `kimina model calibrate` through the real CLI on the tiny checkpoint (safetensors + its ONNX conversion in one
// store folder), with the real engines: onnx alone while llama.cpp is not installed in the Kimina home (nothing
// installed then), both once node-llama-cpp is there (the one the llama suite installs into .kimina-cache, linked
// into the home; its CPU backend); the choice printed, stored, and shown by `kimina model list` with the override.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { tinyCheckpointFiles } from '../model/tinyCheckpoint';
import { convertCheckpoint } from '../../backend/model/onnx/convert';
import { loadNodeLlamaCpp, runtimeDirOf } from '../../backend/model/llama/runtime';

const CLI = join(__dirname, '..', '..', 'backend', 'cli.ts');
const RUNTIME_DIR = resolve(__dirname, '../../.kimina-cache/llama-runtime');

function kimina(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((done) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', CLI, ...args],
      { env: { ...process.env, ...env }, timeout: 240_000 },
      (err, stdout, stderr) => done({ code: err ? (typeof err.code === 'number' ? err.code : 1) : 0, stdout, stderr }),
    );
  });
}

const home = mkdtempSync(join(tmpdir(), 'kimina-calibrate-'));
after(() => rmSync(home, { recursive: true, force: true }));
const modelDir = join(home, 'models', 'tiny-org', 'ck');
// KIMINA_LLAMA_GPU=cpu: a GPU on the machine running the tests does not make llama.cpp a candidate.
const env = { KIMINA_HOME: home, KIMINA_MODEL: 'tiny-org/ck', KIMINA_THREADS: '1', KIMINA_LLAMA_GPU: 'cpu' };

before(async () => {
  mkdirSync(modelDir, { recursive: true });
  for (const [name, content] of Object.entries(tinyCheckpointFiles(11))) writeFileSync(join(modelDir, name), content);
  await convertCheckpoint(modelDir, modelDir, { quantize: 'fp32' });
  await loadNodeLlamaCpp(RUNTIME_DIR, { gpu: false, installWith: process.env }); // no-op once installed
});

interface Printed {
  engine: string;
  words: string;
  estimates: { engine: string; label: string; rows?: number; expectedFirstProofSeconds?: number; none?: string }[];
}

test('kimina model calibrate: onnx alone without llama.cpp (nothing installed), then both; the choice stored and listed', async () => {
  const alone = await kimina(['model', 'calibrate'], env);
  assert.equal(alone.code, 0, alone.stderr);
  assert.match(
    alone.stderr,
    /llama\.cpp is not compared: llama\.cpp not installed; `kimina model calibrate` compares both; --with-llama installs it/,
  );
  assert.match(
    alone.stdout,
    /^ {2}onnx: [\d.]+ ms \+ [\d.]+ ms per further row \+ [\d.]+ µs per cached token a step \(timed now\); \d rows? at once; expected first proof ~\d+ (s|min) over the recipe's answers$/m,
  );
  assert.match(
    alone.stdout,
    /^engine auto → onnx: first proof ~\d+ (s|min); llama\.cpp not installed; `kimina model calibrate` compares both; stored for kimina\.engine = auto$/m,
  );
  assert.equal(existsSync(runtimeDirOf(home)), false, 'nothing installed');

  // node-llama-cpp in the home (the suite's install, not a second one): both compared, onnx's calibration read back.
  mkdirSync(join(home, 'engines'), { recursive: true });
  symlinkSync(RUNTIME_DIR, runtimeDirOf(home));
  const both = await kimina(['model', 'calibrate', '--json'], env);
  assert.equal(both.code, 0, both.stderr);
  const printed = JSON.parse(both.stdout) as Printed;
  assert.deepEqual(
    printed.estimates.map((e) => e.label),
    ['onnx', 'llama (cpu)'],
  );
  for (const e of printed.estimates) assert.ok(e.expectedFirstProofSeconds! > 0 && e.rows! >= 1, JSON.stringify(e));
  const [onnx, llama] = printed.estimates;
  const fastest = onnx.expectedFirstProofSeconds! <= llama.expectedFirstProofSeconds! ? onnx : llama;
  assert.equal(printed.engine, fastest.engine);
  assert.match(
    printed.words,
    new RegExp(`^engine auto → ${fastest.label.replace(/[()]/g, '\\$&')}: first proof ~\\d+ (s|min) vs `),
  );
  const calibrations = JSON.parse(readFileSync(join(modelDir, 'calibration.json'), 'utf8')) as Record<string, unknown>;
  assert.ok(
    Object.keys(calibrations).some((k) => k.startsWith('llama/q8_0/cpu/1t/')),
    Object.keys(calibrations).join(),
  );
  assert.ok(
    Object.keys(calibrations).some((k) => !k.startsWith('llama/')),
    'and onnx',
  );

  const list = await kimina(['model', 'list'], env);
  assert.equal(list.code, 0, list.stderr);
  assert.ok(list.stdout.includes(`  tiny-org/ck: ${printed.words} (chosen `), list.stdout);
  assert.match(list.stdout, /^ {2}tiny-org\/ck on llama\/q8_0\/cpu\/1t\/.*: calibrated .* at once/m);
  const named = await kimina(['model', 'list'], { ...env, KIMINA_ENGINE: 'onnx' });
  assert.match(named.stdout, /\(chosen [^)]+\) \(kimina\.engine = onnx overrides it\)$/m);
});
