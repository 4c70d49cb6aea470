// The float16 KV cache (onnx/model.kv16.onnx): half the bytes, the same exactness promises as the
// float32 cache (cached = uncached, prefill at once = token by token, batched = alone, speculation
// on = off for greedy), and close to the float32 graph's logits. "Same" is within 1e-3 on the logits
// here, not 1e-4 as with the float32 cache: onnxruntime's float32 kernels differ in the last bits
// between shapes (one token or a chunk), and now and then such a difference crosses a float16
// rounding boundary of a cached value, one float16 step (about 1e-3 relative) apart.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import { writeTinyModel } from '../../../backend/demo/models/tinyModel';
import {
  writeScriptedModel,
  ALGEBRA_STATEMENT,
  BOGUS_ANSWER,
  CORRECT_ANSWER,
} from '../../../backend/demo/models/scriptedModel';
import type { ChatMessage } from '../../../backend/protocol';
import type { Decoder, DecodeRequest, DecoderOptions } from '../../../backend/model/onnx/decoder';
import { KvCache } from '../../../backend/model/onnx/kvCache';
import { chooseKvCache } from '../../../backend/model/onnx/kvPrecision';
import { readModelFolder } from '../../../backend/model/onnx/modelFolder';
import { OnnxEngine } from '../../../backend/model/onnx/engine';
import { argmax } from '../../../backend/model/onnx/sampler';
import { loadDecoder, maxAbsDiff, tempDir } from './helpers';

const fp32Dir = writeTinyModel(tempDir(), { seed: 3 }).dir;
const q4Dir = writeTinyModel(tempDir(), { seed: 3, quant: 'q4' }).dir;

async function loadHalf(dir: string, options: DecoderOptions = {}): Promise<Decoder> {
  assert.ok(readModelFolder(dir).onnxHalfCachePath, 'the converter writes onnx/model.kv16.onnx');
  return loadDecoder(dir, options, 'fp16');
}

async function greedy(d: Decoder, prompt: number[], steps: number, cached = true) {
  const tokens: number[] = [];
  const logits: Float32Array[] = [];
  const state = d.newState(1);
  let l = await d.feed(state, [prompt]);
  const seq = [...prompt];
  for (let i = 0; i < steps; i++) {
    logits.push(l.slice());
    const t = argmax(l);
    tokens.push(t);
    seq.push(t);
    l = cached ? await d.feed(state, [[t]]) : await d.feed(d.newState(1), [seq]);
  }
  return { tokens, logits, state };
}

const prompt = [11, 250, 33, 7, 90, 140, 2, 64];

for (const [label, dir] of [
  ['fp32 weights', fp32Dir],
  ['4-bit weights', q4Dir],
] as const) {
  test(`${label}: the float16 cache holds half the bytes and decodes like the float32 cache`, async () => {
    const half = await loadHalf(dir, { growStep: 16 });
    const full = await loadDecoder(dir, { growStep: 16 });
    assert.equal(half.halfCache, true);
    assert.equal(full.halfCache, false);
    const h = await greedy(half, prompt, 40);
    const f = await greedy(full, prompt, 40);
    assert.ok(h.state.cache.keys[0] instanceof Uint16Array);
    assert.equal(h.state.cache.keys[0].byteLength * 2, f.state.cache.keys[0].byteLength);
    assert.equal(KvCache.bytesPerToken(h.state.cache.shape) * 2, KvCache.bytesPerToken(f.state.cache.shape));
    assert.deepEqual(h.tokens, f.tokens);
    const diff = Math.max(...h.logits.map((l, i) => maxAbsDiff(l, f.logits[i])));
    assert.ok(diff < 2e-2 && diff > 0, `float16 rounding moves the logits a little: ${diff}`);
  });

  test(`${label}: with the float16 cache, cached = uncached and prefill at once = token by token`, async () => {
    const half = await loadHalf(dir, { growStep: 16, prefillChunk: 3 });
    const cached = await greedy(half, prompt, 30);
    const uncached = await greedy(half, prompt, 30, false);
    assert.deepEqual(cached.tokens, uncached.tokens);
    const diff = Math.max(...cached.logits.map((l, i) => maxAbsDiff(l, uncached.logits[i])));
    assert.ok(diff < 1e-3, `max logit difference ${diff}`);
    const byToken = half.newState(1);
    let last: Float32Array = new Float32Array();
    for (const t of prompt) last = await half.feed(byToken, [[t]]);
    const atOnce = await half.prefill(half.newState(1), [prompt]);
    assert.ok(maxAbsDiff(last, atOnce!) < 1e-3, `${maxAbsDiff(last, atOnce!)}`);
  });
}

const request: DecodeRequest = { prompts: [], maxTokens: 24, temperature: 0, topP: 1, seed: 1, eosIds: [] };

async function decodeTokens(d: Decoder, req: DecodeRequest): Promise<number[][]> {
  const out = req.prompts.map(() => [] as number[]);
  await d.decode(req, {
    onTokens: (rows, tokens) => rows.forEach((r, i) => out[r].push(tokens[i])),
    isStopped: () => false,
    isCancelled: () => false,
  });
  return out;
}

test('float16 cache: batched = alone, a shared prefill for identical prompts, and speculation leaves greedy output unchanged', async () => {
  const half = await loadHalf(fp32Dir);
  const phrase = [40, 41, 42, 43, 44, 45];
  const prompts = [[...phrase, 50, ...phrase, 51, ...phrase], [9, 8, 7, 6, 5, 4, 3, 2, 1, 200], [42]];
  const batched = await decodeTokens(half, { ...request, prompts });
  for (let r = 0; r < prompts.length; r++)
    assert.deepEqual(batched[r], (await decodeTokens(half, { ...request, prompts: [prompts[r]] }))[0], `row ${r}`);
  // Identical prompts share one prefill (cache rows duplicated), then decode as separate rows.
  const shared = await decodeTokens(half, { ...request, prompts: [prompts[1], prompts[1], prompts[2]] });
  assert.deepEqual(shared, [batched[1], batched[1], batched[2]]);
  const speculated = await decodeTokens(half, { ...request, prompts, speculation: { maxDraft: 4 } });
  assert.deepEqual(speculated, batched);
  assert.ok(half.lastStats.drafted > 0, 'drafts were verified');
});

test("'auto' takes the float16 cache where a float32 cache of 8 × 8,192 tokens would exceed 40% of memory", () => {
  const shape = { layers: 28, kvHeads: 8, headDim: 128 }; // Qwen3-0.6B and 1.7B: 224 KiB per token
  assert.equal(KvCache.bytesPerToken(shape), 224 * 1024);
  const gib = 2 ** 30;
  assert.equal(chooseKvCache('auto', shape, 16 * gib).precision, 'fp16');
  assert.equal(chooseKvCache('auto', shape, 24 * gib).precision, 'fp16');
  assert.equal(chooseKvCache('auto', shape, 64 * gib).precision, 'fp32');
  assert.match(chooseKvCache('auto', shape, 16 * gib).why, /14\.0 GiB, more than 40% of 16\.0 GiB/);
  assert.equal(chooseKvCache('fp32', shape, 1).precision, 'fp32');
  assert.equal(chooseKvCache('fp16', shape, 1e15).precision, 'fp16');
});

test('the engine answers the same with either cache, and falls back to float32 where the folder has no float16 graph', async () => {
  const dir = tempDir();
  writeScriptedModel(dir, { variant: 'fix' });
  const logs: string[] = [];
  const user: ChatMessage = {
    role: 'user',
    content: `Think about and solve the following problems step by step in Lean 4.\n\n# Formal Statement:\n\`\`\`lean4\n${ALGEBRA_STATEMENT} := by\n  sorry\n\`\`\`\n`,
  };
  const fixTurn: ChatMessage[] = [
    user,
    { role: 'assistant', content: BOGUS_ANSWER },
    { role: 'user', content: "# Error 1:\nError message: \nunknown identifier 'bogus_lemma'\n" },
  ];
  for (const kvCache of ['fp32', 'fp16'] as const) {
    const engine = await OnnxEngine.load(dir, { kvCache, inThread: true, threads: 1, log: (l) => logs.push(l) });
    assert.equal(engine.kvCache.precision, kvCache);
    const answers = await engine.generate([[user], fixTurn], { maxTokens: 400, temperature: 0, topP: 1 });
    assert.deepEqual(
      answers.map((a) => a.text),
      [BOGUS_ANSWER, CORRECT_ANSWER],
      kvCache,
    );
    await engine.close();
  }
  assert.ok(
    logs.some((l) => l.startsWith('onnx: fp16 KV cache (KIMINA_KV_CACHE)')),
    logs.join('\n'),
  );

  const tiny = await OnnxEngine.load(dir, {
    kvCache: 'auto',
    totalMemory: 1024,
    inThread: true,
    threads: 1,
    log: () => {},
  });
  assert.equal(tiny.kvCache.precision, 'fp16', tiny.kvCache.why);
  await tiny.close();
  rmSync(readModelFolder(dir).onnxHalfCachePath!);
  assert.equal(existsSync(readModelFolder(dir).onnxHalfCachePath ?? ''), false);
  const old = await OnnxEngine.load(dir, { kvCache: 'fp16', inThread: true, threads: 1, log: () => {} });
  assert.equal(old.kvCache.precision, 'fp32');
  assert.match(old.kvCache.why, /no onnx\/model\.kv16\.onnx/);
  await old.close();
});
