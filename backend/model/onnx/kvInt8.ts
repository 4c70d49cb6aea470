// The int8 KV cache of the C API path (onnx/model.gqa8.onnx): the GQA graph with each layer's cache stored
// as int8, one float scale per channel (kv head × head_dim) for K and for V, quantized by
// GroupQueryAttention itself as it appends the new tokens (onnxruntime 1.30's k_scale / v_scale inputs,
// PER_CHANNEL, 8 bits) and dequantized where it reads them. A quarter of the float32 cache's bytes.
//
// The scales are static, so they come from a calibration: the float32 GQA graph prefills a Kimina-style
// text and each channel's largest |K| and |V| over it (times CALIBRATION_MARGIN) maps to 127; values beyond
// are clipped. Derived from the float32 GQA graph (same weights, same external data), never built again.
import { DataType, type GraphDef, type Initializer, type NodeDef } from './onnxProto';
import { io } from './qwen3Graph';

/** Headroom over the calibration text's largest value per channel (longer contexts reach further). */
const CALIBRATION_MARGIN = 1.5;

/** A Kimina-format exchange (a competition statement, a think block, a Lean proof) to calibrate the int8 cache on. */
export const CALIBRATION_TEXT = `<|im_start|>system
You are an expert in mathematics and proving theorems in Lean 4.<|im_end|>
<|im_start|>user
Think about and solve the following problems step by step in Lean 4.
# Problem: Let $x$ be a real number with $2x + 3 = 11$. Show that $x = 4$.
# Formal Statement:
\`\`\`lean4
import Mathlib
import Aesop

set_option maxHeartbeats 400000

open BigOperators Real Nat Topology Rat

theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry
\`\`\`<|im_end|>
<|im_start|>assistant
<think>
We need to prove that x = 4 given 2 * x + 3 = 11. Subtracting 3 from both sides gives 2 * x = 8, and dividing by 2
gives x = 4. In Lean 4 with Mathlib, \`linarith\` closes linear arithmetic goals over ordered fields, so it should
solve this directly from h₀. Alternatively: have h₁ : 2 * x = 8 := by linarith, then field_simp or nlinarith.
Let me double-check the arithmetic: 2 * 4 + 3 = 8 + 3 = 11. Yes. Also consider whether the coercions matter: x is
real, the literals 2, 3, 11, 4 are real numerals, so norm_num can evaluate them. The proof:
  have h₁ : 2 * x = 8 := by linarith
  have h₂ : x = 4 := by linarith
  exact h₂
</think>
\`\`\`lean4
theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  have h₁ : 2 * x = 8 := by linarith
  have h₂ : x = 4 := by
    apply mul_left_cancel₀ (show (2 : ℝ) ≠ 0 by norm_num)
    linarith
  exact h₂
\`\`\`<|im_end|>
<|im_start|>user
# Error 1:
Error message:
unknown identifier 'bogus_lemma'
Lean 4 code snippet with error:
\`\`\`lean4
004 >|   exact bogus_lemma h₁
\`\`\`<|im_end|>
<|im_start|>assistant
<think>
The lemma does not exist; use nlinarith [sq_nonneg (x - 4), h₀] or simply linarith [h₀].
</think>`;

export interface KvScales {
  /** Per layer, [kv * head_dim]: the value one int8 step stands for. */
  k: Float32Array[];
  v: Float32Array[];
}

/**
 * Per-channel scales from a float32 cache [rows, kv, capacity, head_dim] per layer holding `lengths[r]` tokens
 * per row: max |x| over the filled slots × margin / 127 (at least a tiny positive value).
 */
export function scalesFromCache(
  keys: Float32Array[],
  values: Float32Array[],
  shape: { kvHeads: number; headDim: number; capacity: number },
  lengths: number[],
  margin = CALIBRATION_MARGIN,
): KvScales {
  const { kvHeads, headDim, capacity } = shape;
  const of = (a: Float32Array) => {
    const s = new Float32Array(kvHeads * headDim);
    lengths.forEach((len, r) => {
      for (let h = 0; h < kvHeads; h++)
        for (let t = 0; t < len; t++) {
          const at = ((r * kvHeads + h) * capacity + t) * headDim;
          for (let d = 0; d < headDim; d++) s[h * headDim + d] = Math.max(s[h * headDim + d], Math.abs(a[at + d]));
        }
    });
    return s.map((m) => Math.max((m * margin) / 127, 1e-8));
  };
  return { k: keys.map(of), v: values.map(of) };
}

const GQA_K_SCALE_INPUT = 12;

/** The float32 GQA graph with an int8 cache quantized per channel by the scales. */
export function int8CacheGraph(graph: GraphDef, scales: KvScales): GraphDef {
  const layers = graph.inputs.filter((i) => i.name.startsWith('past_key.')).length;
  if (layers === 0 || scales.k.length !== layers) throw new Error('internal: int8CacheGraph needs the GQA layout');
  const cache = new Set(
    Array.from({ length: layers }, (_, l) => [
      io.pastKey(l),
      io.pastValue(l),
      io.presentKey(l),
      io.presentValue(l),
    ]).flat(),
  );
  const initializers: Initializer[] = [...graph.initializers];
  const scale = (name: string, values: Float32Array): string => {
    initializers.push({
      name,
      type: DataType.FLOAT,
      dims: [values.length],
      raw: new Uint8Array(values.slice().buffer),
    });
    return name;
  };
  const nodes: NodeDef[] = graph.nodes.map((node) => {
    if (node.opType !== 'GroupQueryAttention') return node;
    const l = Number(/^past_key\.(\d+)$/.exec(node.inputs[3])?.[1]);
    if (!(l >= 0)) throw new Error(`internal: ${node.name} does not read a past_key.L input`);
    const inputs = [...node.inputs];
    while (inputs.length < GQA_K_SCALE_INPUT) inputs.push('');
    inputs.push(scale(`kv.k_scale.${l}`, scales.k[l]), scale(`kv.v_scale.${l}`, scales.v[l]));
    return {
      ...node,
      inputs,
      attributes: {
        ...node.attributes,
        k_quant_type: { kind: 'string', value: 'PER_CHANNEL' },
        v_quant_type: { kind: 'string', value: 'PER_CHANNEL' },
        kv_cache_bit_width: { kind: 'int', value: 8 },
      },
    };
  });
  return {
    ...graph,
    nodes,
    initializers,
    inputs: graph.inputs.map((i) => (cache.has(i.name) ? { ...i, type: DataType.INT8 } : i)),
    outputs: graph.outputs.map((o) => (cache.has(o.name) ? { ...o, type: DataType.INT8 } : o)),
  };
}
