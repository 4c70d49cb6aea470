// The Qwen3 shapes of Kimina-Prover-RL-0.6B and -1.7B, for the memory tests (memoryPlan, rowsCap).
import { qwen3ShapeFromConfig, type Qwen3Shape } from '../../../backend/model/onnx/qwen3Config';

/** The Qwen3 configs of the two checkpoints (their config.json's shape fields). */
export const shapes: Record<string, Qwen3Shape> = {
  '0.6B': qwen3ShapeFromConfig({
    model_type: 'qwen3',
    vocab_size: 151_936,
    hidden_size: 1024,
    num_hidden_layers: 28,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    intermediate_size: 3072,
    tie_word_embeddings: true,
    max_position_embeddings: 40_960,
  }),
  '1.7B': qwen3ShapeFromConfig({
    model_type: 'qwen3',
    vocab_size: 151_936,
    hidden_size: 2048,
    num_hidden_layers: 28,
    num_attention_heads: 16,
    num_key_value_heads: 8,
    head_dim: 128,
    intermediate_size: 6144,
    tie_word_embeddings: true,
    max_position_embeddings: 40_960,
  }),
};
