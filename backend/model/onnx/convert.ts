// Converts a Hugging Face Qwen3 checkpoint (config.json + *.safetensors in F32/F16/BF16) into the
// engine's model folder: the split-cache ONNX graph (4-bit MatMulNBits weights or fp32) plus the
// config, generation config and tokenizer files. Used by `kimina model pull` when a repository has
// no export in our layout. No Python involved.
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { SafetensorsCheckpoint } from './safetensors';
import { readModelFolder, writeOnnxGraph } from './modelFolder';
import type { Qwen3GraphOptions } from './qwen3Graph';
import { qwen3ShapeFromConfig, qwen3TensorShapes, type Qwen3Shape } from './qwen3Config';
import { loadTokenizer } from '../tokenizer';
import { CALIBRATION_TEXT } from './kvInt8';

export interface ConvertProgress {
  /** Tensors written so far and in total. */
  done: number;
  total: number;
  tensor: string;
}

export interface ConvertOptions {
  quantize: 'q4' | 'fp32';
  /**
   * MatMulNBits accuracy_level for q4: 4 (default) computes with int8-quantized activations, about
   * twice as fast on AVX2 CPUs (onnxruntime-genai's CPU default too); 0 computes in float32.
   */
  accuracyLevel?: 0 | 4;
  /** Graph choices other than the defaults (tests and benchmarks only). */
  graph?: Pick<Qwen3GraphOptions, 'fusedNorm' | 'fusedRope' | 'sharedPrefix'>;
  onProgress?: (p: ConvertProgress) => void;
}

const COPIED = [
  'config.json',
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'chat_template.jinja',
  'special_tokens_map.json',
  'vocab.json',
  'merges.txt',
];

export async function convertCheckpoint(
  srcDir: string,
  outDir: string,
  options: ConvertOptions,
): Promise<{ shape: Qwen3Shape; outDir: string }> {
  if (options.quantize !== 'q4' && options.quantize !== 'fp32')
    throw new Error(`quantize must be 'q4' or 'fp32', got ${String(options.quantize)}`);
  const configPath = join(srcDir, 'config.json');
  if (!existsSync(configPath)) throw new Error(`${srcDir} has no config.json: not a Hugging Face checkpoint folder`);
  const config = JSON.parse(readFileSync(configPath, 'utf8')) as Record<string, unknown>;
  const shape = qwen3ShapeFromConfig(config);
  if (!existsSync(join(srcDir, 'tokenizer.json'))) throw new Error(`${srcDir} has no tokenizer.json`);
  const checkpoint = new SafetensorsCheckpoint(srcDir);
  const expected = qwen3TensorShapes(shape);
  const needed = [...expected.keys()];
  const missing = needed.filter((n) => !checkpoint.has(n));
  if (missing.length > 0)
    throw new Error(`checkpoint ${srcDir} lacks ${missing.length} tensors, e.g. ${missing.slice(0, 3).join(', ')}`);
  for (const [name, dims] of expected) {
    const actual = checkpoint.shape(name);
    if (actual.join('x') !== dims.join('x'))
      throw new Error(`${name}: shape [${actual}] in the checkpoint, [${dims}] expected from config.json`);
  }

  mkdirSync(outDir, { recursive: true });
  if (resolve(srcDir) !== resolve(outDir)) {
    for (const f of COPIED) if (existsSync(join(srcDir, f))) copyFileSync(join(srcDir, f), join(outDir, f));
  }
  if (!existsSync(join(outDir, 'generation_config.json')))
    writeFileSync(join(outDir, 'generation_config.json'), '{}\n');
  const seen = new Set<string>();
  // The int8 cache's scales are calibrated on a Kimina-style exchange in the model's own tokens (kvInt8.ts).
  let calibration: number[] | undefined;
  try {
    calibration = (await loadTokenizer(outDir)).encode(CALIBRATION_TEXT);
  } catch {
    calibration = undefined; // no usable tokenizer: no int8-cache graph
  }
  writeOnnxGraph(
    outDir,
    shape,
    checkpoint,
    {
      ...options.graph,
      quant: options.quantize,
      accuracyLevel: options.accuracyLevel ?? 4,
      onTensor: (tensor) => {
        seen.add(tensor);
        options.onProgress?.({ done: Math.min(seen.size, needed.length), total: needed.length, tensor });
      },
    },
    { calibration },
  );
  readModelFolder(outDir); // the result must load as a model folder
  return { shape, outDir };
}
