// The split-cache engine (the fallback path) rests on one fact of onnxruntime-node 1.30.0: input tensors
// are read where they are, never copied (docs/onnx-engine.md). Upstream pull request #32346 would make
// the binding copy inputs, which would cost every decode step a copy of the whole KV cache. The version
// stays pinned exactly, and this test fails if an upgrade starts copying inputs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ort from 'onnxruntime-node';
import { GraphBuilder } from '../../../backend/model/onnx/graphBuilder';
import { DataType } from '../../../backend/model/onnx/onnxProto';

const root = join(__dirname, '..', '..', '..');

test('onnxruntime-node is pinned to exactly 1.30.0 (package.json and the installed package)', () => {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { dependencies: Record<string, string> };
  assert.equal(pkg.dependencies['onnxruntime-node'], '1.30.0');
  const installed = JSON.parse(readFileSync(require.resolve('onnxruntime-node/package.json'), 'utf8')) as {
    version: string;
  };
  assert.equal(installed.version, '1.30.0');
});

test('onnxruntime-node reads input tensors in place: a 256 MiB input costs a run far less than copying it once', async () => {
  // A graph that only looks at its input's shape: whatever a run costs beyond a small input's is the binding's
  // handling of the big buffer.
  const g = new GraphBuilder('shape');
  g.input('x', DataType.FLOAT, ['n']);
  g.node('Shape', ['x'], {}, { outputNames: ['shape'] });
  g.output('shape', DataType.INT64, [1]);
  const session = await ort.InferenceSession.create(g.encode(), { intraOpNumThreads: 1, logSeverityLevel: 3 });
  try {
    const n = 64 << 20; // 256 MiB of float32
    const big = new Float32Array(n).fill(1); // every page touched, so a copy costs what it costs
    const small = new Float32Array(16);
    const run = async (data: Float32Array) => {
      const t = performance.now();
      const out = await session.run({ x: new ort.Tensor('float32', data, [data.length]) });
      const ms = performance.now() - t;
      assert.equal(Number((out.shape.data as BigInt64Array)[0]), data.length);
      return ms;
    };
    const best = async (f: () => Promise<number> | number, times: number) => {
      let m = Infinity;
      for (let i = 0; i < times; i++) m = Math.min(m, await f());
      return m;
    };
    await run(big);
    const bigMs = await best(() => run(big), 5);
    const smallMs = await best(() => run(small), 5);
    const copyMs = await best(() => {
      const t = performance.now();
      big.slice();
      return performance.now() - t;
    }, 3);
    // Zero-copy: the big input's run is the small one's plus noise; a copy would cost at least copyMs.
    assert.ok(
      bigMs - smallMs < copyMs / 4,
      `a run with a 256 MiB input took ${bigMs.toFixed(2)} ms (small input ${smallMs.toFixed(2)} ms); copying it takes ${copyMs.toFixed(1)} ms: inputs are being copied (onnxruntime PR #32346?)`,
    );
  } finally {
    await session.release();
  }
});
