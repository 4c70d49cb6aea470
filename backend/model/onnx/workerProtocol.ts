// Messages between the engine (main thread) and its decoding worker.
import type { DecodeRequest, RowResult } from './decoder';
import type { BackendInfo, LoadSpec } from './backends';

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
