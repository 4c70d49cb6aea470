// The Qwen3 shape read from a Hugging Face config.json, checked for what our graph supports.

export interface Qwen3Shape {
  vocabSize: number;
  hiddenSize: number;
  layers: number;
  heads: number;
  kvHeads: number;
  headDim: number;
  intermediateSize: number;
  ropeTheta: number;
  rmsEps: number;
  tieWordEmbeddings: boolean;
  maxPositions: number;
}

function num(cfg: Record<string, unknown>, key: string, fallback?: number): number {
  const v = cfg[key];
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (fallback !== undefined) return fallback;
  throw new Error(`config.json: "${key}" is missing or not a number`);
}

type Json = Record<string, unknown>;

/**
 * The rotary settings: transformers 4.x writes `rope_theta` at the top level and optional
 * `rope_scaling`; transformers >= 5 writes `rope_parameters` ({ rope_type, rope_theta, ... }), which
 * wins when both are present (as in transformers). Only the default rotary embedding is supported.
 */
function ropeTheta(cfg: Json): number {
  const params = cfg.rope_parameters as Json | null | undefined;
  const scaling = cfg.rope_scaling as Json | null | undefined;
  for (const [key, value] of [
    ['rope_parameters', params],
    ['rope_scaling', scaling],
  ] as const) {
    if (value === undefined || value === null) continue;
    if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`config.json: "${key}" must be an object`);
    const type = value.rope_type ?? value.type ?? (key === 'rope_parameters' ? 'default' : undefined);
    if (type === undefined && key === 'rope_scaling')
      throw new Error('config.json: rope_scaling without a rope_type is not supported by the ONNX engine');
    if (type !== 'default') {
      throw new Error(
        `config.json: ${key} "${String(type)}" (rope_type) is not supported by the ONNX engine: only the default rotary embedding can be converted`,
      );
    }
    const partial = value.partial_rotary_factor;
    if (partial !== undefined && partial !== 1)
      throw new Error(`config.json: ${key}.partial_rotary_factor ${String(partial)} is not supported (1 only)`);
  }
  if (params && params.rope_theta !== undefined) {
    if (typeof params.rope_theta !== 'number' || !(params.rope_theta > 0))
      throw new Error('config.json: rope_parameters.rope_theta must be a positive number');
    return params.rope_theta;
  }
  return num(cfg, 'rope_theta', 1_000_000);
}

/** Fields that change the math and that our graph does not implement: refused, never ignored. */
function refuseUnsupported(cfg: Json, layers: number): void {
  const refuse = (what: string) => {
    throw new Error(
      `config.json: ${what} is not supported by the ONNX engine (the converted model would compute something else)`,
    );
  };
  if (cfg.attention_bias === true) refuse('attention_bias true (biases on q/k/v/o projections)');
  if (cfg.mlp_bias === true) refuse('mlp_bias true');
  const act = cfg.hidden_act;
  if (act !== undefined && act !== 'silu' && act !== 'swish') refuse(`hidden_act "${String(act)}" (silu only)`);
  const layerTypes = cfg.layer_types;
  if (Array.isArray(layerTypes) && layerTypes.some((t) => t !== 'full_attention'))
    refuse(`layer_types with "${String(layerTypes.find((t) => t !== 'full_attention'))}" layers (full attention only)`);
  if (cfg.use_sliding_window === true && typeof cfg.sliding_window === 'number') {
    // transformers' Qwen3: layers from max_window_layers on use the sliding window.
    const firstSliding = typeof cfg.max_window_layers === 'number' ? cfg.max_window_layers : 0;
    if (firstSliding < layers)
      refuse(
        `a sliding window (use_sliding_window true, sliding_window ${cfg.sliding_window}, max_window_layers ${firstSliding})`,
      );
  }
}

export function qwen3ShapeFromConfig(cfg: Json): Qwen3Shape {
  const type = cfg.model_type;
  if (type !== undefined && type !== 'qwen3') {
    throw new Error(`config.json: model_type "${String(type)}" is not supported by the ONNX engine (qwen3 only)`);
  }
  const heads = num(cfg, 'num_attention_heads');
  const hiddenSize = num(cfg, 'hidden_size');
  const layers = num(cfg, 'num_hidden_layers');
  refuseUnsupported(cfg, layers);
  const shape: Qwen3Shape = {
    vocabSize: num(cfg, 'vocab_size'),
    hiddenSize,
    layers,
    heads,
    kvHeads: num(cfg, 'num_key_value_heads', heads),
    headDim: num(cfg, 'head_dim', hiddenSize / heads),
    intermediateSize: num(cfg, 'intermediate_size'),
    ropeTheta: ropeTheta(cfg),
    rmsEps: num(cfg, 'rms_norm_eps', 1e-6),
    tieWordEmbeddings: cfg.tie_word_embeddings === true,
    maxPositions: num(cfg, 'max_position_embeddings', 40960),
  };
  if (shape.heads % shape.kvHeads !== 0)
    throw new Error('config.json: num_attention_heads must be a multiple of num_key_value_heads');
  if (shape.headDim % 2 !== 0) throw new Error('config.json: head_dim must be even');
  return shape;
}

/** A config.json for a shape (what our folders and converters write). */
export function configForShape(s: Qwen3Shape, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    architectures: ['Qwen3ForCausalLM'],
    model_type: 'qwen3',
    vocab_size: s.vocabSize,
    hidden_size: s.hiddenSize,
    num_hidden_layers: s.layers,
    num_attention_heads: s.heads,
    num_key_value_heads: s.kvHeads,
    head_dim: s.headDim,
    intermediate_size: s.intermediateSize,
    rope_theta: s.ropeTheta,
    rms_norm_eps: s.rmsEps,
    tie_word_embeddings: s.tieWordEmbeddings,
    max_position_embeddings: s.maxPositions,
    hidden_act: 'silu',
    torch_dtype: 'float32',
    ...extra,
  };
}

/** Tensor names of a Qwen3 checkpoint and their shapes ([out, in] for Linear weights). */
export function qwen3TensorShapes(s: Qwen3Shape): Map<string, number[]> {
  const m = new Map<string, number[]>();
  const D = s.headDim;
  m.set('model.embed_tokens.weight', [s.vocabSize, s.hiddenSize]);
  for (let l = 0; l < s.layers; l++) {
    const p = `model.layers.${l}`;
    m.set(`${p}.input_layernorm.weight`, [s.hiddenSize]);
    m.set(`${p}.self_attn.q_proj.weight`, [s.heads * D, s.hiddenSize]);
    m.set(`${p}.self_attn.k_proj.weight`, [s.kvHeads * D, s.hiddenSize]);
    m.set(`${p}.self_attn.v_proj.weight`, [s.kvHeads * D, s.hiddenSize]);
    m.set(`${p}.self_attn.o_proj.weight`, [s.hiddenSize, s.heads * D]);
    m.set(`${p}.self_attn.q_norm.weight`, [D]);
    m.set(`${p}.self_attn.k_norm.weight`, [D]);
    m.set(`${p}.post_attention_layernorm.weight`, [s.hiddenSize]);
    m.set(`${p}.mlp.gate_proj.weight`, [s.intermediateSize, s.hiddenSize]);
    m.set(`${p}.mlp.up_proj.weight`, [s.intermediateSize, s.hiddenSize]);
    m.set(`${p}.mlp.down_proj.weight`, [s.hiddenSize, s.intermediateSize]);
  }
  m.set('model.norm.weight', [s.hiddenSize]);
  if (!s.tieWordEmbeddings) m.set('lm_head.weight', [s.vocabSize, s.hiddenSize]);
  return m;
}
