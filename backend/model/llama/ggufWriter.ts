// Writes a Qwen3 GGUF (llama.cpp's `qwen3` architecture) from a checkpoint's weights, tensor by tensor: the
// matrices in the chosen type, norms in float32, the GPT-2 style tokenizer and the chat template as metadata.
import { closeSync, openSync, writeSync } from 'node:fs';
import type { Qwen3Shape } from '../onnx/qwen3Config';
import type { WeightSource } from '../onnx/qwen3Graph';
import {
  GGML_TYPES,
  GGUF_ALIGNMENT,
  HeaderBytes,
  tensorBytes,
  type GgufValue,
  type GgufWeightType,
} from './ggufFormat';
import { encodeTensor } from './ggufQuant';
import type { GgufTokenizer } from './ggufTokenizer';

export interface GgufWriteOptions {
  /** The matrices' type (the embedding and the output head included). */
  weights: GgufWeightType;
  /** general.name. */
  name: string;
  /** tokenizer.chat_template: the checkpoint's Jinja template, when it has one. */
  chatTemplate?: string;
  /** Called before each tensor is read from the source (its Hugging Face name). */
  onTensor?: (hfName: string, index: number, total: number) => void;
}

interface TensorPlan {
  name: string;
  hf: string;
  /** ggml's dims: innermost first ([in, out] for a Linear weight). */
  ne: number[];
  type: GgufWeightType;
}

/** llama.cpp's tensor names for a Qwen3 checkpoint's, with their dims and types. */
function planTensors(s: Qwen3Shape, weights: GgufWeightType): TensorPlan[] {
  const tensors: TensorPlan[] = [];
  const mat = (name: string, hf: string, outDim: number, inDim: number) =>
    tensors.push({ name, hf, ne: [inDim, outDim], type: weights });
  const vec = (name: string, hf: string, n: number) => tensors.push({ name, hf, ne: [n], type: 'f32' });
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
  return tensors;
}

function metadata(s: Qwen3Shape, tok: GgufTokenizer, o: GgufWriteOptions): [string, GgufValue][] {
  const u32 = (value: number): GgufValue => ({ type: 'u32', value });
  const kv: [string, GgufValue][] = [
    ['general.architecture', { type: 'str', value: 'qwen3' }],
    ['general.name', { type: 'str', value: o.name }],
    ['general.alignment', u32(GGUF_ALIGNMENT)],
    ['general.file_type', u32(GGML_TYPES[o.weights].fileType)],
    ['qwen3.context_length', u32(s.maxPositions)],
    ['qwen3.embedding_length', u32(s.hiddenSize)],
    ['qwen3.block_count', u32(s.layers)],
    ['qwen3.feed_forward_length', u32(s.intermediateSize)],
    ['qwen3.attention.head_count', u32(s.heads)],
    ['qwen3.attention.head_count_kv', u32(s.kvHeads)],
    ['qwen3.attention.key_length', u32(s.headDim)],
    ['qwen3.attention.value_length', u32(s.headDim)],
    ['qwen3.rope.freq_base', { type: 'f32', value: s.ropeTheta }],
    ['qwen3.attention.layer_norm_rms_epsilon', { type: 'f32', value: s.rmsEps }],
    ['tokenizer.ggml.model', { type: 'str', value: 'gpt2' }],
    ['tokenizer.ggml.pre', { type: 'str', value: 'qwen2' }],
    ['tokenizer.ggml.tokens', { type: 'strs', value: tok.tokens }],
    ['tokenizer.ggml.token_type', { type: 'i32s', value: tok.types }],
    ['tokenizer.ggml.merges', { type: 'strs', value: tok.merges }],
    ['tokenizer.ggml.eos_token_id', u32(tok.eosId)],
    ['tokenizer.ggml.padding_token_id', u32(tok.padId)],
    ['tokenizer.ggml.add_bos_token', { type: 'bool', value: false }],
  ];
  if (tok.bosId !== undefined) kv.push(['tokenizer.ggml.bos_token_id', u32(tok.bosId)]);
  if (o.chatTemplate !== undefined) kv.push(['tokenizer.chat_template', { type: 'str', value: o.chatTemplate }]);
  return kv;
}

/** Writes the GGUF at `path` (overwritten). */
export function writeQwen3Gguf(
  path: string,
  shape: Qwen3Shape,
  w: WeightSource,
  tok: GgufTokenizer,
  options: GgufWriteOptions,
): void {
  if (tok.tokens.length !== shape.vocabSize)
    throw new Error(`GGUF: ${tok.tokens.length} tokenizer entries for a ${shape.vocabSize}-token embedding`);
  const tensors = planTensors(shape, options.weights);
  const kv = metadata(shape, tok, options);
  const head = new HeaderBytes();
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
    offset = Math.ceil(offset / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;
    offsets.push(offset);
    head.str(t.name);
    head.u32(t.ne.length);
    for (const d of t.ne) head.u64(d);
    head.u32(GGML_TYPES[t.type].id);
    head.u64(offset);
    offset += tensorBytes(
      t.type,
      t.ne.reduce((a, b) => a * b, 1),
    );
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
    const dataStart = Math.ceil(at / GGUF_ALIGNMENT) * GGUF_ALIGNMENT;
    write(Buffer.alloc(dataStart - at));
    tensors.forEach((t, i) => {
      const target = dataStart + offsets[i];
      if (target > at) write(Buffer.alloc(target - at));
      options.onTensor?.(t.hf, i, tensors.length);
      if (!w.has(t.hf)) throw new Error(`checkpoint is missing tensor ${t.hf}`);
      write(encodeTensor(t.type, w.get(t.hf)));
    });
  } finally {
    closeSync(fd);
  }
}
