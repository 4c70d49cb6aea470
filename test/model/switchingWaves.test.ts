// SwitchingEngine (backend/model/switchingEngine.ts) across a switch: a proof's waves are sized once, by the
// schedule of the engine answering when it started (backend/prover/waves.ts); a wave that reaches the engine
// switched to is decoded in that engine's own rows (its caches are capped by its own memory), with the rows'
// order, delta indices and seeds as one call would have them. Test double: RowsEngine (an Engine with a fixed
// schedule that records the calls it gets); SwitchingEngine is real.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Engine, Generation, SamplingOptions } from '../../backend/model/engine';
import { soleChoice } from '../../backend/model/engineChoice';
import { scheduleOf } from '../../backend/model/schedule';
import { SwitchingEngine } from '../../backend/model/switchingEngine';
import type { ChatMessage } from '../../backend/protocol';

/** TEST DOUBLE: an engine whose schedule is `rows` (as kimina.rowsAtOnce) and that records each call's size and seed. */
class RowsEngine implements Engine {
  readonly model = 'fake';
  readonly calls: { size: number; seed?: number }[] = [];
  constructor(
    readonly name: string,
    private readonly rows: number,
  ) {}
  async schedule() {
    return scheduleOf(undefined, { override: this.rows });
  }
  async generate(conversations: ChatMessage[][], options: SamplingOptions, onDelta?: (i: number, d: string) => void) {
    this.calls.push({ size: conversations.length, seed: options.seed });
    return conversations.map((c, i): Generation => {
      onDelta?.(i, c[0].content);
      return { text: `${this.name}: ${c[0].content} seed ${(options.seed ?? 0) + i}`, tokens: 1, finishReason: 'stop' };
    });
  }
  async countPromptTokens() {
    return 1;
  }
  async close() {}
}

const conversations = (n: number): ChatMessage[][] =>
  Array.from({ length: n }, (_, k) => [{ role: 'user', content: `prompt ${k}` }]);

test("a wave sized by the engine switched from is decoded in the new engine's own rows, in order", async () => {
  const onnx = new RowsEngine('onnx', 8);
  const llama = new RowsEngine('llama', 3);
  const engine = new SwitchingEngine(onnx, soleChoice('onnx', 'onnx', 'a test'));
  const rows = (await engine.schedule())!.rows; // the request's waves are sized now, by onnx
  assert.equal(rows, 8);
  engine.switchTo(llama, soleChoice('llama', 'llama', 'a test'));

  const deltas: [number, string][] = [];
  const out = await engine.generate(conversations(rows), { maxTokens: 8, temperature: 1, topP: 1, seed: 100 }, (i, d) =>
    deltas.push([i, d]),
  );
  assert.deepEqual(
    llama.calls.map((c) => c.size),
    [3, 3, 2],
    "no call above llama.cpp's rows",
  );
  assert.deepEqual(
    out.map((g) => g.text),
    Array.from({ length: 8 }, (_, k) => `llama: prompt ${k} seed ${100 + k}`),
    'every row answered in order, each with the seed one call would give it',
  );
  assert.deepEqual(
    deltas,
    Array.from({ length: 8 }, (_, k) => [k, `prompt ${k}`]),
  );
  assert.equal(onnx.calls.length, 0);
});

test('the engine it starts with decodes a call as given (its own schedule sized the waves)', async () => {
  const onnx = new RowsEngine('onnx', 2);
  const engine = new SwitchingEngine(onnx, soleChoice('onnx', 'onnx', 'a test'));
  await engine.generate(conversations(5), { maxTokens: 8, temperature: 1, topP: 1 });
  assert.deepEqual(
    onnx.calls.map((c) => c.size),
    [5],
  );
});
