// Speculative decoding by prompt lookup: drafts from n-gram matches, verified several tokens per
// forward pass. Greedy output is identical with and without it (alone and batched, rows ending at
// different times); sampling keeps its distribution (the acceptance rule on fixed logits by
// chi-square over many draws, and whole decoded sequences of the tiny model against the exactly
// enumerated distribution).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeTinyModel } from '../../../backend/demo/models/tinyModel';
import type { Decoder, DecodeRequest, SpeculationOptions } from '../../../backend/model/onnx/decoder';
import { nucleus, nucleusProbability, seededRandom, verifyDraft } from '../../../backend/model/onnx/sampler';
import { PromptLookup } from '../../../backend/model/onnx/promptLookup';
import { loadDecoder, tempDir } from './helpers';

const SPEC: SpeculationOptions = { maxDraft: 4 };

async function run(d: Decoder, req: Omit<DecodeRequest, 'seed' | 'eosIds'> & { seed?: number; eosIds?: number[] }) {
  const out = req.prompts.map(() => [] as number[]);
  const results = await d.decode(
    { seed: 1, eosIds: [], ...req },
    {
      onTokens: (rows, tokens) => rows.forEach((r, i) => out[r].push(tokens[i])),
      isStopped: () => false,
      isCancelled: () => false,
    },
  );
  return { out, results, stats: d.lastStats };
}

/** Prompts that repeat themselves (so lookup drafts), of different lengths. */
function repetitivePrompts(): number[][] {
  const phrase = [40, 41, 42, 43, 44, 45];
  return [
    [...phrase, 50, ...phrase, 51, ...phrase],
    [7, 8, 9, 7, 8, 9, 7, 8],
    [100, 101, 102, 103, 100, 101, 102, 103, 100, 101, 200, 201, 202, 100, 101],
    [5],
  ];
}

test('prompt lookup drafts the continuation of the latest earlier match, longest n-gram first', () => {
  const p = new PromptLookup({ ngramMax: 3, ngramMin: 2 });
  const c = [1, 2, 3, 4, 5, 9, 9, 1, 2, 3];
  assert.deepEqual(p.draft(c, 3), [4, 5, 9]);
  c.push(4);
  assert.deepEqual(p.draft(c, 2), [5, 9]);
  c.push(7);
  assert.deepEqual(p.draft(c, 3), [], 'no earlier "4 7" nor longer match');
  assert.deepEqual(new PromptLookup().draft([1, 2, 1], 4), [], 'a 1-gram match is below ngramMin 2');
  assert.deepEqual(new PromptLookup({ ngramMin: 1 }).draft([1, 2, 1], 4), [2, 1]);
  // The latest occurrence wins.
  assert.deepEqual(new PromptLookup().draft([1, 2, 3, 1, 2, 4, 1, 2], 1), [4]);
});

for (const [name, options] of [
  ['fp32', { quant: 'fp32' as const }],
  ['4-bit, float activations', { quant: 'q4' as const, accuracyLevel: 0 as const }],
] as const) {
  test(`greedy output is identical with and without speculation (${name}), alone and batched`, async () => {
    const d = await loadDecoder(writeTinyModel(tempDir(), { seed: 3, ...options }).dir);
    const prompts = repetitivePrompts();
    const off = await run(d, { prompts, maxTokens: 60, temperature: 0, topP: 1 });
    const on = await run(d, { prompts, maxTokens: 60, temperature: 0, topP: 1, speculation: SPEC });
    assert.deepEqual(on.out, off.out);
    assert.deepEqual(on.results, off.results);
    assert.ok(on.stats.accepted > 20, `drafts were accepted (${JSON.stringify(on.stats)})`);
    assert.ok(on.stats.drafted > on.stats.accepted, 'and some were rejected');
    assert.ok(on.stats.steps < off.stats.steps, `fewer forward passes (${on.stats.steps} vs ${off.stats.steps})`);
    for (const [i, p] of prompts.entries()) {
      const alone = await run(d, { prompts: [p], maxTokens: 60, temperature: 0, topP: 1, speculation: SPEC });
      assert.deepEqual(alone.out[0], off.out[i], `prompt ${i} alone`);
    }
    // Rows that end early (EOS, different limits) leave the others' output unchanged.
    const eos = off.out[0][10];
    const offEos = await run(d, { prompts, maxTokens: 60, temperature: 0, topP: 1, eosIds: [eos] });
    const onEos = await run(d, {
      prompts,
      maxTokens: 60,
      temperature: 0,
      topP: 1,
      eosIds: [eos],
      speculation: { maxDraft: 6 },
    });
    assert.deepEqual(onEos.out, offEos.out);
    assert.deepEqual(onEos.results, offEos.results);
    assert.ok(onEos.results.some((r) => r.finishReason === 'stop'));
    const short = await run(d, { prompts, maxTokens: 7, temperature: 0, topP: 1, speculation: SPEC });
    assert.deepEqual(
      short.out,
      off.out.map((o) => o.slice(0, 7)),
      'the token limit is exact even inside an accepted draft',
    );
  });
}

/** Chi-square statistic of counts against probabilities, bins with expected < 5 merged. */
function chiSquare(
  counts: Map<string, number>,
  probs: Map<string, number>,
  total: number,
): { stat: number; dof: number } {
  let stat = 0;
  let dof = -1;
  let smallObserved = 0;
  let smallExpected = 0;
  for (const [k, p] of probs) {
    const e = p * total;
    const o = counts.get(k) ?? 0;
    if (e < 5) {
      smallObserved += o;
      smallExpected += e;
      continue;
    }
    stat += (o - e) ** 2 / e;
    dof++;
  }
  for (const k of counts.keys()) if (!probs.has(k)) throw new Error(`sampled ${k}, which has probability 0`);
  if (smallExpected > 0) {
    stat += (smallObserved - smallExpected) ** 2 / Math.max(smallExpected, 1e-9);
    dof++;
  }
  return { stat, dof };
}

/** Upper 0.1% point of chi-square (Wilson–Hilferty). */
function chiSquareCritical(dof: number): number {
  const z = 3.09;
  return dof * (1 - 2 / (9 * dof) + z * Math.sqrt(2 / (9 * dof))) ** 3;
}

test('the acceptance rule keeps the sampling distribution (temperature 1, top-p 0.95), drafts inside and outside the nucleus', () => {
  const logits = Float32Array.from([2.0, 1.5, 1.2, 0.3, -0.5, -3, -6, 0.9]);
  const d = nucleus(logits, 1, 0.95);
  const probs = new Map<string, number>();
  for (let id = 0; id < logits.length; id++)
    if (nucleusProbability(d, id) > 0) probs.set(String(id), nucleusProbability(d, id));
  assert.ok(probs.size < logits.length, 'top-p removes the tail');
  const random = seededRandom(12345);
  const N = 60_000;
  for (const draft of [0, 3, 6]) {
    // the favourite, a middling token, a token outside the nucleus
    const counts = new Map<string, number>();
    let accepted = 0;
    for (let i = 0; i < N; i++) {
      const v = verifyDraft(logits, draft, 1, 0.95, random);
      if (v.accepted) accepted++;
      counts.set(String(v.token), (counts.get(String(v.token)) ?? 0) + 1);
    }
    const { stat, dof } = chiSquare(counts, probs, N);
    assert.ok(stat < chiSquareCritical(dof), `draft ${draft}: chi-square ${stat.toFixed(1)} with ${dof} dof`);
    assert.ok(
      Math.abs(accepted / N - nucleusProbability(d, draft)) < 0.01,
      `draft ${draft} accepted with probability p(draft)`,
    );
  }
  // Greedy: the draft stands exactly when it is the first maximum.
  assert.deepEqual(verifyDraft(logits, 0, 0, 1, random), { token: 0, accepted: true });
  assert.deepEqual(verifyDraft(logits, 2, 0, 1, random), { token: 0, accepted: false });
});

test('decoded sequences keep their exact distribution with speculation (tiny model, 5-token vocabulary, many seeds)', async () => {
  const d = await loadDecoder(writeTinyModel(tempDir(), { seed: 5 }).dir);
  const limit = 5;
  const prompt = [1, 2, 3, 1, 2, 3, 1, 2, 4, 1, 2, 3, 4, 1, 2];
  const steps = 3;
  const temperature = 1;
  const topP = 0.95;
  // Exact distribution of the first `steps` tokens, enumerated prefix by prefix from the model.
  const exact = new Map<string, number>();
  const expand = async (prefix: number[], p: number): Promise<void> => {
    if (prefix.length === steps) {
      exact.set(prefix.join(','), p);
      return;
    }
    const logits = await d.feed(d.newState(1), [[...prompt, ...prefix]]);
    const n = nucleus(logits.subarray(0, limit), temperature, topP);
    for (let t = 0; t < limit; t++) {
      const q = nucleusProbability(n, t);
      if (q > 0) await expand([...prefix, t], p * q);
    }
  };
  await expand([], 1);
  const counts = new Map<string, number>();
  let total = 0;
  let drafted = 0;
  let accepted = 0;
  const rows = 50;
  for (let seed = 0; seed < 80; seed++) {
    const r = await run(d, {
      prompts: new Array(rows).fill(prompt),
      maxTokens: steps,
      temperature,
      topP,
      vocabLimit: limit,
      seed,
      speculation: { maxDraft: 2, ngramMin: 1 },
    });
    drafted += d.lastStats.drafted;
    accepted += d.lastStats.accepted;
    for (const o of r.out) {
      counts.set(o.join(','), (counts.get(o.join(',')) ?? 0) + 1);
      total++;
    }
  }
  assert.ok(accepted > 100 && drafted - accepted > 100, `drafts accepted and rejected (${accepted} of ${drafted})`);
  const { stat, dof } = chiSquare(counts, exact, total);
  assert.ok(dof >= 5, `enough categories (${dof})`);
  assert.ok(stat < chiSquareCritical(dof), `chi-square ${stat.toFixed(1)} with ${dof} dof over ${total} sequences`);
});

test('sampling reads the softmax computed in the graph: equal to the softmax of the logits at the temperature', async () => {
  const d = await loadDecoder(writeTinyModel(tempDir(), { seed: 4 }).dir);
  assert.ok(d.graphSoftmax);
  const prompt = [3, 1, 4, 1, 5, 9, 2, 6];
  const logits = await d.feed(d.newState(1), [prompt]);
  const { scores, kind } = await d.feedScores(d.newState(1), [prompt], 1, 0.7);
  assert.equal(kind, 'probs');
  const ref = nucleus(logits, 0.7, 1);
  let diff = 0;
  for (let i = 0; i < logits.length; i++) diff = Math.max(diff, Math.abs(scores[i] - ref.probs[i] / ref.total));
  assert.ok(diff < 1e-6, `max difference ${diff}`);
  assert.equal((await d.feedScores(d.newState(1), [prompt], 1, 0)).kind, 'logits', 'greedy fetches the logits');
});
