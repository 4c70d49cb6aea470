// The C API path (onnxruntime's C API through koffi, the GroupQueryAttention graph with its cache appended
// in place; ortNative.ts, gqaDecoder.ts) against the Node binding's split-cache path: which one runs and
// why, the same answers through the engine (worker thread included), the fallback where the C API path
// cannot load, and its decoder's own promises (rows of different lengths together, rows dropping out).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OnnxEngine, type OnnxEngineOptions } from '../../../backend/model/onnx/engine';
import type { ChatMessage } from '../../../backend/protocol';
import { writeScriptedModel, BOGUS_ANSWER } from '../../../backend/demo/models/scriptedModel';
import { writeTinyModel } from '../../../backend/demo/models/tinyModel';
import { ONNX_GQA_FILE } from '../../../backend/model/onnx/modelFolder';
import { loadDecoder, loadGqaDecoder, maxAbsDiff, tempDir } from './helpers';

const tiny = writeTinyModel(tempDir(), { seed: 3 }).dir;
const scripted = writeScriptedModel(tempDir(), { variant: 'fix' }).dir;

async function withEngine<T>(dir: string, options: OnnxEngineOptions, run: (e: OnnxEngine) => Promise<T>): Promise<T> {
  const engine = await OnnxEngine.load(dir, { threads: 1, log: () => undefined, ...options });
  try {
    return await run(engine);
  } finally {
    await engine.close();
  }
}

const convo = (text: string): ChatMessage[] => [{ role: 'user', content: text }];
const conversations = [convo('theorem one'), convo('a longer theorem statement with more words in it'), convo('x')];

test('the engine decodes through the C API path by default and says so; the same greedy answers as the Node binding', async () => {
  const options = { maxTokens: 40, temperature: 0, topP: 1 };
  const capi = await withEngine(tiny, {}, async (e) => {
    assert.equal(e.runtime.path, 'c-api-gqa');
    assert.match(e.runtime.pathWhy, /onnxruntime 1\.30\.0 C API through koffi/);
    assert.equal(e.kvCache.precision, 'fp32');
    // The status line (`kimina` prints it with the engine: backend/app/app.ts describe()).
    assert.match(
      e.detail,
      /^c-api-gqa \(onnxruntime 1\.30\.0 C API through koffi .*\); fp32 KV cache; 1 threads on the cpu$/,
    );
    return e.generate(conversations, options);
  });
  const node = await withEngine(tiny, { path: 'node-split' }, async (e) => {
    assert.equal(e.runtime.path, 'node-split');
    assert.equal(e.runtime.pathWhy, 'asked for the Node binding');
    assert.match(e.detail, /^node-split \(asked for the Node binding\); fp\d+ KV cache/);
    return e.generate(conversations, options);
  });
  assert.deepEqual(
    capi.map((g) => g.text),
    node.map((g) => g.text),
  );
  assert.ok(capi.some((g) => g.tokens > 0));
});

test('the scripted prover double answers the same on the C API path, in the worker and on the calling thread', async () => {
  for (const inThread of [false, true]) {
    await withEngine(scripted, { inThread }, async (e) => {
      assert.equal(e.runtime.path, 'c-api-gqa');
      const [first] = await e.generate([[{ role: 'user', content: 'theorem algebra_example' }]], {
        maxTokens: 400,
        temperature: 0,
        topP: 1,
      });
      assert.ok(first.text.length > 0);
    });
  }
  // The fix-turn prompt (with Lean's error) reaches the correct answer through the C API path as through the Node binding.
  const fix: ChatMessage[] = [
    { role: 'user', content: 'prove it' },
    { role: 'assistant', content: BOGUS_ANSWER },
    { role: 'user', content: "# Error 1:\nError message: \nunknown identifier 'bogus_lemma'\n" },
  ];
  const run = (path: 'c-api-gqa' | 'node-split') =>
    withEngine(scripted, { path }, (e) => e.generate([fix], { maxTokens: 400, temperature: 0, topP: 1 }));
  assert.deepEqual(
    (await run('c-api-gqa')).map((g) => g.text),
    (await run('node-split')).map((g) => g.text),
  );
});

test('where the C API path cannot load, the Node binding runs and the reason is given', async () => {
  // A folder converted before the GQA graph existed.
  const old = tempDir();
  for (const f of readdirSync(tiny)) if (f !== 'onnx') copyFileSync(join(tiny, f), join(old, f));
  mkdirSync(join(old, 'onnx'));
  for (const f of readdirSync(join(tiny, 'onnx'))) copyFileSync(join(tiny, 'onnx', f), join(old, 'onnx', f));
  rmSync(join(old, ONNX_GQA_FILE));
  await withEngine(old, {}, async (e) => {
    assert.equal(e.runtime.path, 'node-split');
    assert.match(e.runtime.pathWhy, /no onnx\/model\.gqa\.onnx/);
  });
  // A GQA graph onnxruntime refuses: the C API path fails to load, the engine still loads.
  writeFileSync(join(old, ONNX_GQA_FILE), 'not a graph');
  const lines: string[] = [];
  await withEngine(old, { log: (l) => lines.push(l) }, async (e) => {
    assert.equal(e.runtime.path, 'node-split');
    assert.match(e.runtime.pathWhy, /the C API path did not load: onnxruntime CreateSession/);
  });
  assert.ok(lines.some((l) => l.includes('decoding through onnxruntime-node with the split-cache graph')));
  // Asked for the C API path only: a clear error instead of the fallback.
  await assert.rejects(OnnxEngine.load(old, { threads: 1, path: 'c-api-gqa', log: () => undefined }), /C API path/);
  // Speculation (off by default) and an explicit float16 cache stay on the split graph.
  await withEngine(tiny, { speculation: { maxDraft: 4 } }, async (e) => assert.equal(e.runtime.path, 'node-split'));
  await withEngine(tiny, { kvCache: 'fp16' }, async (e) => {
    assert.equal(e.runtime.path, 'node-split');
    assert.equal(e.runtime.pathWhy, 'KIMINA_KV_CACHE=fp16 runs on the split graph');
  });
  // 'auto' where not even one 24,576-token answer's float32 cache fits half the memory: the split graph's float16.
  await withEngine(tiny, { totalMemory: 1e6 }, async (e) => {
    assert.equal(e.runtime.path, 'node-split');
    assert.match(
      e.runtime.pathWhy,
      /24576-token answer in the C API path's float32 cache would not fit half the memory/,
    );
    assert.equal(e.kvCache.precision, 'fp16');
  });
});

test('GqaDecoder: logits equal the split graph position by position, across cache growth', async () => {
  const gqa = loadGqaDecoder(tiny);
  const split = await loadDecoder(tiny);
  const prompt = Array.from({ length: 700 }, (_, i) => (i * 31 + 5) % 300);
  const a = split.newState(1);
  const b = gqa.newState(1, 64); // grows from 64 slots several times
  let worst = 0;
  for (let p = 0; p < prompt.length; p += 1) {
    worst = Math.max(worst, maxAbsDiff(await split.feed(a, [[prompt[p]]]), await gqa.feed(b, [[prompt[p]]])));
  }
  assert.ok(b.cache.capacity >= 700);
  assert.ok(worst < 1e-4, `max logit difference ${worst}`);
  // Chunked prefill (chunks of 256 into a batch of one) equals token by token.
  const c = gqa.newState(1);
  const prefilled = (await gqa.prefill(c, [prompt]))!;
  const stepped = await gqa.feed(gqa.newState(1), [prompt]);
  assert.ok(maxAbsDiff(prefilled, stepped) < 1e-4);
});

test('GqaDecoder: rows of different lengths decode together, rows leave, n samples share a prompt: each row as alone', async () => {
  const gqa = loadGqaDecoder(tiny);
  const ps = [[5, 9, 11], Array.from({ length: 90 }, (_, i) => (i * 7) % 300), [42], [5, 9, 11]];
  const greedy = async (prompts: number[][], maxTokens: number[] | number, eosIds: number[] = []) => {
    const out = prompts.map(() => [] as number[]);
    const limits = Array.isArray(maxTokens) ? maxTokens : prompts.map(() => maxTokens);
    const stopped = new Set<number>();
    const results = await gqa.decode(
      { prompts, maxTokens: Math.max(...limits), temperature: 0, topP: 1, seed: 1, eosIds },
      {
        onTokens: (rows, tokens) =>
          rows.forEach((row, i) => {
            out[row].push(tokens[i]);
            if (out[row].length >= limits[row]) stopped.add(row);
          }),
        isStopped: (row) => stopped.has(row),
        isCancelled: () => false,
      },
    );
    return { out, results };
  };
  const alone: number[][] = [];
  for (const p of ps) alone.push((await greedy([p], 30)).out[0]); // one decode at a time, as the backends queue them
  // Rows stopping at different steps (the caller's stop) leave the batch; the others go on unchanged.
  const { out, results } = await greedy(ps, [30, 12, 30, 5]);
  assert.deepEqual(out[0], alone[0]);
  assert.deepEqual(out[1], alone[1].slice(0, 12));
  assert.deepEqual(out[2], alone[2]);
  assert.deepEqual(out[3], alone[3].slice(0, 5));
  assert.deepEqual(
    results.map((r) => r.finishReason),
    ['length', 'stop', 'length', 'stop'],
  );
  // EOS ends a row without adding a token.
  const eos = alone[2][3];
  const ended = await greedy([ps[2]], 30, [eos]);
  assert.deepEqual(ended.out[0], alone[2].slice(0, alone[2].indexOf(eos)));
  assert.equal(ended.results[0].finishReason, 'stop');
});

test('int8 cache (KIMINA_KV_CACHE=int8): the C API path with model.gqa8.onnx, a quarter of the bytes; float16 where it is missing', async () => {
  await withEngine(tiny, { kvCache: 'int8' }, async (e) => {
    assert.equal(e.runtime.path, 'c-api-gqa');
    assert.equal(e.kvCache.precision, 'int8');
    const [g] = await e.generate([convo('theorem one')], { maxTokens: 20, temperature: 0, topP: 1 });
    assert.ok(g.tokens > 0);
  });
  const old = tempDir();
  for (const f of readdirSync(tiny)) if (f !== 'onnx') copyFileSync(join(tiny, f), join(old, f));
  mkdirSync(join(old, 'onnx'));
  for (const f of readdirSync(join(tiny, 'onnx')))
    if (f !== 'model.gqa8.onnx') copyFileSync(join(tiny, 'onnx', f), join(old, 'onnx', f));
  await withEngine(old, { kvCache: 'int8' }, async (e) => {
    assert.equal(e.runtime.path, 'node-split');
    assert.equal(e.kvCache.precision, 'fp16');
    assert.match(e.kvCache.why, /no onnx\/model\.gqa8\.onnx/);
  });
});

test('int8 cache: logits near the float32 path and long greedy continuations agreeing (stated thresholds)', async () => {
  const fp32 = loadGqaDecoder(tiny);
  const int8 = loadGqaDecoder(tiny, 1, true);
  assert.equal(int8.newState(1).cache.keys[0].BYTES_PER_ELEMENT, 1);
  const prompt = Array.from({ length: 120 }, (_, i) => (i * 53 + 3) % 300);
  const a = fp32.newState(1);
  const b = int8.newState(1);
  let diff = 0;
  let scale = 0;
  for (const t of prompt) {
    const x = await fp32.feed(a, [[t]]);
    const y = await int8.feed(b, [[t]]);
    diff = Math.max(diff, maxAbsDiff(x, y));
    for (const v of x) scale = Math.max(scale, Math.abs(v));
  }
  assert.ok(diff / scale < 0.06, `int8 logits: rel ${diff / scale}`);
  const run = async (d: typeof fp32) => {
    const out: number[] = [];
    await d.decode(
      { prompts: [prompt.slice(0, 20)], maxTokens: 150, temperature: 0, topP: 1, seed: 1, eosIds: [] },
      { onTokens: (_r, t) => out.push(t[0]), isStopped: () => false, isCancelled: () => false },
    );
    return out;
  };
  const x = await run(fp32);
  const y = await run(int8);
  let k = 0;
  while (k < x.length && x[k] === y[k]) k++;
  assert.ok(k >= 75, `int8 greedy agrees with float32 for ${k} of ${x.length} tokens`);
});

test('calibration at first run: timed on the device, stored beside the model, read back; the row choice in the status line', async () => {
  const dir = tempDir();
  for (const f of readdirSync(tiny)) if (f !== 'onnx') copyFileSync(join(tiny, f), join(dir, f));
  mkdirSync(join(dir, 'onnx'));
  for (const f of readdirSync(join(tiny, 'onnx'))) copyFileSync(join(tiny, 'onnx', f), join(dir, 'onnx', f));
  const first = await withEngine(dir, {}, async (e) => {
    const s = await e.schedule();
    assert.ok(s?.calibratedNow && s.cost && s.from === 'calibration');
    assert.ok(s.cost.a > 0 && s.cost.b >= 0 && s.cost.m >= 0);
    assert.ok([1, 2, 4, 8].includes(s.rows));
    assert.match(e.detail, /calibrated .* ms \+ .* a step: \d rows? at once \(expected first proof ~\d+ (s|min) over/);
    return s.cost;
  });
  const stored = JSON.parse(readFileSync(join(dir, 'calibration.json'), 'utf8')) as Record<string, unknown>;
  assert.equal(Object.keys(stored).length, 1);
  assert.match(Object.keys(stored)[0], /^c-api-gqa\/fp32\/1t\/cpu\//);
  await withEngine(dir, {}, async (e) => {
    const s = await e.schedule();
    assert.ok(s && !s.calibratedNow);
    assert.deepEqual(s.cost, first);
  });
  // kimina.rowsAtOnce overrides the choice; the calibration stays shown beside it.
  await withEngine(dir, { rowsAtOnce: 3 }, async (e) => {
    const s = await e.schedule();
    assert.equal(s?.rows, 3);
    assert.equal(s?.from, 'setting');
    assert.deepEqual(s?.cost, first);
    assert.match(e.detail, /calibrated .* a step: 3 rows at once \(kimina\.rowsAtOnce\)/);
  });
  // Memory caps the rows: each row's cache at the recipe's 24,576 tokens must fit half the memory beside the
  // weights (this tiny model: 512 bytes per token, 12.6 MB a row; 40 MB of memory leaves room for one).
  await withEngine(dir, { totalMemory: 40e6 }, async (e) => {
    const s = await e.schedule();
    assert.equal(s?.rows, 1);
    assert.deepEqual(
      s?.estimates.map((x) => x.rows),
      [1],
    );
  });
  // The split path has no step probe: no schedule, and the status line says nothing about one; the override
  // still sets the rows there.
  await withEngine(dir, { path: 'node-split' }, async (e) => {
    assert.equal(await e.schedule(), undefined);
    assert.doesNotMatch(e.detail, /calibrated/);
  });
  await withEngine(dir, { path: 'node-split', rowsAtOnce: 2 }, async (e) => {
    const s = await e.schedule();
    assert.equal(s?.rows, 2);
    assert.equal(s?.cost, undefined);
    assert.match(e.detail, /; 2 rows at once \(kimina\.rowsAtOnce\)$/);
  });
});
