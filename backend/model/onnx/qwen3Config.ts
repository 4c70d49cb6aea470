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

export function qwen3ShapeFromConfig(cfg: Record<string, unknown>): Qwen3Shape {
  const type = cfg.model_type;
  if (type !== undefined && type !== 'qwen3') {
    throw new Error(`config.json: model_type "${String(type)}" is not supported by the ONNX engine (qwen3 only)`);
  }
  const scaling = cfg.rope_scaling as { rope_type?: string; type?: string } | null | undefined;
  const scalingType = scaling ? scaling.rope_type ?? scaling.type : undefined;
  if (scalingType && scalingType !== 'default') {
    throw new Error(`config.json: rope_scaling "${scalingType}" is not supported by the ONNX engine`);
  }
  const heads = num(cfg, 'num_attention_heads');
  const hiddenSize = num(cfg, 'hidden_size');
  const shape: Qwen3Shape = {
    vocabSize: num(cfg, 'vocab_size'),
    hiddenSize,
    layers: num(cfg, 'num_hidden_layers'),
    heads,
    kvHeads: num(cfg, 'num_key_value_heads', heads),
    headDim: num(cfg, 'head_dim', hiddenSize / heads),
    intermediateSize: num(cfg, 'intermediate_size'),
    ropeTheta: num(cfg, 'rope_theta', 1_000_000),
    rmsEps: num(cfg, 'rms_norm_eps', 1e-6),
    tieWordEmbeddings: cfg.tie_word_embeddings === true,
    maxPositions: num(cfg, 'max_position_embeddings', 40960),
  };
  if (shape.heads % shape.kvHeads !== 0) throw new Error('config.json: num_attention_heads must be a multiple of num_key_value_heads');
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

