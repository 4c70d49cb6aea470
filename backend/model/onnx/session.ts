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
  /** Dynamic block sizes in the thread pool (default true; below). False only to compare against. */
  dynamicBlocks?: boolean;
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
    extra: {
      session: {
        intra_op: { allow_spinning: options.spinning ? '1' : '0' },
        inter_op: { allow_spinning: options.spinning ? '1' : '0' },
        // The thread pool hands out work in shrinking blocks instead of one fixed share per thread (the value
        // onnxruntime's threading docs suggest). Interleaved A/B, 2 threads, 6 rounds each (docs/onnx-engine.md):
        // 1 row at 32 cached +5% idle, +13% beside a busy core; 4096 cached and 8 rows at 512 unchanged. The
        // logits are bit-identical with and without (test/model/onnx/session.test.ts).
        ...(options.dynamicBlocks === false ? {} : { dynamic_block_base: '4' }),
      },
    },
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
