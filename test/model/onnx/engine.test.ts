// OnnxEngine through the model folder layout and its worker thread: the scripted model's answers,
// streaming, stop strings, cancellation, n samples, CUDA fallback and clear errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { OnnxEngine } from '../../../backend/model/onnx/engine';
import type { ChatMessage } from '../../../backend/protocol';
import {
  writeScriptedModel,
  ALGEBRA_STATEMENT,
  BOGUS_ANSWER,
  CORRECT_ANSWER,
} from '../../../backend/demo/models/scriptedModel';
import { writeTinyModel } from '../../../backend/demo/models/tinyModel';
import { writeOnnxGraph } from '../../../backend/model/onnx/modelFolder';
import { tempDir } from './helpers';

const system: ChatMessage = {
  role: 'system',
  content: 'You are an expert in mathematics and proving theorems in Lean 4.',
};
const user: ChatMessage = {
  role: 'user',
  content: `Think about and solve the following problems step by step in Lean 4.\n\n# Problem:\n\n\n# Formal Statement:\n\`\`\`lean4\nimport Mathlib\n\n${ALGEBRA_STATEMENT} := by\n  sorry\n\`\`\`\n`,
};
const firstTurn = [system, user];
const fixTurn: ChatMessage[] = [
  system,
  user,
  { role: 'assistant', content: BOGUS_ANSWER },
  {
    role: 'user',
    content:
      "# Error 1:\nError message: \nunknown identifier 'bogus_lemma'\n\nLean 4 code snippet with error:\n```lean4\n004 >|   exact bogus_lemma h₁\n```\n",
  },
];
const greedy = { maxTokens: 400, temperature: 0, topP: 1 };

const scripted = writeScriptedModel(tempDir(), { variant: 'fix' }).dir;
const tiny = writeTinyModel(tempDir(), { seed: 2 }).dir;

async function withEngine<T>(dir: string, run: (e: OnnxEngine) => Promise<T>, options = {}): Promise<T> {
  const engine = await OnnxEngine.load(dir, { threads: 1, log: () => undefined, ...options });
  try {
    return await run(engine);
  } finally {
    await engine.close();
  }
}

test('scripted model: the first turn gets the bogus proof, the fix turn the correct one, streamed exactly', async () => {
  await withEngine(scripted, async (engine) => {
    assert.equal(engine.name, 'onnx');
    assert.equal(engine.maxContext, 40960);
    const streamed = ['', ''];
    const [a, b] = await engine.generate([firstTurn, fixTurn], greedy, (i, d) => {
      streamed[i] += d;
    });
    assert.equal(a.text, BOGUS_ANSWER);
    assert.equal(b.text, CORRECT_ANSWER);
    assert.deepEqual(streamed, [a.text, b.text]);
    assert.equal(a.finishReason, 'stop');
    assert.equal(b.finishReason, 'stop');
    assert.ok(a.tokens > 10);
    // Decoded alone, the same answers (batching with left padding changes nothing).
    const [alone] = await engine.generate([fixTurn], greedy);
    assert.equal(alone.text, CORRECT_ANSWER);
  });
});

test('speculative decoding through the worker: the same answers, streamed exactly, tiny model text unchanged', async () => {
  const options = { speculation: { maxDraft: 6 } };
  await withEngine(
    scripted,
    async (engine) => {
      const streamed = ['', ''];
      const [a, b] = await engine.generate([firstTurn, fixTurn], greedy, (i, d) => {
        streamed[i] += d;
      });
      assert.equal(a.text, BOGUS_ANSWER);
      assert.equal(b.text, CORRECT_ANSWER);
      assert.deepEqual(streamed, [a.text, b.text]);
    },
    options,
  );
  const conversation: ChatMessage[] = [
    { role: 'user', content: 'theorem t : 1 + 1 = 2 := by norm_num\ntheorem t : 1 + 1 = 2 := by' },
  ];
  const plain = await withEngine(tiny, (e) => e.generate([conversation, conversation], { ...greedy, maxTokens: 80 }));
  const spec = await withEngine(
    tiny,
    (e) => e.generate([conversation, conversation], { ...greedy, maxTokens: 80 }),
    options,
  );
  assert.deepEqual(spec, plain);
});

test('scripted model, direct variant: the first turn is already correct', async () => {
  const dir = writeScriptedModel(tempDir(), { variant: 'direct' }).dir;
  await withEngine(dir, async (engine) => {
    const [g] = await engine.generate([firstTurn], greedy);
    assert.equal(g.text, CORRECT_ANSWER);
  });
});

test('stop strings end a sample without streaming the stop string', async () => {
  await withEngine(scripted, async (engine) => {
    let streamed = '';
    const [g] = await engine.generate([firstTurn], { ...greedy, stop: ['</think>'] }, (_, d) => {
      streamed += d;
    });
    assert.equal(g.finishReason, 'stop');
    assert.equal(g.text, BOGUS_ANSWER.slice(0, BOGUS_ANSWER.indexOf('</think>')));
    assert.equal(streamed, g.text);
  });
});

test('the token limit ends a sample with finishReason length', async () => {
  await withEngine(scripted, async (engine) => {
    const [g] = await engine.generate([firstTurn], { ...greedy, maxTokens: 3 });
    assert.equal(g.finishReason, 'length');
    assert.equal(g.tokens, 3);
    assert.ok(BOGUS_ANSWER.startsWith(g.text) && g.text.length > 0);
  });
});

test('an AbortSignal cancels generation and keeps what was generated', async () => {
  await withEngine(tiny, async (engine) => {
    const controller = new AbortController();
    let deltas = 0;
    const texts = ['', ''];
    const out = await engine.generate(
      [firstTurn, firstTurn],
      { maxTokens: 100_000, temperature: 1, topP: 1, seed: 1, signal: controller.signal },
      (i, d) => {
        texts[i] += d;
        if (++deltas === 6) controller.abort();
      },
    );
    assert.deepEqual(
      out.map((g) => g.finishReason),
      ['cancelled', 'cancelled'],
    );
    assert.ok(out[0].tokens >= 3 && out[0].tokens < 1000, `${out[0].tokens} tokens`);
    assert.deepEqual(
      out.map((g) => g.text),
      texts,
    );
    const pre = new AbortController();
    pre.abort();
    const [g] = await engine.generate([firstTurn], { ...greedy, signal: pre.signal });
    assert.equal(g.finishReason, 'cancelled');
    assert.equal(g.tokens, 0);
  });
});

test('n samples: seeded sampling is reproducible, samples differ, greedy samples agree', async () => {
  await withEngine(tiny, async (engine) => {
    const four = [firstTurn, firstTurn, firstTurn, firstTurn];
    const opts = { maxTokens: 12, temperature: 1, topP: 0.95, seed: 11 };
    const a = await engine.generate(four, opts);
    const b = await engine.generate(four, opts);
    assert.deepEqual(a, b);
    assert.ok(new Set(a.map((g) => g.text)).size > 1, 'different samples');
    const g = await engine.generate([firstTurn, firstTurn], { ...greedy, maxTokens: 12 });
    const [single] = await engine.generate([firstTurn], { ...greedy, maxTokens: 12 });
    assert.deepEqual(g, [single, single]);
    assert.equal(await engine.countPromptTokens(firstTurn), (await engine.promptIds(firstTurn)).length);
  });
});

test('the same results in the worker thread and on the calling thread', async () => {
  const opts = { maxTokens: 10, temperature: 0.8, topP: 0.9, seed: 5 };
  const inWorker = await withEngine(tiny, (e) => e.generate([firstTurn, fixTurn], opts));
  const inThread = await withEngine(tiny, (e) => e.generate([firstTurn, fixTurn], opts), { inThread: true });
  assert.deepEqual(inWorker, inThread);
});

test('CUDA asked for on a machine without it: the CPU is used and the reason logged', async () => {
  const lines: string[] = [];
  await withEngine(
    tiny,
    async (engine) => {
      assert.equal(engine.runtime.device, 'cpu');
      assert.ok(engine.runtime.fallbackReason && engine.runtime.fallbackReason.length > 0);
      const [g] = await engine.generate([firstTurn], { ...greedy, maxTokens: 2 });
      assert.equal(g.tokens, 2);
    },
    { device: 'cuda', log: (l: string) => lines.push(l) },
  );
  assert.ok(
    lines.some((l) => /CUDA is not available/.test(l)),
    lines.join('\n'),
  );
});

test('clear errors: no graph, bad maxTokens, a prompt longer than the context', async () => {
  const broken = writeTinyModel(tempDir(), { seed: 2 }).dir;
  rmSync(join(broken, 'onnx'), { recursive: true });
  await assert.rejects(OnnxEngine.load(broken, { log: () => undefined }), /has no onnx\/model.onnx/);
  await assert.rejects(OnnxEngine.load(tempDir(), { log: () => undefined }), /config.json not found/);
  const optimum = writeTinyModel(tempDir(), { seed: 2 });
  writeOnnxGraph(optimum.dir, optimum.shape, optimum.weights, { quant: 'fp32', layout: 'optimum' });
  await assert.rejects(OnnxEngine.load(optimum.dir, { log: () => undefined }), /not in the split-cache layout/);
  const short = writeTinyModel(tempDir(), { seed: 2, shape: { maxPositions: 64 } }).dir;
  await withEngine(short, async (engine) => {
    await assert.rejects(engine.generate([firstTurn], { ...greedy, maxTokens: 0 }), /maxTokens/);
    await assert.rejects(engine.generate([firstTurn], greedy), /does not fit the model's 64-token context/);
    // The engine still works afterwards.
    const [g] = await engine.generate([[{ role: 'user', content: 'hi' }]], { ...greedy, maxTokens: 100 });
    assert.equal(g.finishReason, 'length');
    assert.ok(g.tokens < 64);
  });
});

test('a process that never closes its engine still exits, and one awaiting a generation stays until it ends', () => {
  const script = `
    const { OnnxEngine } = require(${JSON.stringify(require.resolve('../../../backend/model/onnx/engine'))});
    OnnxEngine.load(${JSON.stringify(scripted)}, { threads: 1, log: () => {} }); // loaded, never used
    OnnxEngine.load(${JSON.stringify(scripted)}, { threads: 1, log: () => {} })
      .then((e) => e.generate([[{ role: 'user', content: 'hi' }]], { maxTokens: 3, temperature: 0, topP: 1 }))
      .then((g) => console.log('tokens', g[0].tokens));`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /tokens 3/);
});

test('the engine settings reach the engine: KIMINA_KV_CACHE, KIMINA_SPECULATION, KIMINA_SPINNING', async () => {
  const { createEngine: create, engineConfigOf } = await import('../../../backend/model/index');
  const { kiminaHome, readSettings } = await import('../../../backend/settings/settings');
  const engineConfigFromEnv = (env: Record<string, string>) => engineConfigOf(readSettings(env));
  const createEngine = (config: Parameters<typeof create>[0], o: { log: () => undefined }) =>
    create(config, { home: kiminaHome(), ...o });
  const engine = (await createEngine(
    engineConfigFromEnv({
      KIMINA_ENGINE: 'onnx',
      KIMINA_MODEL: scripted,
      KIMINA_THREADS: '1',
      KIMINA_KV_CACHE: 'fp16',
      KIMINA_SPECULATION: '1',
      KIMINA_SPINNING: '1',
    }),
    { log: () => undefined },
  )) as OnnxEngine;
  try {
    assert.equal(engine.kvCache.precision, 'fp16');
    assert.equal(engine.speculating, true);
    const [a, b] = await engine.generate([firstTurn, fixTurn], greedy);
    assert.deepEqual([a.text, b.text], [BOGUS_ANSWER, CORRECT_ANSWER]);
  } finally {
    await engine.close();
  }
  const plain = (await createEngine(
    engineConfigFromEnv({
      KIMINA_ENGINE: 'onnx',
      KIMINA_MODEL: scripted,
      KIMINA_THREADS: '1',
      KIMINA_KV_CACHE: 'fp32',
    }),
    { log: () => undefined },
  )) as OnnxEngine;
  assert.equal(plain.speculating, false);
  assert.equal(plain.kvCache.precision, 'fp32');
  await plain.close();
});
