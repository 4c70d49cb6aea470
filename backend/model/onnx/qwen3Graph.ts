// The Qwen3 decoder graph in the "split cache, vector-matrix attention" layout (see docs/onnx-engine.md):
// the KV cache lives outside the graph in JS-owned buffers (K transposed), the graph returns only the
// new tokens' K/V and the last position's logits, so no large tensor is ever a graph output.
import { DataType } from './onnxProto';
import { attr, GraphBuilder } from './graphBuilder';
import { quantizeQ4, Q4_BLOCK } from './quantize';
import { float32ToHalf } from './numeric';
import type { Qwen3Shape } from './qwen3Config';

export type Quantization = 'fp32' | 'q4';

/** Hugging Face tensor names -> float32 values (row-major, Linear weights as [out, in]). */
export interface WeightSource {
  get(name: string): Float32Array;
  has(name: string): boolean;
}

export interface Qwen3GraphOptions {
  quant: Quantization;
  /**
   * 'split' (default): our layout. 'optimum': the usual export (past_key_values.N.* in, present.N.*
   * = Concat(past, new) out, attention_mask), kept only as the benchmark's baseline for transformers.js.
   */
  layout?: 'split' | 'optimum';
  /** MatMulNBits accuracy_level (0 = float compute, 4 = int8 compute); default 0. */
  accuracyLevel?: number;
  onTensor?: (name: string) => void;
}

/** Graph input/output names shared with the decoder. */
export const io = {
  inputIds: 'input_ids',
  positionIds: 'position_ids',
  pastBias: 'past_bias',
  newBias: 'new_bias',
  /** int64 [1]: how many trailing positions get logits (1 when decoding; k + 1 when verifying k drafts). */
  logitsCount: 'logits_count',
  /** float [1]: 1 / temperature for the `probs` output (sampling's softmax done in the graph). */
  invTemperature: 'inv_temperature',
  probs: 'probs',
  pastKey: (l: number) => `past_key.${l}`,
  pastValue: (l: number) => `past_value.${l}`,
  logits: 'logits',
  newKey: (l: number) => `new_key.${l}`,
  newValue: (l: number) => `new_value.${l}`,
};

const INT64_MAX = 9.2e18;

export function buildQwen3Graph(g: GraphBuilder, s: Qwen3Shape, w: WeightSource, options: Qwen3GraphOptions): void {
  const { quant } = options;
  const D = s.headDim;
  const G = s.heads / s.kvHeads;
  const weight = (name: string): Float32Array => {
    if (!w.has(name)) throw new Error(`checkpoint is missing tensor ${name}`);
    options.onTensor?.(name);
    return w.get(name);
  };

  const optimum = options.layout === 'optimum';
  g.input(io.inputIds, DataType.INT64, ['batch', 'seq']);
  if (optimum) g.input('attention_mask', DataType.INT64, ['batch', 'total']);
  g.input(io.positionIds, DataType.INT64, ['batch', 'seq']);
  if (!optimum) {
    g.input(io.pastBias, DataType.FLOAT, ['batch', 'past']);
    g.input(io.newBias, DataType.FLOAT, ['batch', 'seq', 'seq']);
    g.input(io.logitsCount, DataType.INT64, [1]);
    g.input(io.invTemperature, DataType.FLOAT, [1]);
  }
  for (let l = 0; l < s.layers; l++) {
    if (optimum) {
      g.input(`past_key_values.${l}.key`, DataType.FLOAT, ['batch', s.kvHeads, 'past', D]);
      g.input(`past_key_values.${l}.value`, DataType.FLOAT, ['batch', s.kvHeads, 'past', D]);
    } else {
      g.input(io.pastKey(l), DataType.FLOAT, ['batch', s.kvHeads, 1, D, 'past']);
      g.input(io.pastValue(l), DataType.FLOAT, ['batch', s.kvHeads, 1, 'past', D]);
    }
  }

  const linear = (x: string, name: string, outDim: number, inDim: number): string => {
    const values = weight(name);
    if (values.length !== outDim * inDim) throw new Error(`${name}: ${values.length} values, expected ${outDim}x${inDim}`);
    if (quant === 'q4') {
      const q = quantizeQ4(values, outDim, inDim);
      const blocks = inDim / Q4_BLOCK;
      const b = g.initializer(`${name}.q4`, DataType.UINT8, [outDim, blocks, Q4_BLOCK / 2], q.packed);
      const sc = g.initializer(`${name}.scales`, DataType.FLOAT, [outDim * blocks], q.scales);
      return g.node('MatMulNBits', [x, b, sc], {
        K: attr.int(inDim), N: attr.int(outDim), bits: attr.int(4), block_size: attr.int(Q4_BLOCK),
        accuracy_level: attr.int(options.accuracyLevel ?? 0),
      }, { domain: 'com.microsoft' });
    }
    const t = new Float32Array(values.length);
    for (let o = 0; o < outDim; o++) for (let i = 0; i < inDim; i++) t[i * outDim + o] = values[o * inDim + i];
    return g.node('MatMul', [x, g.initializer(`${name}.T`, DataType.FLOAT, [inDim, outDim], t)]);
  };

  const eps = g.constFloat([s.rmsEps], []);
  const two = g.constFloat([2], []);
  const rmsNorm = (x: string, weightName: string, size: number, scale = 1): string => {
    let values = weight(weightName);
    if (values.length !== size) throw new Error(`${weightName}: ${values.length} values, expected ${size}`);
    if (scale !== 1) values = values.map((v) => v * scale);
    const wName = g.initializer(scale === 1 ? weightName : `${weightName}.scaled`, DataType.FLOAT, [size], values);
    const meanSq = g.node('ReduceMean', [g.node('Pow', [x, two])], { axes: attr.ints([-1]), keepdims: attr.int(1) });
    const normed = g.node('Div', [x, g.node('Sqrt', [g.node('Add', [meanSq, eps])])]);
    return g.node('Mul', [normed, wName]);
  };

  // Rotary embedding tables from the positions: [batch, seq, 1, D].
  const invFreq = new Float32Array(D / 2);
  for (let i = 0; i < D / 2; i++) invFreq[i] = 1 / Math.pow(s.ropeTheta, (2 * i) / D);
  const pos = g.node('Unsqueeze', [g.node('Cast', [io.positionIds], { to: attr.int(DataType.FLOAT) }), g.constInt64([2])]);
  const freqs = g.node('Mul', [pos, g.initializer('rope.inv_freq', DataType.FLOAT, [D / 2], invFreq)]);
  const angles = g.node('Concat', [freqs, freqs], { axis: attr.int(-1) });
  const cos = g.node('Unsqueeze', [g.node('Cos', [angles]), g.constInt64([2])]);
  const sin = g.node('Unsqueeze', [g.node('Sin', [angles]), g.constInt64([2])]);
  const halves = g.constInt64([D / 2, D / 2]);
  const rope = (x: string): string => {
    const [x1, x2] = g.nodeN('Split', [x, halves], { axis: attr.int(-1) }, { outputs: 2 });
    const rotated = g.node('Concat', [g.node('Neg', [x2]), x1], { axis: attr.int(-1) });
    return g.node('Add', [g.node('Mul', [x, cos]), g.node('Mul', [rotated, sin])]);
  };

  const lastAxis = g.constInt64([-1]);
  const zero = g.constInt64([0]);
  const end = g.constInt64([INT64_MAX]);
  const masked = g.constFloat([-1e9], []);
  let attention: (l: number, q5: string, kr: string, v: string) => string;
  if (optimum) {
    // Padding bias from attention_mask, causal bias from positions in the concatenated cache.
    const maskF = g.node('Cast', [g.node('Reshape', ['attention_mask', g.constInt64([0, 1, 1, 1, -1])])], { to: attr.int(DataType.FLOAT) });
    const padBias = g.node('Mul', [g.node('Sub', [g.constFloat([1], []), maskF]), masked]);
    const past = g.node('Squeeze', [g.node('Shape', ['past_key_values.0.key'], { start: attr.int(2), end: attr.int(3) }), zero]);
    const total = g.node('Squeeze', [g.node('Shape', ['attention_mask'], { start: attr.int(1), end: attr.int(2) }), zero]);
    const one = g.constInt64([1], []);
    const qPos = g.node('Unsqueeze', [g.node('Range', [past, total, one]), g.constInt64([1])]);
    const kPos = g.node('Unsqueeze', [g.node('Range', [g.constInt64([0], []), total, one]), zero]);
    const causal = g.node('Where', [g.node('Greater', [kPos, qPos]), masked, g.constFloat([0], [])]);
    const bias = g.node('Add', [padBias, causal]);
    attention = (l, q5, kr, v) => {
      const kAll = g.node('Concat', [`past_key_values.${l}.key`, g.node('Transpose', [kr], { perm: attr.ints([0, 2, 1, 3]) })], { axis: attr.int(2) }, { outputNames: [`present.${l}.key`] });
      const vAll = g.node('Concat', [`past_key_values.${l}.value`, g.node('Transpose', [v], { perm: attr.ints([0, 2, 1, 3]) })], { axis: attr.int(2) }, { outputNames: [`present.${l}.value`] });
      const kT = g.node('Unsqueeze', [g.node('Transpose', [kAll], { perm: attr.ints([0, 1, 3, 2]) }), g.constInt64([2])]);
      const probs = g.node('Softmax', [g.node('Add', [g.node('MatMul', [q5, kT]), bias])], { axis: attr.int(-1) });
      return g.node('MatMul', [probs, g.node('Unsqueeze', [vAll, g.constInt64([2])])]);
    };
  } else {
    const pastLen = g.node('Shape', [io.pastBias], { start: attr.int(1), end: attr.int(2) });
    const pastBias5 = g.node('Reshape', [io.pastBias, g.constInt64([0, 1, 1, 1, -1])]);
    const newBias5 = g.node('Unsqueeze', [io.newBias, g.constInt64([1, 2])]);
    attention = (l, q5, kr, v) => {
      g.node('Transpose', [kr], { perm: attr.ints([0, 2, 1, 3]) }, { outputNames: [io.newKey(l)] });
      g.node('Transpose', [v], { perm: attr.ints([0, 2, 1, 3]) }, { outputNames: [io.newValue(l)] });
      const kNewT = g.node('Unsqueeze', [g.node('Transpose', [kr], { perm: attr.ints([0, 2, 3, 1]) }), g.constInt64([2])]);
      const vNew = g.node('Unsqueeze', [io.newValue(l), g.constInt64([2])]);
      // Scores against the cache (vector-matrix, K stored transposed) and against the new tokens.
      const scoresPast = g.node('Add', [g.node('MatMul', [q5, io.pastKey(l)]), pastBias5]);
      const scoresNew = g.node('Add', [g.node('MatMul', [q5, kNewT]), newBias5]);
      const probs = g.node('Softmax', [g.node('Concat', [scoresPast, scoresNew], { axis: attr.int(-1) })], { axis: attr.int(-1) });
      const pPast = g.node('Slice', [probs, zero, pastLen, lastAxis]);
      const pNew = g.node('Slice', [probs, pastLen, end, lastAxis]);
      return g.node('Add', [g.node('MatMul', [pPast, io.pastValue(l)]), g.node('MatMul', [pNew, vNew])]);
    };
  }

  const embedValues = weight('model.embed_tokens.weight');
  if (embedValues.length !== s.vocabSize * s.hiddenSize) {
    throw new Error(`model.embed_tokens.weight has ${embedValues.length} values, expected ${s.vocabSize}x${s.hiddenSize}`);
  }
  let hidden: string;
  if (quant === 'q4') {
    const e = g.initializer('model.embed_tokens.weight.f16', DataType.FLOAT16, [s.vocabSize, s.hiddenSize], float32ToHalf(embedValues));
    hidden = g.node('Cast', [g.node('Gather', [e, io.inputIds])], { to: attr.int(DataType.FLOAT) });
  } else {
    g.initializer('model.embed_tokens.weight', DataType.FLOAT, [s.vocabSize, s.hiddenSize], embedValues);
    hidden = g.node('Gather', ['model.embed_tokens.weight', io.inputIds]);
  }

  for (let l = 0; l < s.layers; l++) {
    const p = `model.layers.${l}`;
    const h = rmsNorm(hidden, `${p}.input_layernorm.weight`, s.hiddenSize);
    const q = g.node('Reshape', [linear(h, `${p}.self_attn.q_proj.weight`, s.heads * D, s.hiddenSize), g.constInt64([0, 0, s.heads, D])]);
    const k = g.node('Reshape', [linear(h, `${p}.self_attn.k_proj.weight`, s.kvHeads * D, s.hiddenSize), g.constInt64([0, 0, s.kvHeads, D])]);
    const v = g.node('Reshape', [linear(h, `${p}.self_attn.v_proj.weight`, s.kvHeads * D, s.hiddenSize), g.constInt64([0, 0, s.kvHeads, D])]);
    // The 1/sqrt(D) score scale is folded into q_norm's weight.
    const qr = rope(rmsNorm(q, `${p}.self_attn.q_norm.weight`, D, 1 / Math.sqrt(D)));
    const kr = rope(rmsNorm(k, `${p}.self_attn.k_norm.weight`, D));
    // Queries grouped per KV head: [batch, kv, G, seq, D].
    const q5 = g.node('Transpose', [g.node('Reshape', [qr, g.constInt64([0, 0, s.kvHeads, G, D])])], { perm: attr.ints([0, 2, 3, 1, 4]) });
    const ctx = attention(l, q5, kr, v);
    const merged = g.node('Reshape', [g.node('Transpose', [ctx], { perm: attr.ints([0, 3, 1, 2, 4]) }), g.constInt64([0, 0, s.heads * D])]);
    hidden = g.node('Add', [hidden, linear(merged, `${p}.self_attn.o_proj.weight`, s.hiddenSize, s.heads * D)]);

    const h2 = rmsNorm(hidden, `${p}.post_attention_layernorm.weight`, s.hiddenSize);
    const gate = linear(h2, `${p}.mlp.gate_proj.weight`, s.intermediateSize, s.hiddenSize);
    const up = linear(h2, `${p}.mlp.up_proj.weight`, s.intermediateSize, s.hiddenSize);
    const act = g.node('Mul', [g.node('Mul', [gate, g.node('Sigmoid', [gate])]), up]);
    hidden = g.node('Add', [hidden, linear(act, `${p}.mlp.down_proj.weight`, s.hiddenSize, s.intermediateSize)]);
  }

  // Logits for the last logits_count positions (the Optimum baseline: the last one): [batch, n, vocab].
  const from = optimum ? g.constInt64([-1]) : g.node('Neg', [io.logitsCount]);
  const last = g.node('Slice', [hidden, from, end, g.constInt64([1])]);
  const normed = rmsNorm(last, 'model.norm.weight', s.hiddenSize);
  const logitsName = optimum ? 'logits_last' : io.logits;
  const headName = s.tieWordEmbeddings || !w.has('lm_head.weight') ? 'model.embed_tokens.weight' : 'lm_head.weight';
  if (quant === 'q4') {
    // Read again rather than kept: the embedding of a real checkpoint is hundreds of MB.
    const values = weight(headName);
    const q = quantizeQ4(values, s.vocabSize, s.hiddenSize);
    const blocks = s.hiddenSize / Q4_BLOCK;
    const b = g.initializer('lm_head.q4', DataType.UINT8, [s.vocabSize, blocks, Q4_BLOCK / 2], q.packed);
    const sc = g.initializer('lm_head.scales', DataType.FLOAT, [s.vocabSize * blocks], q.scales);
    g.node('MatMulNBits', [normed, b, sc], {
      K: attr.int(s.hiddenSize), N: attr.int(s.vocabSize), bits: attr.int(4), block_size: attr.int(Q4_BLOCK),
      accuracy_level: attr.int(options.accuracyLevel ?? 0),
    }, { domain: 'com.microsoft', outputNames: [logitsName] });
  } else {
    if (headName === 'lm_head.weight') g.initializer('lm_head.weight', DataType.FLOAT, [s.vocabSize, s.hiddenSize], weight(headName));
    // Gemm on [batch * n, hidden] rows, back to [batch, n, vocab].
    const rows = g.node('Reshape', [normed, g.constInt64([-1, s.hiddenSize])]);
    const outShape = g.node('Concat', [g.node('Shape', [normed], { start: attr.int(0), end: attr.int(2) }), g.constInt64([s.vocabSize])], { axis: attr.int(0) });
    g.node('Reshape', [g.node('Gemm', [rows, headName], { transB: attr.int(1) }), outShape], {}, { outputNames: [logitsName] });
  }

  if (optimum) {
    // transformers.js reads logits[:, -1]: the last position as [batch, 1, vocab].
    g.node('Identity', [logitsName], {}, { outputNames: ['logits'] });
    g.output('logits', DataType.FLOAT, ['batch', 1, s.vocabSize]);
    for (let l = 0; l < s.layers; l++) {
      g.output(`present.${l}.key`, DataType.FLOAT, ['batch', s.kvHeads, 'total', D]);
      g.output(`present.${l}.value`, DataType.FLOAT, ['batch', s.kvHeads, 'total', D]);
    }
    return;
  }
  g.output(io.logits, DataType.FLOAT, ['batch', 'logits_count', s.vocabSize]);
  // Softmax at the temperature, fetched instead of the logits when sampling.
  g.node('Softmax', [g.node('Mul', [io.logits, io.invTemperature])], { axis: attr.int(-1) }, { outputNames: [io.probs] });
  g.output(io.probs, DataType.FLOAT, ['batch', 'logits_count', s.vocabSize]);
  for (let l = 0; l < s.layers; l++) {
    g.output(io.newKey(l), DataType.FLOAT, ['batch', s.kvHeads, 'seq', D]);
    g.output(io.newValue(l), DataType.FLOAT, ['batch', s.kvHeads, 'seq', D]);
  }
}
