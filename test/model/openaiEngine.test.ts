import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { createServer as createHttpServer } from 'node:http';
import { OpenAIEngine } from '../../backend/model/openai/engine';
import type { ChatMessage } from '../../backend/protocol';
import type { SamplingOptions } from '../../backend/model/engine';
import { startStandInOpenAIServer, type StandInOptions } from './standInOpenAIServer';
import { QWEN3_DIR } from './qwen3Fixture';

const MODEL = 'AI-MO/Kimina-Prover-RL-0.6B';
const PROMPT: ChatMessage[] = [
  { role: 'system', content: 'You are an expert in mathematics and proving theorems in Lean 4.' },
  { role: 'user', content: 'Think about and solve the following problems step by step in Lean 4.\n\n# Problem:\nx\n' },
];
const SAMPLING: SamplingOptions = { maxTokens: 1000, temperature: 1, topP: 0.95 };
/** The scripted answer of sample k. */
const answerOf = (k: number): string =>
  `<think>\nSample ${k} thinks about ℝ and h₀.\n</think>\n\nSummary ${k}.\n\n\`\`\`lean4\ntheorem t : True := by\n  trivial\n\`\`\``;

async function withServer(
  o: Partial<StandInOptions>,
  body: (
    engine: OpenAIEngine,
    server: Awaited<ReturnType<typeof startStandInOpenAIServer>>,
    logs: string[],
  ) => Promise<void>,
): Promise<void> {
  const server = await startStandInOpenAIServer({ answer: (_m, k) => answerOf(k), ...o });
  const logs: string[] = [];
  try {
    const engine = await OpenAIEngine.connect({
      baseUrl: server.baseUrl,
      model: MODEL,
      apiKey: o.apiKey,
      log: (l) => logs.push(l),
    });
    await body(engine, server, logs);
  } finally {
    await server.close();
  }
}

test('streams n samples in one request; deltas add up to each text; maxContext from /models', async () => {
  await withServer({}, async (engine, server) => {
    assert.equal(engine.maxContext, 32768);
    const deltas = new Map<number, string>();
    const gens = await engine.generate([PROMPT, PROMPT, PROMPT], SAMPLING, (i, d) =>
      deltas.set(i, (deltas.get(i) ?? '') + d),
    );
    assert.deepEqual(
      gens.map((g) => g.text),
      [0, 1, 2].map(answerOf),
    );
    assert.deepEqual(
      gens.map((g) => g.finishReason),
      ['stop', 'stop', 'stop'],
    );
    gens.forEach((g, i) => {
      assert.equal(deltas.get(i), g.text);
      assert.equal(g.tokens, Math.ceil([...g.text].length / 4));
    });
    const chats = server.requests.filter((r) => r.path === '/v1/chat/completions');
    assert.equal(chats.length, 1);
    assert.equal(chats[0].body.n, 3);
    assert.equal(chats[0].body.stream, true);
    assert.equal(chats[0].body.top_p, 0.95);
    assert.equal(chats[0].body.top_k, -1, 'top-k pinned off, as the recipe samples');
    assert.equal(chats[0].body.max_tokens, 1000);
    assert.deepEqual(chats[0].body.messages, PROMPT);
    assert.ok(
      !('chat_template_kwargs' in chats[0].body) && !('think' in chats[0].body),
      'thinking is never switched off',
    );
  });
});

test('different conversations go in separate requests and land at their own index', async () => {
  const other: ChatMessage[] = [...PROMPT.slice(0, 1), { role: 'user', content: 'other' }];
  await withServer({ answer: (m, k) => `${m[1].content.slice(0, 5)}#${k}` }, async (engine, server) => {
    const gens = await engine.generate([PROMPT, other, PROMPT], SAMPLING);
    assert.deepEqual(
      gens.map((g) => g.text),
      ['Think#0', 'other#0', 'Think#1'],
    );
    assert.equal(server.requests.filter((r) => r.path === '/v1/chat/completions').length, 2);
  });
});

for (const field of ['reasoning', 'reasoning_content'] as const) {
  test(`a separate '${field}' field is folded back into <think>…</think> before the content`, async () => {
    await withServer({ reasoningField: field }, async (engine) => {
      const streamed: string[] = [];
      const [gen] = await engine.generate([PROMPT], SAMPLING, (_i, d) => streamed.push(d));
      assert.equal(gen.text, answerOf(0));
      assert.equal(streamed.join(''), answerOf(0));
    });
  });
}

test('trimmed reasoning (llama.cpp style) still yields whole lines around the think tags', async () => {
  await withServer({ reasoningField: 'reasoning_content', trimReasoning: true }, async (engine) => {
    const [gen] = await engine.generate([PROMPT], SAMPLING);
    assert.equal(
      gen.text,
      '<think>\nSample 0 thinks about ℝ and h₀.\n</think>\nSummary 0.\n\n```lean4\ntheorem t : True := by\n  trivial\n```',
    );
  });
});

test('a server that ignores n gets one request per sample, with distinct seeds, and the engine remembers', async () => {
  await withServer({ honorsN: false, answer: (_m, _k, seed) => `seed=${seed}` }, async (engine, server, logs) => {
    const gens = await engine.generate([PROMPT, PROMPT, PROMPT], { ...SAMPLING, seed: 10 });
    assert.deepEqual(gens.map((g) => g.text).sort(), ['seed=10', 'seed=11', 'seed=12']);
    assert.ok(logs.some((l) => l.includes('ignores n')));
    const before = server.requests.length;
    const again = await engine.generate([PROMPT, PROMPT], { ...SAMPLING, seed: 1 });
    const chats = server.requests.slice(before);
    assert.equal(chats.length, 2);
    assert.ok(chats.every((r) => r.body.n === 1));
    assert.deepEqual(
      again.map((g) => g.text),
      ['seed=1', 'seed=2'],
    );
  });
});

test('max_tokens gives finishReason length; stop strings are sent and honoured; usage counts tokens', async () => {
  await withServer({ usage: true }, async (engine, server) => {
    const [cut] = await engine.generate([PROMPT], { ...SAMPLING, maxTokens: 3 });
    assert.equal(cut.finishReason, 'length');
    assert.equal(cut.text, answerOf(0).slice(0, 12));
    assert.equal(cut.tokens, 3);
    const [stopped] = await engine.generate([PROMPT], { ...SAMPLING, stop: ['```lean4'] });
    assert.equal(stopped.text, answerOf(0).slice(0, answerOf(0).indexOf('```lean4')));
    assert.equal(stopped.finishReason, 'stop');
    assert.deepEqual(server.requests.at(-1)!.body.stop, ['```lean4']);
  });
});

test('a server that answers JSON instead of a stream still works', async () => {
  await withServer({ ignoreStream: true, reasoningField: 'reasoning' }, async (engine) => {
    const gens = await engine.generate([PROMPT, PROMPT], SAMPLING);
    assert.deepEqual(
      gens.map((g) => g.text),
      [answerOf(0), answerOf(1)],
    );
  });
});

test('cancellation aborts the request and resolves with the text so far', async () => {
  const long = '<think>\n' + 'step '.repeat(400) + '\n</think>\nend';
  await withServer({ answer: () => long, chunkDelayMs: 5 }, async (engine, server) => {
    const controller = new AbortController();
    let streamed = '';
    const started = Date.now();
    const [gen] = await engine.generate([PROMPT], { ...SAMPLING, signal: controller.signal }, (_i, d) => {
      streamed += d;
      if (streamed.length >= 40) controller.abort();
    });
    assert.equal(gen.finishReason, 'cancelled');
    assert.ok(gen.text.length >= 40 && gen.text.length < long.length && long.startsWith(gen.text));
    assert.equal(gen.tokens, Math.ceil(gen.text.length / 4), 'tokens so far are counted');
    assert.ok(Date.now() - started < 2000, 'returned promptly');
    for (let i = 0; i < 50 && server.abortedStreams === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.abortedStreams, 1, 'the server saw the client go away');
    const [none] = await engine.generate([PROMPT], { ...SAMPLING, signal: AbortSignal.abort() });
    assert.deepEqual(none, { text: '', tokens: 0, finishReason: 'cancelled' });
  });
});

test('a server that goes quiet times out with a clear error', async () => {
  const server = await startStandInOpenAIServer({ answer: () => 'a'.repeat(40), chunkDelayMs: 400 });
  try {
    const engine = await OpenAIEngine.connect({ baseUrl: server.baseUrl, model: MODEL, idleTimeoutMs: 150 });
    await assert.rejects(engine.generate([PROMPT], SAMPLING), /model server at .* timed out/);
  } finally {
    await server.close();
  }
});

test('a connection dropped mid-answer rejects and says the server broke off', async () => {
  await withServer({ dropAfterChunks: 3, chunkDelayMs: 5 }, async (engine) => {
    await assert.rejects(
      engine.generate([PROMPT], SAMPLING),
      /the model server at .*chat\/completions (broke off the answer|closed the stream before the answer was finished)/,
    );
  });
});

test("an error event mid-stream rejects with the server's message", async () => {
  await withServer({ failAfterChunks: 2 }, async (engine) => {
    await assert.rejects(engine.generate([PROMPT], SAMPLING), /failed during generation: CUDA out of memory/);
  });
});

test('connection refused names the URL and how to start a server', async () => {
  const port = await new Promise<number>((resolve) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
  await assert.rejects(
    OpenAIEngine.connect({ baseUrl: `http://127.0.0.1:${port}/v1`, model: MODEL }),
    (err: Error) =>
      err.message.includes(`http://127.0.0.1:${port}/v1/models`) &&
      /connection refused/.test(err.message) &&
      /vllm serve/.test(err.message),
  );
});

test('unknown models, wrong keys and wrong paths get clear errors', async () => {
  const server = await startStandInOpenAIServer({ answer: () => 'x', apiKey: 'sekret' });
  try {
    await assert.rejects(
      OpenAIEngine.connect({ baseUrl: server.baseUrl, model: 'nope/model', apiKey: 'sekret' }),
      /has no model 'nope\/model'; it serves: AI-MO\/Kimina-Prover-RL-0.6B/,
    );
    await assert.rejects(
      OpenAIEngine.connect({ baseUrl: server.baseUrl, model: MODEL, apiKey: 'wrong' }),
      /HTTP 401.*KIMINA_OPENAI_API_KEY/,
    );
    await assert.rejects(
      OpenAIEngine.connect({ baseUrl: server.baseUrl.replace('/v1', '/v2'), model: MODEL, apiKey: 'sekret' }),
      /404 Not Found: is KIMINA_OPENAI_BASE_URL/,
    );
    await assert.rejects(OpenAIEngine.connect({ baseUrl: 'localhost:8000', model: MODEL }), /must be an http\(s\) URL/);
    const only = await OpenAIEngine.connect({ baseUrl: server.baseUrl, apiKey: 'sekret' });
    assert.equal(only.model, MODEL, 'the only served model is picked when none is set');
    assert.equal(server.requests.at(-1)!.headers.authorization, 'Bearer sekret');
  } finally {
    await server.close();
  }
});

test("a 404 during generation is told apart by the server's model list, not by its wording", async () => {
  // A bare server (a double of no named system): GET /v1/models lists what `listed` holds at the time; the chat
  // route answers 404 with Starlette's default body ({"detail":"Not Found"}, what FastAPI servers such as vLLM
  // send for a route they lack), which names no model either way.
  let listed = [MODEL];
  const http = createHttpServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    if (req.url === '/v1/models') res.end(JSON.stringify({ object: 'list', data: listed.map((id) => ({ id })) }));
    else {
      res.statusCode = 404;
      res.end(JSON.stringify({ detail: 'Not Found' }));
    }
  });
  await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
  const port = (http.address() as { port: number }).port;
  try {
    const engine = await OpenAIEngine.connect({ baseUrl: `http://127.0.0.1:${port}/v1`, model: MODEL });
    await assert.rejects(engine.generate([PROMPT], SAMPLING), /lists 'AI-MO\/Kimina-Prover-RL-0.6B' but has no route/);
    listed = ['another/model']; // the model was unloaded after connect
    await assert.rejects(engine.generate([PROMPT], SAMPLING), /has no model 'AI-MO\/Kimina-Prover-RL-0.6B' \(HTTP 404/);
  } finally {
    await new Promise((r) => http.close(r));
  }
});

test('a 404 for the model during generation names the model', async () => {
  // This server lists no models, so connect() cannot check the name up front.
  const server = await startStandInOpenAIServer({ answer: () => 'x', models: [{ id: 'other' }], hideModelList: true });
  try {
    const engine = await OpenAIEngine.connect({ baseUrl: server.baseUrl, model: MODEL });
    await assert.rejects(
      engine.generate([PROMPT], SAMPLING),
      /has no model 'AI-MO\/Kimina-Prover-RL-0.6B'.*does not exist/,
    );
  } finally {
    await server.close();
  }
});

test('prompt tokens: vLLM /tokenize, llama.cpp apply-template + tokenize, local tokenizer, estimate', async () => {
  await withServer({ tokenize: 'vllm' }, async (engine, server) => {
    const words = (t: string): number => t.split(/\s+/).filter(Boolean).length;
    assert.equal(
      await engine.countPromptTokens(PROMPT),
      3 + 4 + words(PROMPT[0].content) + 4 + words(PROMPT[1].content),
    );
    assert.equal(engine.tokenCountSource, 'server');
    assert.deepEqual(server.requests.at(-1)!.body.add_generation_prompt, true);
  });
  await withServer({ tokenize: 'llamacpp' }, async (engine) => {
    const rendered = `<system>${PROMPT[0].content}<user>${PROMPT[1].content}<assistant>`;
    assert.equal(await engine.countPromptTokens(PROMPT), [...rendered].length);
    assert.equal(engine.tokenCountSource, 'server-template');
  });
  const server = await startStandInOpenAIServer({ answer: () => 'x' });
  try {
    const local = await OpenAIEngine.connect({
      baseUrl: server.baseUrl,
      model: MODEL,
      tokenizerDir: QWEN3_DIR,
      log: () => {},
    });
    // The Qwen3 rendering of PROMPT: exact count from the real tokenizer (checked against HF in tokenizer.test.ts).
    const n = await local.countPromptTokens(PROMPT);
    assert.equal(local.tokenCountSource, 'local');
    assert.ok(n > 30 && n < 60, `local count ${n}`);
    const logs: string[] = [];
    const bare = await OpenAIEngine.connect({ baseUrl: server.baseUrl, model: MODEL, log: (l) => logs.push(l) });
    const est = await bare.countPromptTokens(PROMPT);
    assert.equal(bare.tokenCountSource, 'estimate');
    assert.ok(est >= n, 'the estimate errs on the high side');
    await bare.countPromptTokens(PROMPT);
    assert.equal(logs.filter((l) => l.includes('estimates')).length, 1, 'said once');
  } finally {
    await server.close();
  }
});

test('one failing request stops its siblings instead of waiting for them', async () => {
  const server = await startStandInOpenAIServer({
    chunkDelayMs: 5,
    answer: () => 'x'.repeat(4000),
    failWhen: (m) => m[1].content === 'bad',
  });
  try {
    const engine = await OpenAIEngine.connect({ baseUrl: server.baseUrl, model: MODEL });
    const good: ChatMessage[] = [PROMPT[0], { role: 'user', content: 'good' }];
    const bad: ChatMessage[] = [PROMPT[0], { role: 'user', content: 'bad' }];
    const started = Date.now();
    await assert.rejects(engine.generate([good, bad], SAMPLING), /failed during generation: CUDA out of memory/);
    assert.ok(Date.now() - started < 2500, 'did not wait for the 5 s answer');
    for (let i = 0; i < 50 && server.abortedStreams === 0; i++) await new Promise((r) => setTimeout(r, 10));
    assert.equal(server.abortedStreams, 1, 'the sibling request was closed');
  } finally {
    await server.close();
  }
});
