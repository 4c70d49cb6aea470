// The Qwen3 decoder graph in the "split cache, vector-matrix attention" layout (see docs/onnx-engine.md):
// the KV cache lives outside the graph in JS-owned buffers (K transposed), the graph returns only the
// new tokens' K/V and the last position's logits, so no large tensor is ever a graph output.
import { DataType } from './onnxProto';
import { attr, type GraphBuilder } from './graphBuilder';
import { quantizeQ4, Q4_BLOCK } from './quantize';
import { float32ToHalf } from './numeric';
import type { Qwen3Shape } from './qwen3Config';

export type Quantization = 'fp32' | 'q4';

/** The parts end to end in one array made by `make` (a single part is returned as it is). */
function concat<T extends Uint8Array | Float32Array>(parts: T[], make: (length: number) => T): T {
  if (parts.length === 1) return parts[0];
  const out = make(parts.reduce((a, p) => a + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

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
   * 'gqa': attention as one com.microsoft GroupQueryAttention per layer (RoPE inside when head_dim is a
   * multiple of 16), its cache [batch, kv, capacity, head_dim] both an input (`past_key.L`) and an output
   * (`present_key.L`) bound to the same buffer: only for onnxruntime's C API (ortNative.ts), since the
   * Node binding copies every output (gqaDecoder.ts).
   */
  layout?: 'split' | 'optimum' | 'gqa';
  /** MatMulNBits accuracy_level (0 = float compute, 4 = int8 compute); default 0. */
  accuracyLevel?: number;
  /**
   * RMSNorm as onnxruntime's one-kernel SimplifiedLayerNormalization instead of Pow, ReduceMean, Add,
   * Sqrt, Div and Mul (default true; split layout only).
   */
  fusedNorm?: boolean;
  /**
   * RoPE as com.microsoft RotaryEmbedding with cos/sin tables for every position instead of the
   * in-graph tables and the signed-permutation product (default true; split layout only).
   */
  fusedRope?: boolean;
  /**
   * Shared-prefix attention inputs (default true; split layout only): `shared_key.L` [kv, head_dim,
   * shared], `shared_value.L` [kv, shared, head_dim] and `shared_bias` [1, shared], one copy of a
   * prefix every row of the batch continues (the prompt of pass@n's samples), read once per step for
   * all rows; each row's own tokens stay in past_key / past_value. An empty prefix (shared = 0) is no
   * prefix.
   */
  sharedPrefix?: boolean;
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
  sharedBias: 'shared_bias',
  sharedKey: (l: number) => `shared_key.${l}`,
  sharedValue: (l: number) => `shared_value.${l}`,
  logits: 'logits',
  /** GQA layout: int32 [batch], each row's cached tokens + new tokens - 1; int32 [1], the longest row's total. */
  seqlensK: 'seqlens_k',
  totalSequenceLength: 'total_sequence_length',
  presentKey: (l: number) => `present_key.${l}`,
  presentValue: (l: number) => `present_value.${l}`,
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
  const gqa = options.layout === 'gqa';
  const fusedNorm = !optimum && (gqa || (options.fusedNorm ?? true));
  const fusedRope = !optimum && (gqa || (options.fusedRope ?? true));
  const shared = !optimum && !gqa && (options.sharedPrefix ?? true);
  // GroupQueryAttention's own RoPE needs head_dim % 16 == 0 (its cos/sin tables' width a multiple of 8);
  // other head sizes get RoPE from RotaryEmbedding and position ids, as in the split layout.
  const gqaRope = gqa && D % 16 === 0;
  g.input(io.inputIds, DataType.INT64, ['batch', 'seq']);
  if (optimum) g.input('attention_mask', DataType.INT64, ['batch', 'total']);
  if (!gqaRope) g.input(io.positionIds, DataType.INT64, ['batch', 'seq']);
  if (gqa) {
    g.input(io.seqlensK, DataType.INT32, ['batch']);
    g.input(io.totalSequenceLength, DataType.INT32, [1]);
  } else if (!optimum) {
    g.input(io.pastBias, DataType.FLOAT, ['batch', 'past']);
    g.input(io.newBias, DataType.FLOAT, ['batch', 'seq', 'seq']);
    g.input(io.logitsCount, DataType.INT64, [1]);
    g.input(io.invTemperature, DataType.FLOAT, [1]);
    if (shared) g.input(io.sharedBias, DataType.FLOAT, [1, 'shared']);
  }
  for (let l = 0; l < s.layers; l++) {
    if (gqa) {
      g.input(io.pastKey(l), DataType.FLOAT, ['batch', s.kvHeads, 'capacity', D]);
      g.input(io.pastValue(l), DataType.FLOAT, ['batch', s.kvHeads, 'capacity', D]);
    } else if (optimum) {
      g.input(`past_key_values.${l}.key`, DataType.FLOAT, ['batch', s.kvHeads, 'past', D]);
      g.input(`past_key_values.${l}.value`, DataType.FLOAT, ['batch', s.kvHeads, 'past', D]);
    } else {
      g.input(io.pastKey(l), DataType.FLOAT, ['batch', s.kvHeads, 1, D, 'past']);
      g.input(io.pastValue(l), DataType.FLOAT, ['batch', s.kvHeads, 1, 'past', D]);
      if (shared) {
        g.input(io.sharedKey(l), DataType.FLOAT, [s.kvHeads, D, 'shared']);
        g.input(io.sharedValue(l), DataType.FLOAT, [s.kvHeads, 'shared', D]);
      }
    }
  }

  /**
   * Linear layers reading the same input, as one matrix product split back into their outputs (q/k/v,
   * gate/up): one kernel instead of several. Each output column is computed as it would be alone (the
   * 4-bit blocks are per output row; the int8 activations at accuracy level 4 are per input).
   */
  const linears = (x: string, fused: string, layers: { name: string; outDim: number }[], inDim: number): string[] => {
    const total = layers.reduce((a, l) => a + l.outDim, 0);
    const matmul = (x: string, b: string, sc: string): string =>
      g.node(
        'MatMulNBits',
        [x, b, sc],
        {
          K: attr.int(inDim),
          N: attr.int(total),
          bits: attr.int(4),
          block_size: attr.int(Q4_BLOCK),
          accuracy_level: attr.int(options.accuracyLevel ?? 0),
        },
        { domain: 'com.microsoft' },
      );
    const split = (y: string): string[] =>
      layers.length === 1
        ? [y]
        : g.nodeN(
            'Split',
            [y, g.constInt64(layers.map((l) => l.outDim))],
            { axis: attr.int(-1) },
            {
              outputs: layers.length,
            },
          );
    // Weights another graph of this model already wrote (the GQA graph beside the split one): not computed again.
    if (quant === 'q4' && g.reuse(`${fused}.q4`) && g.reuse(`${fused}.scales`))
      return split(matmul(x, `${fused}.q4`, `${fused}.scales`));
    if (quant !== 'q4' && g.reuse(`${fused}.T`)) return split(g.node('MatMul', [x, `${fused}.T`]));
    const values = layers.map(({ name, outDim }) => {
      const v = weight(name);
      if (v.length !== outDim * inDim) throw new Error(`${name}: ${v.length} values, expected ${outDim}x${inDim}`);
      return v;
    });
    let y: string;
    if (quant === 'q4') {
      const blocks = inDim / Q4_BLOCK;
      const parts = values.map((v, i) => quantizeQ4(v, layers[i].outDim, inDim));
      const packed = concat(
        parts.map((q) => q.packed),
        (n) => new Uint8Array(n),
      );
      const scales = concat(
        parts.map((q) => q.scales),
        (n) => new Float32Array(n),
      );
      const b = g.initializer(`${fused}.q4`, DataType.UINT8, [total, blocks, Q4_BLOCK / 2], packed);
      const sc = g.initializer(`${fused}.scales`, DataType.FLOAT, [total * blocks], scales);
      y = matmul(x, b, sc);
    } else {
      const t = new Float32Array(inDim * total);
      let col = 0;
      values.forEach((v, li) => {
        const outDim = layers[li].outDim;
        for (let o = 0; o < outDim; o++) for (let i = 0; i < inDim; i++) t[i * total + col + o] = v[o * inDim + i];
        col += outDim;
      });
      y = g.node('MatMul', [x, g.initializer(`${fused}.T`, DataType.FLOAT, [inDim, total], t)]);
    }
    return split(y);
  };
  const linear = (x: string, name: string, outDim: number, inDim: number): string =>
    linears(x, name, [{ name, outDim }], inDim)[0];

  const eps = g.constFloat([s.rmsEps], []);
  const two = g.constFloat([2], []);
  /** A norm's weight as an initializer (times `scale`, under another name, when scaled). */
  const normWeight = (weightName: string, size: number, scale = 1): string => {
    let values = weight(weightName);
    if (values.length !== size) throw new Error(`${weightName}: ${values.length} values, expected ${size}`);
    if (scale !== 1) values = values.map((v) => v * scale);
    return g.initializer(scale === 1 ? weightName : `${weightName}.scaled`, DataType.FLOAT, [size], values);
  };
  const rmsNorm = (x: string, weightName: string, size: number, scale = 1): string => {
    const wName = normWeight(weightName, size, scale);
    if (fusedNorm)
      return g.node('SimplifiedLayerNormalization', [x, wName], {
        axis: attr.int(-1),
        epsilon: attr.float(s.rmsEps),
        stash_type: attr.int(1),
      });
    const meanSq = g.node('ReduceMean', [g.node('Pow', [x, two])], { axes: attr.ints([-1]), keepdims: attr.int(1) });
    const normed = g.node('Div', [x, g.node('Sqrt', [g.node('Add', [meanSq, eps])])]);
    return g.node('Mul', [normed, wName]);
  };
  /** The residual sum x + residual and its RMSNorm in one kernel (com.microsoft SkipSimplifiedLayerNormalization). */
  const addNorm = (x: string, residual: string, weightName: string, size: number): { normed: string; sum: string } => {
    const [normed, , , sum] = g.nodeN(
      'SkipSimplifiedLayerNormalization',
      [x, residual, normWeight(weightName, size)],
      { epsilon: attr.float(s.rmsEps) },
      { domain: 'com.microsoft', outputNames: [`${weightName}.normed`, '', '', `${weightName}.sum`] },
    );
    return { normed, sum };
  };

  const invFreq = new Float32Array(D / 2);
  for (let i = 0; i < D / 2; i++) invFreq[i] = 1 / s.ropeTheta ** ((2 * i) / D);
  let rope: (x: string, heads: number) => string;
  if (fusedRope) {
    // cos/sin of position × inv_freq for every position, [maxPositions, D/2] (computed in double, as
    // transformers computes inv_freq in float32 and the angle in float32: within rounding).
    const P = s.maxPositions;
    const cosT = new Float32Array(P * (D / 2));
    const sinT = new Float32Array(P * (D / 2));
    for (let p = 0; p < P; p++)
      for (let i = 0; i < D / 2; i++) {
        const a = Math.fround(p * invFreq[i]);
        cosT[p * (D / 2) + i] = Math.cos(a);
        sinT[p * (D / 2) + i] = Math.sin(a);
      }
    const cosName = g.initializer('rope.cos', DataType.FLOAT, [P, D / 2], cosT);
    const sinName = g.initializer('rope.sin', DataType.FLOAT, [P, D / 2], sinT);
    const flat = g.constInt64([0, 0, -1]);
    rope = (x, heads) =>
      g.node('Reshape', [
        g.node(
          'RotaryEmbedding',
          [g.node('Reshape', [x, flat]), io.positionIds, cosName, sinName],
          { interleaved: attr.int(0), num_heads: attr.int(heads) },
          { domain: 'com.microsoft' },
        ),
        g.constInt64([0, 0, heads, D]),
      ]);
  } else rope = inGraphRope(g, D, invFreq);

  const lastAxis = g.constInt64([-1]);
  const zero = g.constInt64([0]);
  const end = g.constInt64([INT64_MAX]);
  const masked = g.constFloat([-1e9], []);
  let attention: (l: number, q5: string, kr: string, v: string) => string;
  if (gqa) {
    attention = () => {
      throw new Error('internal: the GQA layout has its own attention');
    };
  } else if (optimum) {
    // Padding bias from attention_mask, causal bias from positions in the concatenated cache.
    const maskF = g.node('Cast', [g.node('Reshape', ['attention_mask', g.constInt64([0, 1, 1, 1, -1])])], {
      to: attr.int(DataType.FLOAT),
    });
    const padBias = g.node('Mul', [g.node('Sub', [g.constFloat([1], []), maskF]), masked]);
    const past = g.node('Squeeze', [
      g.node('Shape', ['past_key_values.0.key'], { start: attr.int(2), end: attr.int(3) }),
      zero,
    ]);
    const total = g.node('Squeeze', [
      g.node('Shape', ['attention_mask'], { start: attr.int(1), end: attr.int(2) }),
      zero,
    ]);
    const one = g.constInt64([1], []);
    const qPos = g.node('Unsqueeze', [g.node('Range', [past, total, one]), g.constInt64([1])]);
    const kPos = g.node('Unsqueeze', [g.node('Range', [g.constInt64([0], []), total, one]), zero]);
    const causal = g.node('Where', [g.node('Greater', [kPos, qPos]), masked, g.constFloat([0], [])]);
    const bias = g.node('Add', [padBias, causal]);
    attention = (l, q5, kr, v) => {
      const kAll = g.node(
        'Concat',
        [`past_key_values.${l}.key`, g.node('Transpose', [kr], { perm: attr.ints([0, 2, 1, 3]) })],
        { axis: attr.int(2) },
        { outputNames: [`present.${l}.key`] },
      );
      const vAll = g.node(
        'Concat',
        [`past_key_values.${l}.value`, g.node('Transpose', [v], { perm: attr.ints([0, 2, 1, 3]) })],
        { axis: attr.int(2) },
        { outputNames: [`present.${l}.value`] },
      );
      const kT = g.node('Unsqueeze', [
        g.node('Transpose', [kAll], { perm: attr.ints([0, 1, 3, 2]) }),
        g.constInt64([2]),
      ]);
      const probs = g.node('Softmax', [g.node('Add', [g.node('MatMul', [q5, kT]), bias])], { axis: attr.int(-1) });
      return g.node('MatMul', [probs, g.node('Unsqueeze', [vAll, g.constInt64([2])])]);
    };
  } else {
    const pastLen = g.node('Shape', [io.pastBias], { start: attr.int(1), end: attr.int(2) });
    const pastBias5 = g.node('Reshape', [io.pastBias, g.constInt64([0, 1, 1, 1, -1])]);
    const newBias5 = g.node('Unsqueeze', [io.newBias, g.constInt64([1, 2])]);
    // Shared prefix: every row's queries of one KV head as the rows of one matrix, [kv, batch·G·seq, D],
    // times that head's shared K [kv, D, shared] (each shared byte read once per step for all rows).
    let sharedScores: ((q5: string, l: number) => string) | undefined;
    let sharedContext: ((p: string, l: number) => string) | undefined;
    let sharedLen = '';
    let tailEnd = '';
    if (shared) {
      sharedLen = g.node('Shape', [io.sharedBias], { start: attr.int(1), end: attr.int(2) });
      tailEnd = g.node('Add', [sharedLen, pastLen]);
      const batch = g.node('Shape', [io.inputIds], { start: attr.int(0), end: attr.int(1) });
      const seq = g.node('Shape', [io.inputIds], { start: attr.int(1), end: attr.int(2) });
      const kvG = [g.constInt64([s.kvHeads]), batch, g.constInt64([G]), seq];
      const rowsShape = g.node('Concat', [...kvG, sharedLen], { axis: attr.int(0) });
      const ctxShape = g.node('Concat', [...kvG, g.constInt64([D])], { axis: attr.int(0) });
      const flatQ = g.constInt64([s.kvHeads, -1, D]);
      const flatP = g.node(
        'Concat',
        [g.constInt64([s.kvHeads]), g.node('Mul', [g.node('Mul', [batch, seq]), g.constInt64([G])]), sharedLen],
        {
          axis: attr.int(0),
        },
      );
      const headsFirst = attr.ints([1, 0, 2, 3, 4]);
      // The shapes hold the prefix length, which may be 0 (no prefix): a 0 there is a size, not "copy".
      const allowZero = { allowzero: attr.int(1) };
      sharedScores = (q5, l) => {
        const q = g.node('Reshape', [g.node('Transpose', [q5], { perm: headsFirst }), flatQ]);
        const scores = g.node('Add', [g.node('MatMul', [q, io.sharedKey(l)]), io.sharedBias]);
        return g.node('Transpose', [g.node('Reshape', [scores, rowsShape], allowZero)], { perm: headsFirst });
      };
      sharedContext = (p, l) => {
        const rows = g.node('Reshape', [g.node('Transpose', [p], { perm: headsFirst }), flatP], allowZero);
        const ctx = g.node('MatMul', [rows, io.sharedValue(l)]);
        return g.node('Transpose', [g.node('Reshape', [ctx, ctxShape])], { perm: headsFirst });
      };
    }
    attention = (l, q5, kr, v) => {
      g.node('Transpose', [kr], { perm: attr.ints([0, 2, 1, 3]) }, { outputNames: [io.newKey(l)] });
      g.node('Transpose', [v], { perm: attr.ints([0, 2, 1, 3]) }, { outputNames: [io.newValue(l)] });
      const kNewT = g.node('Unsqueeze', [
        g.node('Transpose', [kr], { perm: attr.ints([0, 2, 3, 1]) }),
        g.constInt64([2]),
      ]);
      const vNew = g.node('Unsqueeze', [io.newValue(l), g.constInt64([2])]);
      // Scores against the cache (vector-matrix, K stored transposed) and against the new tokens.
      const scoresPast = g.node('Add', [g.node('MatMul', [q5, io.pastKey(l)]), pastBias5]);
      const scoresNew = g.node('Add', [g.node('MatMul', [q5, kNewT]), newBias5]);
      if (sharedScores && sharedContext) {
        const probs = g.node(
          'Softmax',
          [g.node('Concat', [sharedScores(q5, l), scoresPast, scoresNew], { axis: attr.int(-1) })],
          { axis: attr.int(-1) },
        );
        const pShared = g.node('Slice', [probs, zero, sharedLen, lastAxis]);
        const pPast = g.node('Slice', [probs, sharedLen, tailEnd, lastAxis]);
        const pNew = g.node('Slice', [probs, tailEnd, end, lastAxis]);
        return g.node('Add', [
          g.node('Add', [sharedContext(pShared, l), g.node('MatMul', [pPast, io.pastValue(l)])]),
          g.node('MatMul', [pNew, vNew]),
        ]);
      }
      const probs = g.node('Softmax', [g.node('Concat', [scoresPast, scoresNew], { axis: attr.int(-1) })], {
        axis: attr.int(-1),
      });
      const pPast = g.node('Slice', [probs, zero, pastLen, lastAxis]);
      const pNew = g.node('Slice', [probs, pastLen, end, lastAxis]);
      return g.node('Add', [g.node('MatMul', [pPast, io.pastValue(l)]), g.node('MatMul', [pNew, vNew])]);
    };
  }

  const embedValues = weight('model.embed_tokens.weight');
  if (embedValues.length !== s.vocabSize * s.hiddenSize) {
    throw new Error(
      `model.embed_tokens.weight has ${embedValues.length} values, expected ${s.vocabSize}x${s.hiddenSize}`,
    );
  }
  let hidden: string;
  if (quant === 'q4') {
    const e = g.initializer(
      'model.embed_tokens.weight.f16',
      DataType.FLOAT16,
      [s.vocabSize, s.hiddenSize],
      float32ToHalf(embedValues),
    );
    hidden = g.node('Cast', [g.node('Gather', [e, io.inputIds])], { to: attr.int(DataType.FLOAT) });
  } else {
    g.initializer('model.embed_tokens.weight', DataType.FLOAT, [s.vocabSize, s.hiddenSize], embedValues);
    hidden = g.node('Gather', ['model.embed_tokens.weight', io.inputIds]);
  }

  const mlp = (h2: string, p: string): string => {
    const [gate, up] = linears(
      h2,
      `${p}.mlp.gate_up_proj`,
      [
        { name: `${p}.mlp.gate_proj.weight`, outDim: s.intermediateSize },
        { name: `${p}.mlp.up_proj.weight`, outDim: s.intermediateSize },
      ],
      s.hiddenSize,
    );
    const act = g.node('Mul', [g.node('Mul', [gate, g.node('Sigmoid', [gate])]), up]);
    return linear(act, `${p}.mlp.down_proj.weight`, s.hiddenSize, s.intermediateSize);
  };
  // The MLP output not yet added to the residual stream: added by the next layer's fused add + norm.
  let pending: string | undefined;
  for (let l = 0; l < s.layers; l++) {
    const p = `model.layers.${l}`;
    let h: string;
    if (pending) ({ normed: h, sum: hidden } = addNorm(pending, hidden, `${p}.input_layernorm.weight`, s.hiddenSize));
    else h = rmsNorm(hidden, `${p}.input_layernorm.weight`, s.hiddenSize);
    const [qLin, kLin, vLin] = linears(
      h,
      `${p}.self_attn.qkv_proj`,
      [
        { name: `${p}.self_attn.q_proj.weight`, outDim: s.heads * D },
        { name: `${p}.self_attn.k_proj.weight`, outDim: s.kvHeads * D },
        { name: `${p}.self_attn.v_proj.weight`, outDim: s.kvHeads * D },
      ],
      s.hiddenSize,
    );
    const q = g.node('Reshape', [qLin, g.constInt64([0, 0, s.heads, D])]);
    const k = g.node('Reshape', [kLin, g.constInt64([0, 0, s.kvHeads, D])]);
    const v = g.node('Reshape', [vLin, g.constInt64([0, 0, s.kvHeads, D])]);
    if (gqa) {
      // q_norm / k_norm per head, then GroupQueryAttention: RoPE (inside, or before it), the new K/V
      // written into the cache at each row's length, attention over each row's own length, scale 1/sqrt(D).
      let qn = rmsNorm(q, `${p}.self_attn.q_norm.weight`, D);
      let kn = rmsNorm(k, `${p}.self_attn.k_norm.weight`, D);
      if (!gqaRope) {
        qn = rope(qn, s.heads);
        kn = rope(kn, s.kvHeads);
      }
      const [ctx] = g.nodeN(
        'GroupQueryAttention',
        [
          g.node('Reshape', [qn, g.constInt64([0, 0, s.heads * D])]),
          g.node('Reshape', [kn, g.constInt64([0, 0, s.kvHeads * D])]),
          vLin,
          io.pastKey(l),
          io.pastValue(l),
          io.seqlensK,
          io.totalSequenceLength,
          ...(gqaRope ? ['rope.cos', 'rope.sin'] : []),
        ],
        {
          num_heads: attr.int(s.heads),
          kv_num_heads: attr.int(s.kvHeads),
          do_rotary: attr.int(gqaRope ? 1 : 0),
          rotary_interleaved: attr.int(0),
        },
        { domain: 'com.microsoft', outputNames: [`${p}.attn`, io.presentKey(l), io.presentValue(l)] },
      );
      const attnOut = linear(ctx, `${p}.self_attn.o_proj.weight`, s.hiddenSize, s.heads * D);
      const { normed: h2, sum } = addNorm(attnOut, hidden, `${p}.post_attention_layernorm.weight`, s.hiddenSize);
      hidden = sum;
      pending = mlp(h2, p);
      continue;
    }
    // The 1/sqrt(D) score scale is folded into q_norm's weight.
    const qr = rope(rmsNorm(q, `${p}.self_attn.q_norm.weight`, D, 1 / Math.sqrt(D)), s.heads);
    const kr = rope(rmsNorm(k, `${p}.self_attn.k_norm.weight`, D), s.kvHeads);
    // Queries grouped per KV head: [batch, kv, G, seq, D].
    const q5 = g.node('Transpose', [g.node('Reshape', [qr, g.constInt64([0, 0, s.kvHeads, G, D])])], {
      perm: attr.ints([0, 2, 3, 1, 4]),
    });
    const ctx = attention(l, q5, kr, v);
    const merged = g.node('Reshape', [
      g.node('Transpose', [ctx], { perm: attr.ints([0, 3, 1, 2, 4]) }),
      g.constInt64([0, 0, s.heads * D]),
    ]);
    const attnOut = linear(merged, `${p}.self_attn.o_proj.weight`, s.hiddenSize, s.heads * D);
    const { normed: h2, sum } = addNorm(attnOut, hidden, `${p}.post_attention_layernorm.weight`, s.hiddenSize);
    hidden = sum;
    pending = mlp(h2, p);
  }
  if (pending) hidden = g.node('Add', [hidden, pending]);

  // Logits for the last logits_count positions (the Optimum baseline: the last one): [batch, n, vocab].
  const from = optimum || gqa ? g.constInt64([-1]) : g.node('Neg', [io.logitsCount]);
  const last = g.node('Slice', [hidden, from, end, g.constInt64([1])]);
  const normed = rmsNorm(last, 'model.norm.weight', s.hiddenSize);
  const logitsName = optimum ? 'logits_last' : io.logits;
  const headName = s.tieWordEmbeddings || !w.has('lm_head.weight') ? 'model.embed_tokens.weight' : 'lm_head.weight';
  if (quant === 'q4' && g.reuse('lm_head.q4') && g.reuse('lm_head.scales')) {
    g.node(
      'MatMulNBits',
      [normed, 'lm_head.q4', 'lm_head.scales'],
      {
        K: attr.int(s.hiddenSize),
        N: attr.int(s.vocabSize),
        bits: attr.int(4),
        block_size: attr.int(Q4_BLOCK),
        accuracy_level: attr.int(options.accuracyLevel ?? 0),
      },
      { domain: 'com.microsoft', outputNames: [logitsName] },
    );
  } else if (quant === 'q4') {
    // Read again rather than kept: the embedding of a real checkpoint is hundreds of MB.
    const values = weight(headName);
    const q = quantizeQ4(values, s.vocabSize, s.hiddenSize);
    const blocks = s.hiddenSize / Q4_BLOCK;
    const b = g.initializer('lm_head.q4', DataType.UINT8, [s.vocabSize, blocks, Q4_BLOCK / 2], q.packed);
    const sc = g.initializer('lm_head.scales', DataType.FLOAT, [s.vocabSize * blocks], q.scales);
    g.node(
      'MatMulNBits',
      [normed, b, sc],
      {
        K: attr.int(s.hiddenSize),
        N: attr.int(s.vocabSize),
        bits: attr.int(4),
        block_size: attr.int(Q4_BLOCK),
        accuracy_level: attr.int(options.accuracyLevel ?? 0),
      },
      { domain: 'com.microsoft', outputNames: [logitsName] },
    );
  } else {
    if (headName === 'lm_head.weight')
      g.initializer('lm_head.weight', DataType.FLOAT, [s.vocabSize, s.hiddenSize], weight(headName));
    // Gemm on [batch * n, hidden] rows, back to [batch, n, vocab].
    const rows = g.node('Reshape', [normed, g.constInt64([-1, s.hiddenSize])]);
    const outShape = g.node(
      'Concat',
      [g.node('Shape', [normed], { start: attr.int(0), end: attr.int(2) }), g.constInt64([s.vocabSize])],
      { axis: attr.int(0) },
    );
    g.node(
      'Reshape',
      [g.node('Gemm', [rows, headName], { transB: attr.int(1) }), outShape],
      {},
      { outputNames: [logitsName] },
    );
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
  if (gqa) {
    g.output(io.logits, DataType.FLOAT, ['batch', 1, s.vocabSize]);
    for (let l = 0; l < s.layers; l++) {
      g.output(io.presentKey(l), DataType.FLOAT, ['batch', s.kvHeads, 'capacity', D]);
      g.output(io.presentValue(l), DataType.FLOAT, ['batch', s.kvHeads, 'capacity', D]);
    }
    return;
  }
  g.output(io.logits, DataType.FLOAT, ['batch', 'logits_count', s.vocabSize]);
  // Softmax at the temperature, fetched instead of the logits when sampling.
  g.node(
    'Softmax',
    [g.node('Mul', [io.logits, io.invTemperature])],
    { axis: attr.int(-1) },
    { outputNames: [io.probs] },
  );
  g.output(io.probs, DataType.FLOAT, ['batch', 'logits_count', s.vocabSize]);
  for (let l = 0; l < s.layers; l++) {
    g.output(io.newKey(l), DataType.FLOAT, ['batch', s.kvHeads, 'seq', D]);
    g.output(io.newValue(l), DataType.FLOAT, ['batch', s.kvHeads, 'seq', D]);
  }
}

/** RoPE from in-graph cos/sin tables of the positions and rotate_half as a signed permutation product. */
function inGraphRope(g: GraphBuilder, D: number, invFreq: Float32Array): (x: string) => string {
  // Rotary embedding tables from the positions: [batch, seq, 1, D].
  const pos = g.node('Unsqueeze', [
    g.node('Cast', [io.positionIds], { to: attr.int(DataType.FLOAT) }),
    g.constInt64([2]),
  ]);
  const freqs = g.node('Mul', [pos, g.initializer('rope.inv_freq', DataType.FLOAT, [D / 2], invFreq)]);
  const angles = g.node('Concat', [freqs, freqs], { axis: attr.int(-1) });
  const cos = g.node('Unsqueeze', [g.node('Cos', [angles]), g.constInt64([2])]);
  const sin = g.node('Unsqueeze', [g.node('Sin', [angles]), g.constInt64([2])]);
  // rotate_half(x) = concat(-x2, x1) as one product with a signed permutation matrix (exact: one
  // nonzero term per output), instead of Split, Neg and Concat.
  const rotateHalf = new Float32Array(D * D);
  for (let j = 0; j < D / 2; j++) {
    rotateHalf[(j + D / 2) * D + j] = -1;
    rotateHalf[j * D + j + D / 2] = 1;
  }
  const rotateHalfName = g.initializer('rope.rotate_half', DataType.FLOAT, [D, D], rotateHalf);
  return (x: string): string => {
    const rotated = g.node('MatMul', [x, rotateHalfName]);
    return g.node('Add', [g.node('Mul', [x, cos]), g.node('Mul', [rotated, sin])]);
  };
}
