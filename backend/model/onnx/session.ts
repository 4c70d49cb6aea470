// Creates the onnxruntime session: CPU with threads = cores by default; CUDA when asked, falling back
// to the CPU (onnxruntime-node throws instead of falling back) with the reason reported.
import { availableParallelism } from 'node:os';
import * as ort from 'onnxruntime-node';

export type Device = 'cpu' | 'cuda';

export interface SessionOptions {
  device?: Device;
  threads?: number;
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
