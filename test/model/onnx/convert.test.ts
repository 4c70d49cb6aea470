// Hugging Face safetensors checkpoints (sharded, BF16/F16/F32) converted into the engine's folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { convertCheckpoint, type ConvertProgress } from '../../../backend/model/onnx/convert';
import { encodeSafetensors } from '../../../backend/model/onnx/safetensors';
import { configForShape, qwen3TensorShapes, type Qwen3Shape } from '../../../backend/model/onnx/qwen3Config';
import { float32ToHalf, halfToFloat32 } from '../../../backend/model/onnx/numeric';
import type { WeightSource } from '../../../backend/model/onnx/qwen3Graph';
import { buildTokenizer } from '../../../backend/demo/models/tinyTokenizer';
import { tinyShape } from '../../../backend/demo/models/tinyModel';
import { cachedWeights, randomWeights } from '../../../backend/demo/models/randomWeights';
import { referenceLogits } from './referenceQwen3';
import { loadDecoder, maxAbsDiff, q4EffectiveWeights, tempDir } from './helpers';

function toBf16(v: Float32Array): Uint16Array {
  const bits = new Uint32Array(v.buffer, v.byteOffset, v.length);
  return Uint16Array.from(bits, (b) => (b + 0x7fff + ((b >>> 16) & 1)) >>> 16);
}

function fromBf16(v: Uint16Array): Float32Array {
  return new Float32Array(Uint32Array.from(v, (h) => h << 16).buffer);
}

type Dtype = 'F32' | 'F16' | 'BF16';

/** Writes a HF checkpoint folder; the first half of the tensors in BF16, the rest in `dtype`, two shards. */
function writeCheckpoint(
  dir: string,
  shape: Qwen3Shape,
  w: WeightSource,
  dtype: Dtype,
  drop?: string,
): Map<string, Float32Array> {
  const tok = buildTokenizer();
  writeFileSync(join(dir, 'config.json'), JSON.stringify(configForShape(shape, { torch_dtype: 'bfloat16' })));
  writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tok.tokenizerJson));
  writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(tok.tokenizerConfig));
  const stored = new Map<string, Float32Array>();
  const names = [...qwen3TensorShapes(shape).keys()].filter((n) => n !== drop);
  const shards: Parameters<typeof encodeSafetensors>[0][] = [[], []];
  const weightMap: Record<string, string> = {};
  names.forEach((name, i) => {
    const values = w.get(name);
    const kind: Dtype = i < names.length / 2 ? 'BF16' : dtype;
    let data: Uint8Array;
    if (kind === 'BF16') {
      const h = toBf16(values);
      stored.set(name, fromBf16(h));
      data = new Uint8Array(h.buffer);
    } else if (kind === 'F16') {
      const h = float32ToHalf(values);
      data = new Uint8Array(h.buffer);
      stored.set(name, halfToFloat32(h));
    } else {
      data = new Uint8Array(values.buffer.slice(values.byteOffset, values.byteOffset + values.byteLength));
      stored.set(name, values);
    }
    const shard = i % 2;
    shards[shard].push({ name, dtype: kind, shape: qwen3TensorShapes(shape).get(name)!, data });
    weightMap[name] = `model-0000${shard + 1}-of-00002.safetensors`;
  });
  shards.forEach((tensors, i) =>
    writeFileSync(join(dir, `model-0000${i + 1}-of-00002.safetensors`), encodeSafetensors(tensors)),
  );
  writeFileSync(join(dir, 'model.safetensors.index.json'), JSON.stringify({ metadata: {}, weight_map: weightMap }));
  return stored;
}

const shape = tinyShape(buildTokenizer().vocabSize);
const weights = cachedWeights(randomWeights(shape, 21));
const prompt = [4, 8, 15, 16, 23, 42];

test('a sharded BF16/F32 checkpoint converts to fp32 ONNX that computes the checkpoint exactly', async () => {
  const src = tempDir();
  const stored = writeCheckpoint(src, shape, weights, 'F32');
  const out = tempDir();
  const progress: ConvertProgress[] = [];
  await convertCheckpoint(src, out, { quantize: 'fp32', onProgress: (p) => progress.push(p) });
  for (const f of [
    'config.json',
    'tokenizer.json',
    'tokenizer_config.json',
    'generation_config.json',
    'onnx/model.onnx',
    'onnx/model.onnx_data',
  ]) {
    assert.ok(existsSync(join(out, f)), f);
  }
  assert.equal(progress.at(-1)!.done, progress.at(-1)!.total);
  const d = await loadDecoder(out);
  const logits = await d.feed(d.newState(1), [prompt]);
  const ref = referenceLogits(shape, { has: (n) => stored.has(n), get: (n) => stored.get(n)! }, prompt);
  assert.ok(maxAbsDiff(logits, ref) < 1e-4, `${maxAbsDiff(logits, ref)}`);
});

test('F16 tensors and 4-bit quantization: the result equals the quantized checkpoint', async () => {
  const src = tempDir();
  const stored = writeCheckpoint(src, shape, weights, 'F16');
  const out = tempDir();
  await convertCheckpoint(src, out, { quantize: 'q4', accuracyLevel: 0 });
  const d = await loadDecoder(out);
  const logits = await d.feed(d.newState(1), [prompt]);
  const source: WeightSource = { has: (n) => stored.has(n), get: (n) => stored.get(n)! };
  const eff = q4EffectiveWeights(shape, source);
  const ref = referenceLogits(eff.shape, eff.weights, prompt);
  assert.ok(maxAbsDiff(logits, ref) < 1e-3, `${maxAbsDiff(logits, ref)}`);
  // The default (int8 activations) stays close to it.
  const fast = tempDir();
  await convertCheckpoint(src, fast, { quantize: 'q4' });
  const f = await loadDecoder(fast);
  const fastLogits = await f.feed(f.newState(1), [prompt]);
  assert.ok(maxAbsDiff(fastLogits, ref) < 0.1, `${maxAbsDiff(fastLogits, ref)}`);
});

test('bad checkpoints are refused with the reason', async () => {
  const missing = tempDir();
  writeCheckpoint(missing, shape, weights, 'F32', 'model.layers.1.mlp.up_proj.weight');
  await assert.rejects(
    convertCheckpoint(missing, tempDir(), { quantize: 'q4' }),
    /lacks 1 tensors, e.g. model.layers.1.mlp.up_proj.weight/,
  );
  const wrong = tempDir();
  writeCheckpoint(
    wrong,
    { ...shape, intermediateSize: 96 },
    cachedWeights(randomWeights({ ...shape, intermediateSize: 96 }, 1)),
    'F32',
  );
  writeFileSync(join(wrong, 'config.json'), JSON.stringify(configForShape(shape)));
  await assert.rejects(
    convertCheckpoint(wrong, tempDir(), { quantize: 'q4' }),
    /shape \[96,64\] in the checkpoint, \[128,64\] expected/,
  );
  await assert.rejects(convertCheckpoint(tempDir(), tempDir(), { quantize: 'q4' }), /no config.json/);
  await assert.rejects(convertCheckpoint(missing, tempDir(), { quantize: 'int8' as 'q4' }), /quantize must be/);
});
