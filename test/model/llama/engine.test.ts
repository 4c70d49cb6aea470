// LlamaEngine on node-llama-cpp's CPU backend (the real llama.cpp 3.21.1 prebuilt, installed on first use into
// the git-ignored .kimina-cache/llama-runtime, about 85 MB, seconds from npm's cache) with the tiny test
// checkpoint: llama.cpp tokenizes our rendered prompt to our ids; greedy tokens from the F32 GGUF equal the
// ONNX decoder's; the engines' texts are equal; streaming, stop strings, maxTokens, cancel, seeds, several
// conversations at once, the prompt-lookup predictor, the status line, and the factory's fallback to onnx.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { tinyCheckpointFiles } from '../tinyCheckpoint';
import { loadNodeLlamaCpp, prebuiltPackages, LlamaUnavailable } from '../../../backend/model/llama/runtime';
import type { NodeLlamaCpp } from '../../../backend/model/llama/binding';
import { LlamaEngine } from '../../../backend/model/llama/engine';
import { ensureModelGguf } from '../../../backend/model/llama/ggufConvert';
import { convertCheckpoint } from '../../../backend/model/onnx/convert';
import { OnnxEngine } from '../../../backend/model/onnx/engine';
import { engineFactories } from '../../../backend/model/index';
import { writeTinyModel } from '../../../backend/demo/models/tinyModel';
import type { ChatMessage } from '../../../backend/protocol';
import { loadDecoder } from '../onnx/helpers';

const RUNTIME_DIR = resolve(__dirname, '../../../.kimina-cache/llama-runtime');

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-llama-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

const conversation: ChatMessage[] = [
  { role: 'system', content: 'You are an expert in mathematics and proving theorems in Lean 4.' },
  {
    role: 'user',
    content:
      'Think about and solve the following problems step by step in Lean 4.\n\n```lean4\ntheorem t (x : ℝ) (h : 2 * x + 3 = 11) : x = 4 := by\n  sorry\n```',
  },
];
const other: ChatMessage[] = [{ role: 'user', content: 'norm_num' }];
const greedy = { maxTokens: 24, temperature: 0, topP: 1 };

let runtime: NodeLlamaCpp;
const checkpoint = tempDir();
for (const [name, content] of Object.entries(tinyCheckpointFiles(11))) writeFileSync(join(checkpoint, name), content);
const engines = new Map<string, LlamaEngine>();

async function engine(weights: 'f32' | 'f16' | 'q8_0' = 'f32', speculation: number | false = false) {
  const key = `${weights}/${speculation}`;
  if (!engines.has(key))
    engines.set(
      key,
      await LlamaEngine.load(checkpoint, {
        runtime,
        weights,
        threads: 1,
        speculation,
        gpu: 'cpu',
        log: () => undefined,
      }),
    );
  return engines.get(key)!;
}

before(async () => {
  runtime = await loadNodeLlamaCpp(RUNTIME_DIR, { gpu: false, installWith: process.env });
});
after(async () => {
  for (const e of engines.values()) await e.close();
});

test('llama.cpp tokenizes our rendered prompt to exactly our ids; countPromptTokens is our count', async () => {
  const e = await engine();
  const ids = await e.promptIds(conversation);
  assert.ok(ids.length > 40);
  assert.equal(await e.countPromptTokens(conversation), ids.length);
  const { compileChatTemplate } = await import('../../../backend/model/chatTemplate');
  const { loadTokenizer } = await import('../../../backend/model/tokenizer');
  const tok = await loadTokenizer(checkpoint);
  const text = await compileChatTemplate(tok.chatTemplate!, tok.templateTokens).render(conversation);
  assert.deepEqual(e.llamaTokenize(text), ids);
});

/** Greedy continuation from the ONNX decoder (the split-cache graph of the same checkpoint, float32). */
async function onnxGreedy(onnxDir: string, prompt: number[], steps: number): Promise<number[]> {
  const d = await loadDecoder(onnxDir);
  const state = d.newState(1);
  let logits = await d.feed(state, [prompt]);
  const out: number[] = [];
  for (let i = 0; i < steps; i++) {
    let best = 0;
    for (let v = 1; v < logits.length; v++) if (logits[v] > logits[best]) best = v;
    out.push(best);
    logits = await d.feed(state, [[best]]);
  }
  return out;
}

/** Greedy continuation from llama.cpp on the engine's GGUF, token ids (no stop on end tokens). */
async function llamaGreedy(weights: 'f32' | 'f16' | 'q8_0', prompt: number[], steps: number): Promise<number[]> {
  const llama = await runtime.getLlama({ gpu: false, build: 'never', logLevel: 'error' });
  const model = await llama.loadModel({ modelPath: await ensureModelGguf(checkpoint, weights) });
  const context = await model.createContext({
    contextSize: prompt.length + steps + 8,
    sequences: 1,
    threads: 1,
    flashAttention: false,
  });
  const out: number[] = [];
  try {
    for await (const t of context.getSequence().evaluate(prompt, { temperature: 0, yieldEogToken: true })) {
      out.push(t);
      if (out.length >= steps) break;
    }
  } finally {
    await context.dispose();
    await model.dispose();
    await llama.dispose();
  }
  return out;
}

test('greedy tokens: the F32 GGUF equals the ONNX graph token for token; F16 and Q8_0 agreement reported', async (t) => {
  const onnxDir = join(tempDir(), 'onnx');
  await convertCheckpoint(checkpoint, onnxDir, { quantize: 'fp32' });
  const prompt = await (await engine()).promptIds(conversation);
  const steps = 32;
  const reference = await onnxGreedy(onnxDir, prompt, steps);
  assert.ok(new Set(reference).size >= 8, `a varied continuation: ${reference}`);
  assert.deepEqual(await llamaGreedy('f32', prompt, steps), reference);
  for (const weights of ['f16', 'q8_0'] as const) {
    const got = await llamaGreedy(weights, prompt, steps);
    const agree = got.findIndex((tok, i) => tok !== reference[i]);
    const prefix = agree < 0 ? steps : agree;
    t.diagnostic(`${weights}: the first ${prefix} of ${steps} greedy tokens equal the float32 ONNX graph's`);
    assert.ok(prefix >= 8, `${weights}: only ${prefix} greedy tokens agree`);
  }
  // And the engines, end to end: the same text.
  const onnx = await OnnxEngine.load(onnxDir, { threads: 1, inThread: true, log: () => undefined });
  try {
    const [a] = await onnx.generate([conversation], greedy);
    const [b] = await (await engine()).generate([conversation], greedy);
    assert.equal(b.text, a.text);
    assert.equal(b.tokens, a.tokens);
  } finally {
    await onnx.close();
  }
});

test('streams deltas that add up to the text; maxTokens ends with length', async () => {
  const e = await engine();
  let streamed = '';
  const [g] = await e.generate([conversation], greedy, (i, d) => {
    assert.equal(i, 0);
    streamed += d;
  });
  assert.equal(streamed, g.text);
  assert.equal(g.tokens, greedy.maxTokens);
  assert.equal(g.finishReason, 'length');
  assert.ok(g.text.length > 0);
});

test('a stop string ends the answer before it, never streamed', async () => {
  const e = await engine();
  const [full] = await e.generate([conversation], greedy);
  const stop = full.text.slice(6, 8);
  const cut = full.text.indexOf(stop);
  let streamed = '';
  const [g] = await e.generate([conversation], { ...greedy, stop: [stop] }, (_i, d) => {
    streamed += d;
  });
  assert.equal(g.finishReason, 'stop');
  assert.equal(g.text, full.text.slice(0, cut));
  assert.equal(streamed, g.text);
  assert.ok(g.tokens < full.tokens);
});

test('an abort ends decoding with what was generated and finishReason cancelled', async () => {
  const e = await engine();
  const controller = new AbortController();
  let deltas = 0;
  const [g] = await e.generate([conversation], { ...greedy, maxTokens: 400, signal: controller.signal }, () => {
    if (++deltas === 3) controller.abort();
  });
  assert.equal(g.finishReason, 'cancelled');
  assert.ok(g.tokens >= 3 && g.tokens < 400, `${g.tokens} tokens`);
  const aborted = new AbortController();
  aborted.abort();
  assert.deepEqual(await e.generate([conversation, other], { ...greedy, signal: aborted.signal }), [
    { text: '', tokens: 0, finishReason: 'cancelled' },
    { text: '', tokens: 0, finishReason: 'cancelled' },
  ]);
});

test('several conversations decode together as one context, each as it would alone', async () => {
  const e = await engine();
  const streamed = ['', ''];
  const [a, b] = await e.generate([conversation, other], greedy, (i, d) => {
    streamed[i] += d;
  });
  assert.deepEqual(streamed, [a.text, b.text]);
  const [aAlone] = await e.generate([conversation], greedy);
  const [bAlone] = await e.generate([other], greedy);
  assert.equal(a.text, aAlone.text);
  assert.equal(b.text, bAlone.text);
});

test('sampling: the same seed gives the same answer; temperature and topP reach llama.cpp', async () => {
  const e = await engine();
  const sampled = { maxTokens: 24, temperature: 1.5, topP: 1, seed: 7 };
  const [a] = await e.generate([conversation], sampled);
  const [b] = await e.generate([conversation], sampled);
  assert.equal(a.text, b.text);
  const [g] = await e.generate([conversation], greedy);
  const seeds = await Promise.all(
    [8, 9, 10].map(async (seed) => (await e.generate([conversation], { ...sampled, seed }))[0].text),
  );
  assert.ok(
    [a.text, ...seeds].some((s) => s !== g.text),
    'sampling at temperature 1.5 differs from greedy',
  );
});

test('the prompt-lookup token predictor leaves the greedy answer unchanged', async () => {
  const [plain] = await (await engine()).generate([conversation], { ...greedy, maxTokens: 48 });
  const [drafted] = await (await engine('f32', 8)).generate([conversation], { ...greedy, maxTokens: 48 });
  assert.equal(drafted.text, plain.text);
  assert.match((await engine('f32', 8)).detail, /prompt lookup up to 8 drafts/);
});

test("the status line says llama.cpp runs on the CPU and why; maxContext is the config's", async () => {
  const e = await engine();
  assert.equal(e.name, 'llama');
  assert.equal(e.backend, 'cpu');
  assert.match(e.detail, /^llama\.cpp cpu \(KIMINA_LLAMA_GPU=cpu\); f32 GGUF; 1 threads$/);
  assert.equal(e.maxContext, 4096);
});

test('prebuilt packages per platform: Metal on Apple silicon, Vulkan and CUDA (with a driver) on x64', () => {
  assert.deepEqual(prebuiltPackages('darwin', 'arm64', true, false), ['@node-llama-cpp/mac-arm64-metal']);
  assert.deepEqual(prebuiltPackages('linux', 'x64', false, true), ['@node-llama-cpp/linux-x64']);
  assert.deepEqual(prebuiltPackages('linux', 'x64', true, false), [
    '@node-llama-cpp/linux-x64',
    '@node-llama-cpp/linux-x64-vulkan',
  ]);
  assert.deepEqual(prebuiltPackages('win32', 'x64', true, true), [
    '@node-llama-cpp/win-x64',
    '@node-llama-cpp/win-x64-vulkan',
    '@node-llama-cpp/win-x64-cuda',
    '@node-llama-cpp/win-x64-cuda-ext',
  ]);
  assert.throws(() => prebuiltPackages('freebsd', 'x64', true, false), LlamaUnavailable);
});

test('the factory falls back to the onnx engine where the llama engine cannot run, saying why', async () => {
  const onnxOnly = writeTinyModel(tempDir()).dir; // an ONNX export: no checkpoint to write a GGUF from
  const logs: string[] = [];
  const e = await engineFactories.llama(
    { engine: 'llama', model: onnxOnly, llamaGpu: 'cpu', llamaWeights: 'q8_0', threads: 1 } as Parameters<
      typeof engineFactories.llama
    >[0],
    { home: tempDir(), log: (l) => logs.push(l) },
  );
  try {
    assert.equal(e.name, 'onnx');
    assert.ok(
      logs.some((l) => /no safetensors checkpoint.*falling back to the onnx engine/.test(l)),
      logs.join('\n'),
    );
  } finally {
    await e.close();
  }
});

test('the factory builds the llama engine from a checkpoint folder with the runtime in the Kimina home', async () => {
  const home = tempDir();
  const { runtimeDirOf } = await import('../../../backend/model/llama/runtime');
  const { symlinkSync, mkdirSync } = await import('node:fs');
  mkdirSync(join(home, 'engines'), { recursive: true });
  symlinkSync(RUNTIME_DIR, runtimeDirOf(home)); // the runtime installed above, not a second install
  const e = await engineFactories.llama(
    { engine: 'llama', model: checkpoint, llamaGpu: 'cpu', llamaWeights: 'f32', threads: 1 } as Parameters<
      typeof engineFactories.llama
    >[0],
    { home, log: () => undefined },
  );
  try {
    assert.equal(e.name, 'llama');
    const [g] = await e.generate([conversation], greedy);
    const [ref] = await (await engine()).generate([conversation], greedy);
    assert.equal(g.text, ref.text);
  } finally {
    await e.close();
  }
});

test('schedule(): calibrated on the CPU backend at first use (rows as sequences of one context), stored beside the model, read back, capped by memory; the prover decodes in its waves', async (t) => {
  const { readFileSync, statSync } = await import('node:fs');
  const { cacheBytesPerToken } = await import('../../../backend/model/onnx/memoryPlan');
  const { modelShapeOf } = await import('../../../backend/model/calibrationFile');
  const { RECIPE_ANSWERS } = await import('../../../backend/model/schedule');
  const { proveSchedule } = await import('../../../backend/prover/waves');
  const { DEFAULT_SETTINGS } = await import('../../../backend/prover/request');
  const folder = tempDir();
  for (const [name, content] of Object.entries(tinyCheckpointFiles(11))) writeFileSync(join(folder, name), content);
  const load = (options: { rowsAtOnce?: number; totalMemory?: number } = {}) =>
    LlamaEngine.load(folder, { runtime, weights: 'f32', threads: 1, gpu: 'cpu', log: () => undefined, ...options });

  const first = await load();
  let cost;
  try {
    const s = await first.schedule();
    assert.ok(s?.cost && s.calibratedNow && s.from === 'calibration', JSON.stringify(s));
    cost = s.cost;
    t.diagnostic(`tiny checkpoint, llama.cpp cpu, 1 thread: ${JSON.stringify(cost)}`);
    assert.ok(cost.a > 0 && Number.isFinite(cost.b) && Number.isFinite(cost.m), JSON.stringify(cost));
    assert.deepEqual(
      s.estimates.map((e) => e.rows),
      [1, 2, 4, 8],
    );
    assert.match(
      first.detail,
      /^llama\.cpp cpu .*; 1 threads; calibrated .* a step: \d rows? at once \(expected first proof/,
    );
    // The prover's waves follow it.
    const waves = await proveSchedule(first, { ...DEFAULT_SETTINGS, samples: 8 });
    assert.equal(waves.rows, Math.min(s.rows, 8));
    assert.equal(waves.from, 'calibration');
  } finally {
    await first.close();
  }
  const stored = JSON.parse(readFileSync(join(folder, 'calibration.json'), 'utf8')) as Record<string, unknown>;
  const [key] = Object.keys(stored);
  assert.match(key, /^llama\/f32\/cpu\/1t\/./);
  assert.deepEqual(stored[key], cost);

  // Read back, not timed again; a memory where one recipe-length row fits beside the GGUF leaves one candidate.
  const shape = modelShapeOf(folder)!;
  const row = cacheBytesPerToken(shape, 'fp16') * RECIPE_ANSWERS.maxTokens;
  const gguf = statSync(join(folder, 'gguf', 'model.f32.gguf')).size;
  const small = await load({ totalMemory: 2 * (gguf + 1.5 * row) });
  try {
    const s = await small.schedule();
    assert.ok(s && !s.calibratedNow);
    assert.deepEqual(s.cost, cost);
    assert.deepEqual(
      s.estimates.map((e) => e.rows),
      [1],
    );
  } finally {
    await small.close();
  }
  const forced = await load({ rowsAtOnce: 3 });
  try {
    const s = await forced.schedule();
    assert.equal(s?.rows, 3);
    assert.equal(s?.from, 'setting');
  } finally {
    await forced.close();
  }
});
