// A minimal GGUF v3 writer (llama.cpp's model format) for the benchmark: Qwen3 metadata, a GPT-2 style
// tokenizer, F32 norms and Q4_0 matrices, streamed tensor by tensor.
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Qwen3Shape } from '../backend/model/onnx/qwen3Config';
import type { WeightSource } from '../backend/model/onnx/qwen3Graph';
import { toHalf } from '../backend/model/onnx/numeric';

const T = { UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9 } as const;
const GGML = { F32: 0, Q4_0: 2 } as const;
const ALIGN = 32;

type Value =
  | { type: 'u32' | 'f32' | 'i32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'str'; value: string }
  | { type: 'strs'; value: string[] }
  | { type: 'i32s'; value: number[] };

class Bytes {
  parts: Buffer[] = [];
  u32(v: number) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v);
    this.parts.push(b);
  }
  i32(v: number) {
    const b = Buffer.alloc(4);
    b.writeInt32LE(v);
    this.parts.push(b);
  }
  u64(v: number) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.parts.push(b);
  }
  f32(v: number) {
    const b = Buffer.alloc(4);
    b.writeFloatLE(v);
    this.parts.push(b);
  }
  str(s: string) {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.parts.push(b);
  }
  value(v: Value) {
    switch (v.type) {
      case 'u32':
        this.u32(T.UINT32);
        this.u32(v.value);
        break;
      case 'i32':
        this.u32(T.INT32);
        this.i32(v.value);
        break;
      case 'f32':
        this.u32(T.FLOAT32);
        this.f32(v.value);
        break;
      case 'bool':
        this.u32(T.BOOL);
        this.parts.push(Buffer.from([v.value ? 1 : 0]));
        break;
      case 'str':
        this.u32(T.STRING);
        this.str(v.value);
        break;
      case 'strs':
        this.u32(T.ARRAY);
        this.u32(T.STRING);
        this.u64(v.value.length);
        for (const s of v.value) this.str(s);
        break;
      case 'i32s':
        this.u32(T.ARRAY);
        this.u32(T.INT32);
        this.u64(v.value.length);
        for (const n of v.value) this.i32(n);
        break;
    }
  }
  get length() {
    return this.parts.reduce((a, b) => a + b.length, 0);
  }
}

/** llama.cpp's Q4_0: blocks of 32 as {fp16 d, 16 bytes}, d = extreme / -8, q = trunc(x/d + 8.5) clamped to 15. */
export function quantizeQ4_0(w: Float32Array): Buffer {
  const blocks = w.length / 32;
  const out = Buffer.alloc(blocks * 18);
  for (let b = 0; b < blocks; b++) {
    let extreme = 0;
    for (let i = 0; i < 32; i++) if (Math.abs(w[b * 32 + i]) > Math.abs(extreme)) extreme = w[b * 32 + i];
    const d = extreme / -8;
    const id = d ? 1 / d : 0;
    out.writeUInt16LE(toHalf(d), b * 18);
    for (let j = 0; j < 16; j++) {
      const q0 = Math.min(15, Math.trunc(w[b * 32 + j] * id + 8.5));
      const q1 = Math.min(15, Math.trunc(w[b * 32 + 16 + j] * id + 8.5));
      out[b * 18 + 2 + j] = q0 | (q1 << 4);
    }
  }
  return out;
}

export interface GgufTokenizer {
  tokens: string[];
  types: number[];
  merges: string[];
  eosId: number;
  padId: number;
}

/** Writes a Qwen3 GGUF with the given weights (HF names), Q4_0 matrices and F32 vectors. */
export function writeQwen3Gguf(path: string, s: Qwen3Shape, w: WeightSource, tok: GgufTokenizer): void {
  const tensors: { name: string; hf: string; ne: number[]; type: number }[] = [];
  const mat = (name: string, hf: string, outDim: number, inDim: number) =>
    tensors.push({ name, hf, ne: [inDim, outDim], type: GGML.Q4_0 });
  const vec = (name: string, hf: string, n: number) => tensors.push({ name, hf, ne: [n], type: GGML.F32 });
  const D = s.headDim;
  mat('token_embd.weight', 'model.embed_tokens.weight', s.vocabSize, s.hiddenSize);
  for (let l = 0; l < s.layers; l++) {
    const p = `model.layers.${l}`;
    vec(`blk.${l}.attn_norm.weight`, `${p}.input_layernorm.weight`, s.hiddenSize);
    mat(`blk.${l}.attn_q.weight`, `${p}.self_attn.q_proj.weight`, s.heads * D, s.hiddenSize);
    mat(`blk.${l}.attn_k.weight`, `${p}.self_attn.k_proj.weight`, s.kvHeads * D, s.hiddenSize);
    mat(`blk.${l}.attn_v.weight`, `${p}.self_attn.v_proj.weight`, s.kvHeads * D, s.hiddenSize);
    mat(`blk.${l}.attn_output.weight`, `${p}.self_attn.o_proj.weight`, s.hiddenSize, s.heads * D);
    vec(`blk.${l}.attn_q_norm.weight`, `${p}.self_attn.q_norm.weight`, D);
    vec(`blk.${l}.attn_k_norm.weight`, `${p}.self_attn.k_norm.weight`, D);
    vec(`blk.${l}.ffn_norm.weight`, `${p}.post_attention_layernorm.weight`, s.hiddenSize);
    mat(`blk.${l}.ffn_gate.weight`, `${p}.mlp.gate_proj.weight`, s.intermediateSize, s.hiddenSize);
    mat(`blk.${l}.ffn_up.weight`, `${p}.mlp.up_proj.weight`, s.intermediateSize, s.hiddenSize);
    mat(`blk.${l}.ffn_down.weight`, `${p}.mlp.down_proj.weight`, s.hiddenSize, s.intermediateSize);
  }
  vec('output_norm.weight', 'model.norm.weight', s.hiddenSize);
  if (!s.tieWordEmbeddings) mat('output.weight', 'lm_head.weight', s.vocabSize, s.hiddenSize);

  const kv: [string, Value][] = [
    ['general.architecture', { type: 'str', value: 'qwen3' }],
    ['general.name', { type: 'str', value: 'qwen3-random-bench' }],
    ['general.alignment', { type: 'u32', value: ALIGN }],
    ['general.file_type', { type: 'u32', value: 2 }],
    ['qwen3.context_length', { type: 'u32', value: s.maxPositions }],
    ['qwen3.embedding_length', { type: 'u32', value: s.hiddenSize }],
    ['qwen3.block_count', { type: 'u32', value: s.layers }],
    ['qwen3.feed_forward_length', { type: 'u32', value: s.intermediateSize }],
    ['qwen3.attention.head_count', { type: 'u32', value: s.heads }],
    ['qwen3.attention.head_count_kv', { type: 'u32', value: s.kvHeads }],
    ['qwen3.attention.key_length', { type: 'u32', value: D }],
    ['qwen3.attention.value_length', { type: 'u32', value: D }],
    ['qwen3.rope.freq_base', { type: 'f32', value: s.ropeTheta }],
    ['qwen3.attention.layer_norm_rms_epsilon', { type: 'f32', value: s.rmsEps }],
    ['tokenizer.ggml.model', { type: 'str', value: 'gpt2' }],
    ['tokenizer.ggml.pre', { type: 'str', value: 'qwen2' }],
    ['tokenizer.ggml.tokens', { type: 'strs', value: tok.tokens }],
    ['tokenizer.ggml.token_type', { type: 'i32s', value: tok.types }],
    ['tokenizer.ggml.merges', { type: 'strs', value: tok.merges }],
    ['tokenizer.ggml.eos_token_id', { type: 'u32', value: tok.eosId }],
    ['tokenizer.ggml.padding_token_id', { type: 'u32', value: tok.padId }],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: false }],
  ];
  const head = new Bytes();
  head.parts.push(Buffer.from('GGUF'));
  head.u32(3);
  head.u64(tensors.length);
  head.u64(kv.length);
  for (const [k, v] of kv) {
    head.str(k);
    head.value(v);
  }
  let offset = 0;
  const offsets: number[] = [];
  for (const t of tensors) {
    const n = t.ne.reduce((a, b) => a * b, 1);
    const size = t.type === GGML.F32 ? n * 4 : (n / 32) * 18;
    offset = Math.ceil(offset / ALIGN) * ALIGN;
    offsets.push(offset);
    head.str(t.name);
    head.u32(t.ne.length);
    for (const d of t.ne) head.u64(d);
    head.u32(t.type);
    head.u64(offset);
    offset += size;
  }
  const fd = openSync(path, 'w');
  try {
    let at = 0;
    const write = (b: Buffer) => {
      let done = 0;
      while (done < b.length) done += writeSync(fd, b, done, b.length - done, at + done);
      at += b.length;
    };
    for (const p of head.parts) write(p);
    const dataStart = Math.ceil(at / ALIGN) * ALIGN;
    write(Buffer.alloc(dataStart - at));
    tensors.forEach((t, i) => {
      const target = dataStart + offsets[i];
      if (target > at) write(Buffer.alloc(target - at));
      const values = w.get(t.hf);
      write(
        t.type === GGML.F32 ? Buffer.from(values.buffer, values.byteOffset, values.byteLength) : quantizeQ4_0(values),
      );
    });
  } finally {
    closeSync(fd);
  }
}
