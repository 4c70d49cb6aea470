// Shared-prefix attention (pass@n: the rows of one proof read one copy of the prompt's cache) and the
// fused graph operators (SimplifiedLayerNormalization, RotaryEmbedding): each against the graph
// without it, on the tiny model.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeTinyModel, tinyShape } from '../../../backend/demo/models/tinyModel';
import { buildTokenizer } from '../../../backend/demo/models/tinyTokenizer';
import { randomWeights } from '../../../backend/demo/models/randomWeights';
import type { Decoder, DecodeControl, DecodeRequest } from '../../../backend/model/onnx/decoder';
import { GraphBuilder } from '../../../backend/model/onnx/graphBuilder';
import { buildQwen3Graph, type Qwen3GraphOptions } from '../../../backend/model/onnx/qwen3Graph';
import { argmax } from '../../../backend/model/onnx/sampler';
import { loadDecoder, maxAbsDiff, tempDir } from './helpers';

const fp32Dir = writeTinyModel(tempDir(), { seed: 3 }).dir;
const unsharedDir = writeTinyModel(tempDir(), { seed: 3, graph: { sharedPrefix: false } }).dir;
const unfusedDir = writeTinyModel(tempDir(), { seed: 3, graph: { fusedNorm: false, fusedRope: false } }).dir;
const prompt = [11, 250, 33, 7, 90, 140, 2, 64, 5, 17, 300, 8];

function control(): DecodeControl & { seen: Map<number, number[]> } {
  const seen = new Map<number, number[]>();
  return {
    seen,
    onTokens: (rows, tokens) => rows.forEach((r, i) => seen.set(r, [...(seen.get(r) ?? []), tokens[i]])),
    isStopped: () => false,
    isCancelled: () => false,
  };
}
const greedyRequest: DecodeRequest = { prompts: [], maxTokens: 16, temperature: 0, topP: 1, seed: 7, eosIds: [] };

/** Each row's logits, step by step, for rows continuing `prompt` with their own tokens, from a shared prefix. */
async function sharedRun(d: Decoder, rows: number[][]): Promise<Float32Array[][]> {
  const state = d.newState(1);
  await d.prefill(state, [prompt]);
  d.shareRows(state, rows.length);
  assert.ok(state.shared, 'the prompt is the shared prefix');
  assert.equal(state.shared!.batch, 1, 'one copy of the prompt');
  const out: Float32Array[][] = rows.map(() => []);
  const V = d.shape.vocabSize;
  for (let i = 0; i < rows[0].length; i++) {
    const logits = await d.feed(
      state,
      rows.map((r) => [r[i]]),
    );
    rows.forEach((_, b) => out[b].push(logits.slice(b * V, (b + 1) * V)));
  }
  assert.equal(state.cache.length, rows[0].length, "the rows' own cache holds only their own tokens");
  return out;
}

test('shared prefix: each row equals its own full cache, and a row alone equals the row in a batch (fp32, exact)', async () => {
  const d = await loadDecoder(fp32Dir, { growStep: 4 }); // small steps: the rows' caches grow while decoding
  assert.ok(d.sharedPrefix);
  const rows = [
    [5, 6, 7, 8, 9, 10],
    [100, 101, 102, 103, 104, 105],
    [5, 6, 7, 200, 201, 202], // diverges from row 0 after three tokens
  ];
  const shared = await sharedRun(d, rows);
  for (const [b, row] of rows.entries()) {
    // Reference: the row's own full cache (prompt copied into it), no shared prefix.
    const own = d.newState(1);
    await d.prefill(own, [prompt]);
    for (const [i, t] of row.entries()) {
      const logits = await d.feed(own, [[t]]);
      assert.ok(maxAbsDiff(logits, shared[b][i]) < 1e-5, `row ${b}, step ${i}`);
    }
    const alone = await sharedRun(d, [row]);
    alone[0].forEach((l, i) => assert.deepEqual(l, shared[b][i], `row ${b} step ${i}: alone = batched, bit for bit`));
  }
  // Rows 0 and 2 share their first three tokens and differ after.
  for (let i = 0; i < 3; i++) assert.deepEqual(shared[0][i], shared[2][i]);
  assert.ok(maxAbsDiff(shared[0][4], shared[2][4]) > 1e-3);
});

test('shared prefix: n samples of one prompt decode as the prompt alone (greedy), and as the graph without shared inputs', async () => {
  const d = await loadDecoder(fp32Dir);
  const old = await loadDecoder(unsharedDir);
  assert.equal(old.sharedPrefix, false);
  const alone = control();
  await d.decode({ ...greedyRequest, prompts: [prompt] }, alone);
  const batch = control();
  await d.decode({ ...greedyRequest, prompts: [prompt, prompt, prompt, prompt] }, batch);
  const before = control();
  await old.decode({ ...greedyRequest, prompts: [prompt, prompt] }, before);
  for (let r = 0; r < 4; r++) assert.deepEqual(batch.seen.get(r), alone.seen.get(0), `row ${r}`);
  assert.deepEqual(before.seen.get(0), alone.seen.get(0), 'the graph without shared inputs gives the same tokens');
  // Sampled rows diverge (each its own generator) and still finish.
  const sampled = control();
  const results = await d.decode({ ...greedyRequest, prompts: [prompt, prompt, prompt], temperature: 1 }, sampled);
  assert.deepEqual(
    results.map((r) => r.tokens),
    [16, 16, 16],
  );
  assert.notDeepEqual(sampled.seen.get(0), sampled.seen.get(1));
});

test('shared prefix with speculation: greedy output unchanged, rows rolled back in their own caches', async () => {
  const d = await loadDecoder(fp32Dir);
  const repetitive = [...prompt, ...prompt, ...prompt];
  const plain = control();
  await d.decode({ ...greedyRequest, prompts: [repetitive, repetitive], maxTokens: 24 }, plain);
  const spec = control();
  await d.decode(
    { ...greedyRequest, prompts: [repetitive, repetitive], maxTokens: 24, speculation: { maxDraft: 4 } },
    spec,
  );
  assert.deepEqual(spec.seen.get(0), plain.seen.get(0));
  assert.deepEqual(spec.seen.get(1), plain.seen.get(0));
  assert.ok(d.lastStats.drafted > 0, 'drafts were verified');
});

test('shared prefix with the float16 cache: rows equal the prompt alone', async () => {
  const half = await loadDecoder(fp32Dir, {}, 'fp16');
  assert.ok(half.halfCache && half.sharedPrefix);
  const alone = control();
  await half.decode({ ...greedyRequest, prompts: [prompt] }, alone);
  const batch = control();
  await half.decode({ ...greedyRequest, prompts: [prompt, prompt, prompt] }, batch);
  for (let r = 0; r < 3; r++) assert.deepEqual(batch.seen.get(r), alone.seen.get(0), `row ${r}`);
});

test('an empty shared prefix changes nothing: the same logits as the graph without shared inputs, bit for bit', async () => {
  const d = await loadDecoder(fp32Dir);
  const old = await loadDecoder(unsharedDir);
  const a = d.newState(2);
  const b = old.newState(2);
  const rows = [prompt, [...prompt].reverse()];
  assert.deepEqual(await d.prefill(a, rows), await old.prefill(b, rows));
  for (let i = 0; i < 5; i++)
    assert.deepEqual(await d.feed(a, [[i + 1], [i + 2]]), await old.feed(b, [[i + 1], [i + 2]]), `step ${i}`);
});

function opCounts(options: Partial<Qwen3GraphOptions>): Map<string, number> {
  const shape = tinyShape(buildTokenizer().vocabSize);
  const g = new GraphBuilder('qwen3');
  buildQwen3Graph(g, shape, randomWeights(shape, 3), { quant: 'fp32', ...options });
  const counts = new Map<string, number>();
  for (const n of g.graph().nodes) counts.set(n.opType, (counts.get(n.opType) ?? 0) + 1);
  return counts;
}

test('fused RMSNorm and RoPE: fewer operators, the same model (logits within 1e-5, the same greedy tokens)', async () => {
  const fused = opCounts({});
  const unfused = opCounts({ fusedNorm: false, fusedRope: false });
  const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
  const layers = tinyShape(buildTokenizer().vocabSize).layers;
  assert.equal(fused.get('RotaryEmbedding'), 2 * layers, 'q and k of every layer');
  assert.equal(fused.get('Pow') ?? 0, 0);
  assert.equal(fused.get('Sin') ?? 0, 0);
  assert.ok(total(fused) < total(unfused) - 10 * layers, `${total(fused)} vs ${total(unfused)} operators`);

  const d = await loadDecoder(fp32Dir);
  const u = await loadDecoder(unfusedDir);
  const a = d.newState(1);
  const b = u.newState(1);
  let la = (await d.prefill(a, [prompt]))!;
  let lb = (await u.prefill(b, [prompt]))!;
  for (let i = 0; i < 12; i++) {
    assert.ok(maxAbsDiff(la, lb) < 1e-5, `step ${i}: ${maxAbsDiff(la, lb)}`);
    const t = argmax(la);
    assert.equal(t, argmax(lb), `step ${i}`);
    la = await d.feed(a, [[t]]);
    lb = await u.feed(b, [[t]]);
  }
});
