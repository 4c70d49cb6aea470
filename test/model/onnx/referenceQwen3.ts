// An independent, slow, plain-JS Qwen3 forward pass (the Hugging Face modelling code's math, written
// loop by loop): the yardstick the ONNX graph is checked against. Returns the last position's logits.
import type { Qwen3Shape } from '../../../backend/model/onnx/qwen3Config';
import type { WeightSource } from '../../../backend/model/onnx/qwen3Graph';

function rmsNorm(x: Float64Array, w: Float32Array, eps: number, scale = 1): Float64Array {
  let ss = 0;
  for (const v of x) ss += v * v;
  const inv = 1 / Math.sqrt(ss / x.length + eps);
  return x.map((v, i) => v * inv * w[i] * scale);
}

/** y = W x for a [out, in] weight. */
function linear(w: Float32Array, x: Float64Array, out: number): Float64Array {
  const n = x.length;
  const y = new Float64Array(out);
  for (let o = 0; o < out; o++) {
    let acc = 0;
    for (let i = 0; i < n; i++) acc += w[o * n + i] * x[i];
    y[o] = acc;
  }
  return y;
}

function rope(v: Float64Array, pos: number, theta: number): Float64Array {
  const D = v.length;
  const out = new Float64Array(D);
  for (let i = 0; i < D / 2; i++) {
    const angle = pos * Math.fround(1 / theta ** ((2 * i) / D));
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    out[i] = v[i] * c - v[i + D / 2] * s;
    out[i + D / 2] = v[i + D / 2] * c + v[i] * s;
  }
  return out;
}

export function referenceLogits(s: Qwen3Shape, w: WeightSource, tokens: number[]): Float64Array {
  const H = s.hiddenSize;
  const D = s.headDim;
  const G = s.heads / s.kvHeads;
  const embed = w.get('model.embed_tokens.weight');
  let xs = tokens.map((t) => Float64Array.from(embed.subarray(t * H, (t + 1) * H)));
  for (let l = 0; l < s.layers; l++) {
    const p = `model.layers.${l}`;
    const keys: Float64Array[][] = [];
    const values: Float64Array[][] = [];
    const queries: Float64Array[][] = [];
    xs.forEach((x, pos) => {
      const h = rmsNorm(x, w.get(`${p}.input_layernorm.weight`), s.rmsEps);
      const q = linear(w.get(`${p}.self_attn.q_proj.weight`), h, s.heads * D);
      const k = linear(w.get(`${p}.self_attn.k_proj.weight`), h, s.kvHeads * D);
      const v = linear(w.get(`${p}.self_attn.v_proj.weight`), h, s.kvHeads * D);
      queries.push(
        Array.from({ length: s.heads }, (_, i) =>
          rope(
            rmsNorm(q.subarray(i * D, (i + 1) * D), w.get(`${p}.self_attn.q_norm.weight`), s.rmsEps),
            pos,
            s.ropeTheta,
          ),
        ),
      );
      keys.push(
        Array.from({ length: s.kvHeads }, (_, i) =>
          rope(
            rmsNorm(k.subarray(i * D, (i + 1) * D), w.get(`${p}.self_attn.k_norm.weight`), s.rmsEps),
            pos,
            s.ropeTheta,
          ),
        ),
      );
      values.push(Array.from({ length: s.kvHeads }, (_, i) => v.slice(i * D, (i + 1) * D)));
    });
    xs = xs.map((x, pos) => {
      const attn = new Float64Array(s.heads * D);
      for (let hd = 0; hd < s.heads; hd++) {
        const kv = Math.floor(hd / G);
        const scores = [];
        for (let j = 0; j <= pos; j++) {
          let dot = 0;
          for (let d = 0; d < D; d++) dot += queries[pos][hd][d] * keys[j][kv][d];
          scores.push(dot / Math.sqrt(D));
        }
        const max = Math.max(...scores);
        const e = scores.map((v) => Math.exp(v - max));
        const sum = e.reduce((a, b) => a + b, 0);
        for (let j = 0; j <= pos; j++) for (let d = 0; d < D; d++) attn[hd * D + d] += (e[j] / sum) * values[j][kv][d];
      }
      const o = linear(w.get(`${p}.self_attn.o_proj.weight`), attn, H);
      const x1 = x.map((v, i) => v + o[i]);
      const h2 = rmsNorm(x1, w.get(`${p}.post_attention_layernorm.weight`), s.rmsEps);
      const gate = linear(w.get(`${p}.mlp.gate_proj.weight`), h2, s.intermediateSize);
      const up = linear(w.get(`${p}.mlp.up_proj.weight`), h2, s.intermediateSize);
      const act = gate.map((g, i) => (g / (1 + Math.exp(-g))) * up[i]);
      const down = linear(w.get(`${p}.mlp.down_proj.weight`), act, H);
      return x1.map((v, i) => v + down[i]);
    });
  }
  const last = rmsNorm(xs[xs.length - 1], w.get('model.norm.weight'), s.rmsEps);
  const head = s.tieWordEmbeddings || !w.has('lm_head.weight') ? embed : w.get('lm_head.weight');
  return linear(head, last, s.vocabSize);
}
