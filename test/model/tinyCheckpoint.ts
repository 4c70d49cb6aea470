// A tiny Qwen3 checkpoint in the Hugging Face layout (config, tokenizer, F32 safetensors), as the file
// map a stand-in hub repository serves. Built from the ONNX engineer's seeded test weights; `overrides` makes it
// larger (a GGUF write that takes long enough to watch).
import { encodeSafetensors } from '../../backend/model/onnx/safetensors';
import { configForShape, qwen3TensorShapes, type Qwen3Shape } from '../../backend/model/onnx/qwen3Config';
import { buildTokenizer } from '../../backend/demo/models/tinyTokenizer';
import { tinyShape } from '../../backend/demo/models/tinyModel';
import { randomWeights } from '../../backend/demo/models/randomWeights';

export function tinyCheckpointFiles(seed = 11, overrides: Partial<Qwen3Shape> = {}): Record<string, string | Buffer> {
  const tok = buildTokenizer();
  const shape = tinyShape(tok.vocabSize, overrides);
  const weights = randomWeights(shape, seed);
  return {
    'config.json': JSON.stringify(configForShape(shape, { torch_dtype: 'float32' })),
    'generation_config.json': JSON.stringify({ eos_token_id: tok.added.get('<|im_end|>') }),
    'tokenizer.json': JSON.stringify(tok.tokenizerJson),
    'tokenizer_config.json': JSON.stringify(tok.tokenizerConfig),
    'model.safetensors': encodeSafetensors(
      [...qwen3TensorShapes(shape)].map(([name, dims]) => {
        const v = weights.get(name);
        return { name, dtype: 'F32' as const, shape: dims, data: new Uint8Array(v.buffer, v.byteOffset, v.byteLength) };
      }),
    ),
    'README.md': '# tiny',
  };
}
