// Creates the onnxruntime session: CPU with threads = cores by default; CUDA when asked, falling back
// to the CPU (onnxruntime-node throws instead of falling back) with the reason reported.
import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';

export type Device = 'cpu' | 'cuda';

export interface SessionOptions {
  device?: Device;
  threads?: number;
  /**
   * Let onnxruntime's worker threads spin between operators (default false). Spinning saves a few
   * microseconds per operator on an idle machine but collapses throughput when other processes compete
   * for the cores (Lean REPLs checking proofs, the editor): measured at load ~6.5 on 2 cores, one row at
   * 32 cached tokens decoded at a median 8.8 tokens/s spinning against 22.3 without.
   */
  spinning?: boolean;
  log?: (line: string) => void;
}

export interface LoadedSession {
  session: ort.InferenceSession;
  device: Device;
  threads: number;
  /** Why CUDA was not used, when it was asked for and failed. */
  fallbackReason?: string;
}

export async function createSession(onnxPath: string, options: SessionOptions = {}): Promise<LoadedSession> {
  const threads = options.threads && options.threads > 0 ? Math.floor(options.threads) : availableParallelism();
  const base: ort.InferenceSession.SessionOptions = {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: 'all',
    executionMode: 'sequential',
    logSeverityLevel: 3,
    extra: { session: { intra_op: { allow_spinning: options.spinning ? '1' : '0' }, inter_op: { allow_spinning: options.spinning ? '1' : '0' } } },
  };
  if (options.device === 'cuda') {
    try {
      const session = await ort.InferenceSession.create(onnxPath, { ...base, executionProviders: ['cuda', 'cpu'] });
      return { session, device: 'cuda', threads };
    } catch (e) {
      const reason = (e as Error).message.split('\n')[0];
      options.log?.(`onnx: CUDA is not available (${reason}); using the CPU with ${threads} threads`);
      const session = await ort.InferenceSession.create(onnxPath, { ...base, executionProviders: ['cpu'] });
      return { session, device: 'cpu', threads, fallbackReason: reason };
    }
  }
  const session = await ort.InferenceSession.create(onnxPath, { ...base, executionProviders: ['cpu'] });
  return { session, device: 'cpu', threads };
}
