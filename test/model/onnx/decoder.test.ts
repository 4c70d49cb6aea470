// The split KV cache and batched decoding: cached = uncached, chunked prefill = token by token,
// cache growth, left padding, shared prefill for n samples, determinism, stops and cancellation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeTinyModel } from '../../../backend/demo/models/tinyModel';
import type { Decoder, DecodeControl, DecodeRequest } from '../../../backend/model/onnx/decoder';
import { argmax } from '../../../backend/model/onnx/sampler';
import { argmaxOf, loadDecoder, maxAbsDiff, tempDir } from './helpers';

const fp32Dir = writeTinyModel(tempDir(), { seed: 1 }).dir;
const q4Dir = writeTinyModel(tempDir(), { seed: 1, quant: 'q4' }).dir;
const q4Int8Dir = writeTinyModel(tempDir(), { seed: 1, quant: 'q4', accuracyLevel: 4 }).dir;
const V = writeTinyModel(tempDir(), { seed: 1 }).shape.vocabSize;

/** Greedy continuation computed with the cache, one token per step. */
async function greedyCached(
  d: Decoder,
  prompt: number[],
  steps: number,
): Promise<{ tokens: number[]; logits: Float32Array[] }> {
  const state = d.newState(1);
  let logits = await d.feed(state, [prompt]);
  const tokens: number[] = [];
  const all: Float32Array[] = [];
  for (let i = 0; i < steps; i++) {
    all.push(logits.slice());
    const t = argmax(logits);
    tokens.push(t);
    logits = await d.feed(state, [[t]]);
  }
  return { tokens, logits: all };
}

/** The same continuation recomputed from scratch (fresh cache, whole sequence) at every step. */
async function greedyUncached(
  d: Decoder,
  prompt: number[],
  steps: number,
): Promise<{ tokens: number[]; logits: Float32Array[] }> {
  const seq = [...prompt];
  const tokens: number[] = [];
  const all: Float32Array[] = [];
  for (let i = 0; i < steps; i++) {
    const logits = await d.feed(d.newState(1), [seq]);
    all.push(logits);
    const t = argmax(logits);
    tokens.push(t);
    seq.push(t);
  }
  return { tokens, logits: all };
}

const prompt = [11, 250, 33, 7, 90, 140, 2, 64];

// int8 activations (MatMulNBits accuracy_level 4) are quantized differently for one row and for many,
// so cached and uncached logits agree only approximately there.
for (const [label, dir, tolerance] of [
  ['fp32', fp32Dir, 1e-4],
  ['4-bit', q4Dir, 1e-4],
  ['4-bit with int8 activations', q4Int8Dir, 0.1],
] as const) {
  test(`${label}: cached decoding equals full recomputation, across cache growth`, async () => {
    const d = await loadDecoder(dir, { growStep: 16 });
    const steps = 40; // 8 + 40 positions: the cache grows from 16 to 48 slots
    const cached = await greedyCached(d, prompt, steps);
    const uncached = await greedyUncached(d, prompt, steps);
    assert.deepEqual(cached.tokens, uncached.tokens);
    const diff = Math.max(...cached.logits.map((l, i) => maxAbsDiff(l, uncached.logits[i])));
    assert.ok(diff < tolerance, `max logit difference ${diff}`);
  });

  test(`${label}: a multi-token prefill equals feeding the prompt token by token, and chunking does not matter`, async () => {
    const whole = await loadDecoder(dir);
    const chunked = await loadDecoder(dir, { prefillChunk: 3, growStep: 4 });
    const a = await whole.feed(whole.newState(1), [prompt]);
    const s = whole.newState(1);
    let b: Float32Array = new Float32Array(0);
    for (const t of prompt) b = await whole.feed(s, [[t]]);
    const c = (await chunked.prefill(chunked.newState(1), [prompt]))!;
    assert.ok(maxAbsDiff(a, b) < tolerance, `token by token: ${maxAbsDiff(a, b)}`);
    assert.ok(maxAbsDiff(a, c) < tolerance, `chunks of 3: ${maxAbsDiff(a, c)}`);
  });
}

test('growing the cache keeps its contents (small steps equal one big allocation)', async () => {
  const small = await loadDecoder(fp32Dir, { growStep: 1 });
  const big = await loadDecoder(fp32Dir, { growStep: 512 });
  const a = await greedyCached(small, prompt, 12);
  const b = await greedyCached(big, prompt, 12);
  assert.deepEqual(a.tokens, b.tokens);
  assert.ok(maxAbsDiff(a.logits[11], b.logits[11]) < 1e-5);
});

test('left padding: a batch of prompts of different lengths gives each row its own logits', async () => {
  const d = await loadDecoder(fp32Dir, { prefillChunk: 4 });
  const prompts = [[1, 2, 3], [9, 8, 7, 6, 5, 4, 3, 2, 1, 200], [42]];
  const batched = (await d.prefill(d.newState(3), prompts))!;
  for (let r = 0; r < prompts.length; r++) {
    const alone = await d.feed(d.newState(1), [prompts[r]]);
    assert.ok(maxAbsDiff(batched.subarray(r * V, (r + 1) * V), alone) < 1e-4, `row ${r}`);
  }
});

function control(overrides: Partial<DecodeControl> = {}): DecodeControl & { seen: Map<number, number[]> } {
  const seen = new Map<number, number[]>();
  return {
    seen,
    onTokens: (rows, tokens) => rows.forEach((r, i) => seen.set(r, [...(seen.get(r) ?? []), tokens[i]])),
    isStopped: () => false,
    isCancelled: () => false,
    ...overrides,
  };
}

const baseRequest: DecodeRequest = { prompts: [], maxTokens: 20, temperature: 0, topP: 1, seed: 7, eosIds: [] };

test('batched greedy decoding with left padding equals decoding each prompt alone', async () => {
  const d = await loadDecoder(fp32Dir);
  const prompts = [[1, 2, 3], [9, 8, 7, 6, 5, 4, 3, 2, 1, 200], [42], [1, 2, 3]];
  const batch = control();
  const results = await d.decode({ ...baseRequest, prompts }, batch);
  assert.deepEqual(
    results.map((r) => r.finishReason),
    ['length', 'length', 'length', 'length'],
  );
  for (let r = 0; r < prompts.length; r++) {
    const alone = control();
    await d.decode({ ...baseRequest, prompts: [prompts[r]] }, alone);
    assert.deepEqual(batch.seen.get(r), alone.seen.get(0), `row ${r}`);
    assert.equal(batch.seen.get(r)!.length, 20);
  }
  // And the greedy tokens are the reference argmax continuation.
  const ref = await greedyUncached(d, prompts[1], 5);
  assert.deepEqual(batch.seen.get(1)!.slice(0, 5), ref.tokens);
});

test('sampling is deterministic for a seed, differs across seeds and across the n samples of one prompt', async () => {
  const d = await loadDecoder(fp32Dir);
  const req = { ...baseRequest, prompts: [prompt, prompt, prompt], temperature: 1, topP: 0.95, maxTokens: 16 };
  const a = control();
  const b = control();
  const c = control();
  await d.decode(req, a);
  await d.decode(req, b);
  await d.decode({ ...req, seed: 8 }, c);
  assert.deepEqual([...a.seen.entries()], [...b.seen.entries()]);
  assert.notDeepEqual(a.seen.get(0), c.seen.get(0));
  assert.notDeepEqual(a.seen.get(0), a.seen.get(1));
});

test('EOS, the token limit and caller stops finish rows independently; finished rows leave the batch', async () => {
  const d = await loadDecoder(fp32Dir);
  const free = control();
  await d.decode({ ...baseRequest, prompts: [prompt], maxTokens: 12 }, free);
  const greedy = free.seen.get(0)!;
  // Treat the first greedy token that differs from the first one as EOS: the row stops before it.
  const k = greedy.findIndex((t) => t !== greedy[0]);
  assert.ok(k > 0, 'the tiny model should not repeat one token 12 times');
  const eosRun = control();
  const eosResult = await d.decode(
    { ...baseRequest, prompts: [prompt, [5, 6]], maxTokens: 12, eosIds: [greedy[k]] },
    eosRun,
  );
  assert.deepEqual(eosRun.seen.get(0), greedy.slice(0, k));
  assert.equal(eosResult[0].finishReason, 'stop');
  assert.equal(eosResult[0].tokens, k);
  // A caller stop after the first token of row 1 only.
  const stopped = control({ isStopped: (row) => row === 1 });
  const stopResult = await d.decode({ ...baseRequest, prompts: [prompt, prompt], maxTokens: 12 }, stopped);
  assert.equal(stopResult[1].finishReason, 'stop');
  assert.equal(stopped.seen.get(1)!.length, 1);
  assert.deepEqual(stopped.seen.get(0), greedy);
  assert.equal(stopResult[0].finishReason, 'length');
});

test('cancellation ends every row with finishReason cancelled', async () => {
  const d = await loadDecoder(fp32Dir);
  let steps = 0;
  const ctl = control({ isCancelled: () => steps >= 3 });
  const original = ctl.onTokens;
  ctl.onTokens = (rows, tokens) => {
    steps++;
    original(rows, tokens);
  };
  const results = await d.decode({ ...baseRequest, prompts: [prompt, [3, 4]], maxTokens: 1000 }, ctl);
  assert.deepEqual(
    results.map((r) => r.finishReason),
    ['cancelled', 'cancelled'],
  );
  assert.equal(ctl.seen.get(0)!.length, 3);
});

test('the prefill logits of n identical prompts are shared (one prefill row) and rows stay independent', async () => {
  const d = await loadDecoder(fp32Dir);
  const ctl = control();
  await d.decode({ ...baseRequest, prompts: [prompt, [1, 2], prompt], maxTokens: 4 }, ctl);
  assert.deepEqual(ctl.seen.get(0), ctl.seen.get(2));
  const ref = await greedyUncached(d, [1, 2], 4);
  assert.deepEqual(ctl.seen.get(1), ref.tokens);
  assert.equal(argmaxOf(new Float32Array([0, 3, 1])), 1);
});

test('vocabLimit: ids at or above the limit (model vocabulary padding) are never sampled', async () => {
  const d = await loadDecoder(fp32Dir);
  const free = control();
  await d.decode({ ...baseRequest, prompts: [prompt], maxTokens: 8 }, free);
  const top = Math.max(...free.seen.get(0)!);
  const limited = control();
  await d.decode({ ...baseRequest, prompts: [prompt], maxTokens: 8, vocabLimit: top }, limited);
  assert.ok(limited.seen.get(0)!.every((t) => t < top));
  const sampled = control();
  await d.decode({ ...baseRequest, prompts: [prompt, prompt], maxTokens: 30, temperature: 1, vocabLimit: 50 }, sampled);
  assert.ok([...sampled.seen.values()].flat().every((t) => t < 50));
});

test('cancellation during a long prefill stops between chunks', async () => {
  const d = await loadDecoder(fp32Dir, { prefillChunk: 4 });
  let checks = 0;
  const ctl = control({ isCancelled: () => ++checks > 2 });
  const results = await d.decode({ ...baseRequest, prompts: [Array.from({ length: 40 }, (_, i) => i + 1)] }, ctl);
  assert.equal(results[0].finishReason, 'cancelled');
  assert.equal(results[0].tokens, 0);
  assert.equal(checks, 3, 'stopped after two of ten chunks');
});
