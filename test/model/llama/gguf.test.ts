// The GGUF writer read back by an independent reader (ggufReader.ts): header, metadata (architecture, shape,
// tokenizer, chat template), tensor infos and alignment, and every tensor dequantized against the checkpoint's
// floats within each type's stated error bound; the lazy, cached conversion beside a model folder.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { tinyCheckpointFiles } from '../tinyCheckpoint';
import { ensureModelGguf, ggufPathOf } from '../../../backend/model/llama/ggufConvert';
import { LlamaUnavailable } from '../../../backend/model/llama/runtime';
import { SafetensorsCheckpoint } from '../../../backend/model/onnx/safetensors';
import { qwen3TensorShapes, qwen3ShapeFromConfig } from '../../../backend/model/onnx/qwen3Config';
import { loadTokenizer } from '../../../backend/model/tokenizer';
import { writeTinyModel } from '../../../backend/demo/models/tinyModel';
import { dequantize, readGguf } from './ggufReader';

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-gguf-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function checkpointFolder(seed = 11): string {
  const dir = tempDir();
  for (const [name, content] of Object.entries(tinyCheckpointFiles(seed))) writeFileSync(join(dir, name), content);
  return dir;
}

const GGML_ID = { f32: 0, f16: 1, q4_0: 2, q8_0: 8 } as const;

/**
 * The error bound per value, from the block's largest magnitude `amax` and the value `x`:
 * f16 rounds to nearest (relative 2^-11, absolute 2^-24 near zero); q8_0 rounds x/d with d = amax/127 stored in
 * fp16, so |err| <= d/2 + 127·d·2^-11 = amax·(1/254 + 2^-11); q4_0's d = amax/8 (the clamp at 15 can cost a whole
 * step), so |err| <= amax/8·(1 + 8·2^-11).
 */
const bound = {
  f32: () => 0,
  f16: (_amax: number, x: number) => Math.abs(x) * 2 ** -11 + 2 ** -24,
  q8_0: (amax: number) => amax * (1 / 254 + 2 ** -11),
  q4_0: (amax: number) => (amax / 8) * (1 + 8 * 2 ** -11),
};

for (const type of ['f32', 'f16', 'q8_0', 'q4_0'] as const) {
  test(`GGUF ${type}: header, metadata and tensors read back; values within the stated bound`, async () => {
    const dir = checkpointFolder();
    const path = await ensureModelGguf(dir, type);
    assert.equal(path, ggufPathOf(dir, type));
    const g = readGguf(path);
    const ckpt = new SafetensorsCheckpoint(dir);
    const shape = qwen3ShapeFromConfig(JSON.parse(tinyCheckpointFiles(11)['config.json'] as string));
    const tok = await loadTokenizer(dir);
    assert.equal(g.version, 3);
    const m = g.metadata;
    assert.equal(m.get('general.architecture'), 'qwen3');
    assert.equal(m.get('general.file_type'), { f32: 0, f16: 1, q4_0: 2, q8_0: 7 }[type]);
    assert.equal(m.get('qwen3.block_count'), shape.layers);
    assert.equal(m.get('qwen3.embedding_length'), shape.hiddenSize);
    assert.equal(m.get('qwen3.attention.head_count'), shape.heads);
    assert.equal(m.get('qwen3.attention.head_count_kv'), shape.kvHeads);
    assert.equal(m.get('qwen3.attention.key_length'), shape.headDim);
    assert.equal(m.get('qwen3.feed_forward_length'), shape.intermediateSize);
    assert.equal(m.get('qwen3.context_length'), shape.maxPositions);
    assert.equal(m.get('qwen3.rope.freq_base'), shape.ropeTheta);
    assert.ok(Math.abs((m.get('qwen3.attention.layer_norm_rms_epsilon') as number) - shape.rmsEps) < 1e-12);
    // The chat template is the one our renderer uses, byte for byte.
    assert.ok(tok.chatTemplate && tok.chatTemplate.length > 100);
    assert.equal(m.get('tokenizer.chat_template'), tok.chatTemplate);
    const tokens = m.get('tokenizer.ggml.tokens') as string[];
    const types = m.get('tokenizer.ggml.token_type') as number[];
    assert.equal(tokens.length, shape.vocabSize);
    assert.equal(types.length, shape.vocabSize);
    const imEnd = tok.addedTokens.find((t) => t.content === '<|im_end|>')!;
    assert.equal(tokens[imEnd.id], '<|im_end|>');
    assert.equal(types[imEnd.id], 3, 'a special added token is a control token');
    assert.ok(tok.eosTokenIds.includes(m.get('tokenizer.ggml.eos_token_id') as number));
    assert.ok((m.get('tokenizer.ggml.merges') as string[]).length > 0);
    // Every checkpoint tensor is there once, with ggml's dims (innermost first), aligned, in the asked type.
    const expected = qwen3TensorShapes(shape);
    assert.equal(g.tensors.length, expected.size);
    let worstRatio = 0;
    for (const t of g.tensors) {
      assert.equal(t.offset % 32, 0, `${t.name} aligned`);
      const isVector = t.dims.length === 1;
      assert.equal(t.type, isVector ? 0 : GGML_ID[type], `${t.name}: norms stay F32`);
      const hf = [...expected.keys()].find((k) => k.endsWith(hfSuffix(t.name)) && layerOf(k) === layerOf(t.name))!;
      assert.ok(hf, `${t.name} maps to a checkpoint tensor`);
      assert.deepEqual([...t.dims].reverse(), expected.get(hf));
      const source = ckpt.get(hf);
      const values = dequantize(g, t);
      assert.equal(values.length, source.length);
      const block = isVector || type === 'f32' || type === 'f16' ? 1 : 32;
      for (let b = 0; b < source.length / block; b++) {
        let amax = 0;
        for (let i = 0; i < block; i++) amax = Math.max(amax, Math.abs(source[b * block + i]));
        for (let i = 0; i < block; i++) {
          const x = source[b * block + i];
          const err = Math.abs(values[b * block + i] - x);
          const limit = isVector ? 0 : bound[type](amax, x);
          assert.ok(err <= limit, `${t.name}[${b * block + i}]: error ${err} over the bound ${limit}`);
          if (limit > 0) worstRatio = Math.max(worstRatio, err / limit);
        }
      }
    }
    // The bound is not loose by orders of magnitude: the worst value uses a good part of it.
    if (type !== 'f32') assert.ok(worstRatio > 0.3, `worst error / bound = ${worstRatio}`);
  });
}

const NAMES: [string, string][] = [
  ['token_embd.weight', 'embed_tokens.weight'],
  ['attn_norm.weight', 'input_layernorm.weight'],
  ['attn_q.weight', 'q_proj.weight'],
  ['attn_k.weight', 'k_proj.weight'],
  ['attn_v.weight', 'v_proj.weight'],
  ['attn_output.weight', 'o_proj.weight'],
  ['attn_q_norm.weight', 'q_norm.weight'],
  ['attn_k_norm.weight', 'k_norm.weight'],
  ['ffn_norm.weight', 'post_attention_layernorm.weight'],
  ['ffn_gate.weight', 'gate_proj.weight'],
  ['ffn_up.weight', 'up_proj.weight'],
  ['ffn_down.weight', 'down_proj.weight'],
  ['output_norm.weight', 'model.norm.weight'],
  ['output.weight', 'lm_head.weight'],
];
function hfSuffix(gguf: string): string {
  const tail = gguf.replace(/^blk\.\d+\./, '');
  const pair = NAMES.find(([g]) => g === tail);
  if (!pair) throw new Error(`unexpected tensor ${gguf}`);
  return pair[1];
}
function layerOf(name: string): string {
  return /(?:blk|layers)\.(\d+)\./.exec(name)?.[1] ?? '';
}

test('the GGUF is cached beside the model and written again when the checkpoint is newer', async () => {
  const dir = checkpointFolder();
  const logs: string[] = [];
  const path = await ensureModelGguf(dir, 'q8_0', (l) => logs.push(l));
  assert.equal(logs.filter((l) => l.includes('writing')).length, 1);
  const first = statSync(path).mtimeMs;
  await ensureModelGguf(dir, 'q8_0', (l) => logs.push(l));
  assert.equal(logs.filter((l) => l.includes('writing')).length, 1, 'the second call reads the cache');
  const later = new Date(first + 5000);
  utimesSync(join(dir, 'model.safetensors'), later, later);
  await ensureModelGguf(dir, 'q8_0', (l) => logs.push(l));
  assert.equal(logs.filter((l) => l.includes('writing')).length, 2, 'a newer checkpoint is converted again');
});

test('a model folder without a checkpoint (an ONNX export) says so, as LlamaUnavailable', async () => {
  const dir = writeTinyModel(tempDir()).dir;
  await assert.rejects(ensureModelGguf(dir, 'q8_0'), (e: Error) => {
    assert.ok(e instanceof LlamaUnavailable);
    assert.match(e.message, /no safetensors checkpoint/);
    assert.match(e.message, /onnx engine/);
    return true;
  });
});

test("a conversion leaves another process's half-written GGUF alone (two backends converting at once)", async () => {
  const dir = checkpointFolder();
  const path = ggufPathOf(dir, 'q8_0');
  // Another backend (another window) started converting the same folder and is writing its temporary file.
  mkdirSync(join(dir, 'gguf'), { recursive: true });
  const theirs = `${path}.partial`;
  writeFileSync(theirs, 'another process is writing this');
  const written = await ensureModelGguf(dir, 'q8_0');
  assert.equal(written, path);
  assert.ok(existsSync(theirs), "the other process's file was taken (its rename would then fail)");
  assert.equal(readFileSync(theirs, 'utf8'), 'another process is writing this', 'and overwritten');
  assert.ok(readGguf(path).tensors.length > 0, 'ours is a whole GGUF');
});

test('a model folder the GGUF cannot be written into says so, as LlamaUnavailable (the factory then runs onnx)', async () => {
  const dir = checkpointFolder();
  writeFileSync(join(dir, 'gguf'), 'a file where the cache folder would go'); // fails for root too, unlike a chmod
  await assert.rejects(ensureModelGguf(dir, 'q8_0'), (e: Error) => {
    assert.ok(e instanceof LlamaUnavailable, String(e));
    assert.match(e.message, /cannot be written beside the model/);
    return true;
  });
});
