// The machine's memory read bandwidth as onnxruntime's kernels see it: a ReduceSum over a 512 MiB
// float32 tensor (far larger than any cache) on `threads` threads, best of a few runs. The bound of a
// decode step is the bytes it must read (weights, KV cache) divided by this.
import * as ort from 'onnxruntime-node';
import { DataType } from '../backend/model/onnx/onnxProto';
import { attr, GraphBuilder } from '../backend/model/onnx/graphBuilder';

const ROWS = 256;

export async function readBandwidth(threads: number, mib = 512, runs = 5): Promise<number> {
  const g = new GraphBuilder('bandwidth');
  // Rows reduced in parallel (a reduction to one number runs on one thread).
  g.input('x', DataType.FLOAT, [ROWS, 'n']);
  g.node('ReduceSum', ['x', g.constInt64([1])], { keepdims: attr.int(0) }, { outputNames: ['sum'] });
  g.output('sum', DataType.FLOAT, [ROWS]);
  const session = await ort.InferenceSession.create(g.encode(), {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    logSeverityLevel: 3,
  });
  try {
    const n = (mib * 2 ** 20) / 4;
    const x = new Float32Array(n).fill(1);
    const feeds = { x: new ort.Tensor('float32', x, [ROWS, n / ROWS]) };
    await session.run(feeds);
    let best = Infinity;
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await session.run(feeds);
      best = Math.min(best, performance.now() - t);
    }
    return x.byteLength / (best / 1000);
  } finally {
    await session.release();
  }
}

if (require.main === module) {
  readBandwidth(Number(process.env.KIMINA_BENCH_THREADS ?? 2)).then((b) =>
    console.log(`read bandwidth: ${(b / 1e9).toFixed(1)} GB/s`),
  );
}
