// Messages between the engine (main thread) and its decoding worker, and what they carry (imports no backend of its own).
import type { DecodeRequest, RowResult } from './decoder';
import type { Qwen3Shape } from './qwen3Config';
import type { Device } from './session';

export interface LoadSpec {
  onnxPath: string;
  shape: Qwen3Shape;
  device?: Device;
  threads?: number;
  spinning?: boolean;
  padId: number;
}

export interface BackendInfo {
  device: Device;
  threads: number;
  fallbackReason?: string;
}

export type WorkerRequest =
  | { type: 'load'; spec: LoadSpec }
  | { type: 'generate'; id: number; request: DecodeRequest }
  | { type: 'stop'; id: number; row: number }
  | { type: 'cancel'; id: number };

export type WorkerReply =
  | { type: 'loaded'; info: BackendInfo }
  | { type: 'log'; line: string }
  | { type: 'tokens'; id: number; rows: number[]; tokens: number[] }
  | { type: 'done'; id: number; results: RowResult[] }
  | { type: 'error'; id?: number; message: string };
