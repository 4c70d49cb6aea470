// Messages between the engine (main thread) and its decoding worker, and what they carry (imports no backend of its own).
import type { DecodeRequest, RowResult } from './decoder';
import type { Qwen3Shape } from './qwen3Config';
import type { Device } from './session';

/** Which decoding path runs: onnxruntime's C API with the GQA graph, or the Node binding with the split graph. */
type DecodePath = 'c-api-gqa' | 'node-split';

export interface LoadSpec {
  onnxPath: string;
  /** The folder's GQA graph (onnx/model.gqa.onnx) when the C API path may be tried. */
  gqaPath?: string;
  /** That graph's cache is int8 (onnx/model.gqa8.onnx). */
  gqaInt8?: boolean;
  /** Why there is no GQA graph to try, when there is none. */
  gqaWhyNot?: string;
  /** 'auto' (default): the C API path where it loads, else the Node binding; or one of them only ('node-split' never tries the other). */
  path?: 'auto' | DecodePath;
  shape: Qwen3Shape;
  device?: Device;
  threads?: number;
  spinning?: boolean;
  padId: number;
}

export interface BackendInfo {
  /** The decoding path that runs, and why (the fallback's reason when the C API path could not load). */
  path: DecodePath;
  pathWhy: string;
  device: Device;
  threads: number;
  fallbackReason?: string;
}

export type WorkerRequest =
  | { type: 'load'; spec: LoadSpec }
  | { type: 'generate'; id: number; request: DecodeRequest }
  | { type: 'stop'; id: number; row: number }
  | { type: 'cancel'; id: number }
  | { type: 'timeStep'; id: number; rows: number; cachedPerRow: number };

export type WorkerReply =
  | { type: 'loaded'; info: BackendInfo }
  | { type: 'log'; line: string }
  | { type: 'tokens'; id: number; rows: number[]; tokens: number[] }
  | { type: 'done'; id: number; results: RowResult[] }
  | { type: 'timed'; id: number; ms: number }
  | { type: 'error'; id?: number; message: string };
