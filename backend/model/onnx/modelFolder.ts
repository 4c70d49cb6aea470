// The model folder layout the engine loads (Hugging Face / Optimum style):
//   config.json, generation_config.json, tokenizer.json, tokenizer_config.json,
//   onnx/model.onnx (+ onnx/model.onnx_data holding the large initializers).
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ExternalDataFile, GraphBuilder } from './graphBuilder';
import { HALF_CACHE_LAYOUT, halfCacheGraph } from './halfCache';
import { buildQwen3Graph, io, type Qwen3GraphOptions, type WeightSource } from './qwen3Graph';
import { qwen3ShapeFromConfig, type Qwen3Shape } from './qwen3Config';
import { int8CacheGraph, scalesFromCache, type KvScales } from './kvInt8';
import { GqaDecoder } from './gqaDecoder';
import { OrtNative } from './ortNative';

/** Prefills the calibration tokens through the float32 GQA graph and reads the int8 scales off its cache. */
function calibrateKvScales(gqaPath: string, shape: Qwen3Shape, ids: number[]): KvScales {
  const ort = OrtNative.load();
  const decoder = new GqaDecoder(ort, ort.createSession(gqaPath, { threads: 0 }), shape);
  const tokens = ids.slice(0, shape.maxPositions - 1);
  const state = decoder.newState(1, tokens.length);
  try {
    for (let at = 0; at < tokens.length; at += decoder.prefillChunk)
      decoder.run(state, [tokens.slice(at, at + decoder.prefillChunk)], 0);
    return scalesFromCache(
      state.cache.keys as Float32Array[],
      state.cache.values as Float32Array[],
      { kvHeads: shape.kvHeads, headDim: shape.headDim, capacity: state.cache.capacity },
      state.cache.lengths,
    );
  } finally {
    state.cache.release();
    void decoder.close();
  }
}

export const ONNX_FILE = join('onnx', 'model.onnx');
/** The same graph with a float16 KV cache (halfCache.ts), sharing model.onnx_data. */
export const ONNX_KV16_FILE = join('onnx', 'model.kv16.onnx');
/** The same weights with GroupQueryAttention and a cache shared in place (qwen3Graph.ts 'gqa'), for the C API path. */
export const ONNX_GQA_FILE = join('onnx', 'model.gqa.onnx');
const GQA_LAYOUT = 'qwen3-gqa-v1';
/** The GQA graph with an int8 cache (kvInt8.ts), when a calibration could run. */
export const ONNX_GQA8_FILE = join('onnx', 'model.gqa8.onnx');
const GQA8_LAYOUT = 'qwen3-gqa-v1+kv-int8';

export interface WriteGraphExtras {
  /** Token ids to calibrate the int8 cache's scales on (kvInt8.ts); no int8 graph without them. */
  calibration?: number[];
  log?: (line: string) => void;
}
export const ONNX_DATA_FILE = 'model.onnx_data';
/** Written into model.onnx metadata so the engine can refuse graphs in another layout. */
const LAYOUT_KEY = 'kimina.layout';
export const LAYOUT_VALUE = 'qwen3-split-cache-v1';

/**
 * Writes onnx/model.onnx (+ external data, + model.kv16.onnx for the split layout) for the given
 * weights. model.onnx is written last (to a temporary name, then renamed), so an interrupted
 * conversion never leaves a loadable half model.
 */
export function writeOnnxGraph(
  modelDir: string,
  shape: Qwen3Shape,
  weights: WeightSource,
  options: Qwen3GraphOptions,
  extras: WriteGraphExtras = {},
): void {
  const onnxDir = join(modelDir, 'onnx');
  mkdirSync(onnxDir, { recursive: true });
  const modelPath = join(modelDir, ONNX_FILE);
  rmSync(modelPath, { force: true });
  const halfPath = join(modelDir, ONNX_KV16_FILE);
  rmSync(halfPath, { force: true });
  const gqaPath = join(modelDir, ONNX_GQA_FILE);
  rmSync(gqaPath, { force: true });
  const gqa8Path = join(modelDir, ONNX_GQA8_FILE);
  rmSync(gqa8Path, { force: true });
  const external = new ExternalDataFile(join(onnxDir, ONNX_DATA_FILE));
  let bytes: Uint8Array;
  let halfBytes: Uint8Array | undefined;
  let gqaBytes: Uint8Array | undefined;
  let gqaBuilder: GraphBuilder | undefined;
  try {
    const g = new GraphBuilder('qwen3', external);
    buildQwen3Graph(g, shape, weights, options);
    bytes = g.encode({
      [LAYOUT_KEY]: options.layout === 'optimum' ? 'qwen3-optimum-concat' : LAYOUT_VALUE,
      'kimina.quant': options.quant,
    });
    if (options.layout !== 'optimum')
      halfBytes = g.encode(
        { [LAYOUT_KEY]: HALF_CACHE_LAYOUT, 'kimina.quant': options.quant },
        halfCacheGraph(g.graph()),
      );
    if (options.layout !== 'optimum') {
      // The GQA graph takes the split graph's weights from the same external data file (none written twice).
      const gq = new GraphBuilder('qwen3', external);
      gq.shareInitializers(g.graph());
      buildQwen3Graph(gq, shape, weights, { ...options, layout: 'gqa', onTensor: undefined });
      gqaBytes = gq.encode({ [LAYOUT_KEY]: GQA_LAYOUT, 'kimina.quant': options.quant });
      gqaBuilder = gq;
    }
  } finally {
    external.close();
  }
  if (halfBytes) writeFileSync(halfPath, halfBytes);
  if (gqaBytes) writeFileSync(gqaPath, gqaBytes);
  if (gqaBuilder && extras.calibration && extras.calibration.length > 0) {
    try {
      const scales = calibrateKvScales(gqaPath, shape, extras.calibration);
      writeFileSync(
        gqa8Path,
        gqaBuilder.encode(
          { [LAYOUT_KEY]: GQA8_LAYOUT, 'kimina.quant': options.quant },
          int8CacheGraph(gqaBuilder.graph(), scales),
        ),
      );
    } catch (e) {
      extras.log?.(`onnx: no int8-cache graph (the calibration needs the C API path: ${(e as Error).message})`);
    }
  }
  writeFileSync(`${modelPath}.partial`, bytes);
  renameSync(`${modelPath}.partial`, modelPath);
}

export interface ModelFolderFiles {
  config: Record<string, unknown>;
  generationConfig: Record<string, unknown>;
  tokenizerJson: unknown;
  tokenizerConfig: Record<string, unknown>;
}

export function writeModelMetadata(modelDir: string, files: ModelFolderFiles): void {
  mkdirSync(modelDir, { recursive: true });
  const write = (name: string, value: unknown) =>
    writeFileSync(join(modelDir, name), JSON.stringify(value, null, 2) + '\n');
  write('config.json', files.config);
  write('generation_config.json', files.generationConfig);
  write('tokenizer.json', files.tokenizerJson);
  write('tokenizer_config.json', files.tokenizerConfig);
}

export interface ModelFolderInfo {
  dir: string;
  shape: Qwen3Shape;
  config: Record<string, unknown>;
  generationConfig: Record<string, unknown>;
  onnxPath: string;
  /** The float16-cache graph, when the folder has one (converted after it existed). */
  onnxHalfCachePath?: string;
  /** The GroupQueryAttention graph for the C API path, when the folder has one (converted after it existed). */
  onnxGqaPath?: string;
  /** The same with an int8 cache (kvInt8.ts), when its calibration ran at conversion. */
  onnxGqaInt8Path?: string;
}

function readJson(path: string, what: string): Record<string, unknown> {
  if (!existsSync(path)) throw new Error(`model folder: ${what} not found at ${path}`);
  try {
    return JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  } catch (e) {
    throw new Error(`model folder: ${path} is not valid JSON (${(e as Error).message})`);
  }
}

/** Reads and checks a model folder (without loading the graph). */
export function readModelFolder(dir: string): ModelFolderInfo {
  const config = readJson(join(dir, 'config.json'), 'config.json');
  const generationPath = join(dir, 'generation_config.json');
  const generationConfig = existsSync(generationPath) ? readJson(generationPath, 'generation_config.json') : {};
  const onnxPath = join(dir, ONNX_FILE);
  if (!existsSync(onnxPath)) {
    throw new Error(
      `model folder ${dir} has no ${ONNX_FILE}; convert the checkpoint first (kimina model pull converts automatically)`,
    );
  }
  const halfPath = join(dir, ONNX_KV16_FILE);
  const gqaPath = join(dir, ONNX_GQA_FILE);
  return {
    onnxGqaPath: existsSync(gqaPath) ? gqaPath : undefined,
    onnxGqaInt8Path: existsSync(join(dir, ONNX_GQA8_FILE)) ? join(dir, ONNX_GQA8_FILE) : undefined,
    dir,
    shape: qwen3ShapeFromConfig(config),
    config,
    generationConfig,
    onnxPath,
    onnxHalfCachePath: existsSync(halfPath) ? halfPath : undefined,
  };
}

/** The folder's graph for a KV cache precision; a clear error where it has no float16-cache graph. */
export function graphPath(folder: ModelFolderInfo, kvCache: 'fp32' | 'fp16'): string {
  if (kvCache === 'fp32') return folder.onnxPath;
  if (!folder.onnxHalfCachePath)
    throw new Error(`model folder ${folder.dir} has no ${ONNX_KV16_FILE} (converted before it existed)`);
  return folder.onnxHalfCachePath;
}

/**
 * Whether the folder's graph has the shared-prefix inputs (pass@n's rows reading one copy of the
 * prompt's cache; folders converted before them decode every row from its own copy).
 */
export function graphHasSharedPrefix(modelDir: string): boolean {
  const path = join(modelDir, ONNX_FILE);
  // The graph without its weights (external data) is small: the input's name is in its bytes.
  return existsSync(path) && readFileSync(path).includes(io.sharedBias);
}
