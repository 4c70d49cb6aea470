// The OpenAI engine against the stand-in server answering as each named server's source says
// (test/model/standInOpenAIServer.ts notes the source beside each answer): llama.cpp's HTTP 500 for n > 1 (before
// PR #17775) and its slots since (n up to /props total_slots, HTTP 400 past them),
// Ollama's silent context overflow, vLLM's and SGLang's reasoning fields and usage chunk, and server-side chat
// templates that differ from the checkpoint's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OpenAIEngine } from '../../backend/model/openai/engine';
import type { ChatMessage } from '../../backend/protocol';
import type { SamplingOptions } from '../../backend/model/engine';
import { loadTokenizer } from '../../backend/model/tokenizer';
import { renderInPlace } from '../../backend/model/chatTemplate';
import { chatmlRender, startStandInOpenAIServer, type StandInOptions } from './standInOpenAIServer';
import { QWEN3_DIR } from './qwen3Fixture';

/** The checkpoint's template rendered on this thread: the stand-in server renders synchronously, as llama.cpp does in its own process. */
function inPlaceRenderer(tok: { chatTemplate?: string; templateTokens: Record<string, string> }) {
  return (messages: ChatMessage[]) =>
    renderInPlace({
      id: 0,
      source: tok.chatTemplate!,
      tokens: tok.templateTokens,
      messages,
      addGenerationPrompt: true,
      maxChars: Infinity,
    });
}

const MODEL = 'AI-MO/Kimina-Prover-RL-0.6B';
const PROMPT: ChatMessage[] = [
  { role: 'system', content: 'You are an expert in mathematics and proving theorems in Lean 4.' },
  { role: 'user', content: 'Think about and solve the following problems step by step in Lean 4.\n\n# Problem:\nx\n' },
];
const answerOf = (k: number): string =>
  `<think>\nSample ${k} thinks about ℝ and h₀.\n</think>\n\nSummary ${k}.\n\n\`\`\`lean4\ntheorem t : True := by\n  trivial\n\`\`\``;
/** A fix turn: the first answer (think block included) and the error feedback. */
const FIX: ChatMessage[] = [
  ...PROMPT,
  { role: 'assistant', content: answerOf(0) },
  { role: 'user', content: 'The proof failed.\n\n# Error 1:\nunknown identifier' },
];
const SAMPLING: SamplingOptions = { maxTokens: 1000, temperature: 1, topP: 0.95 };

async function withServer(
  o: Partial<StandInOptions>,
  body: (
    engine: OpenAIEngine,
    server: Awaited<ReturnType<typeof startStandInOpenAIServer>>,
    logs: string[],
  ) => Promise<void>,
  engineOptions: Partial<Parameters<typeof OpenAIEngine.connect>[0]> = {},
): Promise<void> {
  const server = await startStandInOpenAIServer({ answer: (_m, k) => answerOf(k), ...o });
  const logs: string[] = [];
  try {
    const engine = await OpenAIEngine.connect({
      baseUrl: server.baseUrl,
      model: MODEL,
      log: (l) => logs.push(l),
      ...engineOptions,
    });
    await body(engine, server, logs);
  } finally {
    await server.close();
  }
}

const chats = (server: { requests: Array<{ path: string; body: Record<string, unknown> }> }) =>
  server.requests.filter((r) => r.path.endsWith('/completions'));

test('llama.cpp: HTTP 500 for n > 1 switches to one request per sample, once, and is remembered', async () => {
  await withServer(
    { server: 'llama.cpp', answer: (_m, _k, seed) => `<think>\nseed ${seed}\n</think>\nseed=${seed}` },
    async (engine, server, logs) => {
      const gens = await engine.generate([PROMPT, PROMPT, PROMPT, PROMPT], { ...SAMPLING, seed: 10 });
      assert.deepEqual(gens.map((g) => g.text.split('\n').at(-1)).sort(), ['seed=10', 'seed=11', 'seed=12', 'seed=13']);
      assert.ok(gens.every((g) => g.finishReason === 'stop' && g.cut === undefined));
      assert.ok(
        gens.every((g) => g.text.startsWith('<think>\nseed ')),
        'reasoning_content folded back',
      );
      const first = chats(server);
      assert.equal(first.length, 5, 'one refused request with n=4, then four with n=1');
      assert.equal(first[0].body.n, 4);
      assert.ok(first.slice(1).every((r) => r.body.n === 1));
      assert.equal(logs.filter((l) => l.includes('refuses n > 1')).length, 1);
      assert.match(logs[0], /HTTP 500: Only one completion choice is allowed/);
      const before = server.requests.length;
      await engine.generate([PROMPT, PROMPT], SAMPLING);
      const again = chats({ requests: server.requests.slice(before) });
      assert.equal(again.length, 2, 'no second refusal: n=1 from the start');
      assert.ok(again.every((r) => r.body.n === 1));
      assert.equal(logs.filter((l) => l.includes('n > 1') || l.includes('ignores n')).length, 1, 'said once');
    },
  );
});

test('llama.cpp since PR #17775 (4 slots): n = 8 goes as two requests of n = 4, read from /props total_slots', async () => {
  await withServer(
    { server: 'llama.cpp', slots: 4, answer: (_m, k, seed) => `<think>\ns\n</think>\nseed=${seed} k=${k}` },
    async (engine, server, logs) => {
      const gens = await engine.generate(Array(8).fill(PROMPT), { ...SAMPLING, seed: 10 });
      assert.equal(gens.length, 8);
      assert.ok(gens.every((g) => g.finishReason === 'stop'));
      const asked = chats(server);
      assert.deepEqual(
        asked.map((r) => [r.body.n, r.body.seed]),
        [
          [4, 10],
          [4, 14],
        ],
        'two requests at the slot count, distinct seeds',
      );
      assert.equal(server.requests.filter((r) => r.path === '/props').length, 1);
      assert.equal(new Set(gens.map((g) => g.text)).size, 8, 'eight distinct samples');
      assert.deepEqual(logs, [], 'nothing refused, nothing to say');
      await engine.generate(Array(3).fill(PROMPT), SAMPLING);
      assert.equal(chats(server).at(-1)!.body.n, 3, 'fewer than the slots: one request');
      assert.equal(server.requests.filter((r) => r.path === '/props').length, 1, '/props read once');
    },
  );
});

test('llama.cpp since PR #17775, slots fewer than /props says: the n_cmpl refusal (HTTP 400) falls back once, remembered', async () => {
  // A server whose /props overstates its slots (a router's child started with a smaller -np) refuses n = 4.
  await withServer(
    { server: 'llama.cpp', slots: 2, propsSlots: 4, answer: (_m, _k, seed) => `seed=${seed}` },
    async (engine, server, logs) => {
      const gens = await engine.generate(Array(4).fill(PROMPT), { ...SAMPLING, seed: 1 });
      assert.deepEqual(gens.map((g) => g.text).sort(), ['seed=1', 'seed=2', 'seed=3', 'seed=4']);
      assert.deepEqual(
        chats(server).map((r) => r.body.n),
        [4, 1, 1, 1, 1],
      );
      assert.equal(logs.length, 1);
      assert.match(
        logs[0],
        /refuses n > 1 \(HTTP 400: n_cmpl cannot be greater than the number of slots, please increase -np\); sending one request per sample from now on/,
      );
      const before = server.requests.length;
      await engine.generate([PROMPT, PROMPT], SAMPLING);
      assert.ok(
        chats({ requests: server.requests.slice(before) }).every((r) => r.body.n === 1),
        'remembered',
      );
    },
  );
});

test("llama.cpp: KIMINA_OPENAI_N=native gets the server's refusal as a clear error", async () => {
  await withServer(
    { server: 'llama.cpp' },
    async (engine) => {
      await assert.rejects(
        engine.generate([PROMPT, PROMPT], SAMPLING),
        /refuses n > 1 \(HTTP 500: Only one completion choice is allowed\); set KIMINA_OPENAI_N=auto or parallel/,
      );
    },
    { nMode: 'native' },
  );
});

test("llama.cpp: an answer stopped by the server's context is reported as cut", async () => {
  // 4 characters a token: the chatml prompt is ~45 tokens, so a 60-token context leaves ~15 for the answer.
  await withServer({ server: 'llama.cpp', numCtx: 60 }, async (engine) => {
    const [gen] = await engine.generate([PROMPT], SAMPLING);
    assert.equal(gen.finishReason, 'length');
    assert.match(gen.cut ?? '', /finish_reason "length" after \d+ tokens \(max_tokens 1000\)/);
    assert.ok(gen.text.length < answerOf(0).length);
  });
});

test('Ollama: an answer that overflows num_ctx (Ollama shifts and says "stop") is reported as cut', async () => {
  const long = `<think>\n${'step '.repeat(200)}\n</think>\nend`;
  await withServer({ server: 'ollama', numCtx: 128, answer: () => long }, async (engine, server, logs) => {
    assert.equal(engine.maxContext, undefined, "Ollama's /v1/models has no context length");
    const [gen] = await engine.generate([PROMPT], SAMPLING);
    assert.equal(gen.text, long, 'the whole answer came, past the context');
    assert.equal(gen.finishReason, 'length');
    assert.match(gen.cut ?? '', /reached the server's context of 128 tokens \(Ollama \/api\/ps\)/);
    assert.ok(server.requests.some((r) => r.path === '/api/ps'));
    const said = logs.find((l) => l.includes('OLLAMA_CONTEXT_LENGTH='));
    assert.ok(said, 'says exactly what to set');
    assert.match(said, /context of 128 tokens .* OLLAMA_CONTEXT_LENGTH=\d+ ollama serve.*PARAMETER num_ctx \d+/);
    const chat = chats(server)[0].body;
    assert.deepEqual(chat.stream_options, { include_usage: true }, 'usage asked for');
  });
  // An untagged name is Ollama's :latest (it lists tagged names in /v1/models and /api/ps).
  await withServer(
    { server: 'ollama', numCtx: 128, models: [{ id: 'kimina:latest' }], answer: () => long },
    async (engine) => {
      assert.equal(engine.model, 'kimina');
      const [gen] = await engine.generate([PROMPT], SAMPLING);
      assert.match(gen.cut ?? '', /context of 128 tokens/);
    },
    { model: 'kimina' },
  );
  // Within its context the same server's answers pass as whole ones.
  await withServer({ server: 'ollama', numCtx: 4096 }, async (engine) => {
    const gens = await engine.generate([PROMPT, PROMPT], SAMPLING);
    assert.deepEqual(
      gens.map((g) => [g.text, g.finishReason, g.cut]),
      [
        [answerOf(0), 'stop', undefined],
        [answerOf(0), 'stop', undefined],
      ],
      'one choice per request (n ignored), reasoning folded back, not cut',
    );
  });
});

test('vLLM: reasoning and reasoning_content carry the same text once; n honoured; max_tokens fitted to max_model_len', async () => {
  await withServer({ server: 'vllm' }, async (engine, server) => {
    assert.equal(engine.maxContext, 32768);
    const gens = await engine.generate([PROMPT, PROMPT], SAMPLING);
    assert.deepEqual(
      gens.map((g) => g.text),
      [answerOf(0), answerOf(1)],
    );
    assert.equal(chats(server).length, 1);
  });
  await withServer({ server: 'vllm', models: [{ id: MODEL, max_model_len: 60 }] }, async (engine, server) => {
    // vLLM refuses a prompt plus max_tokens beyond max_model_len before generating (HTTP 400, _validate_input).
    const refused = await fetch(`${server.baseUrl}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: MODEL, messages: PROMPT, max_tokens: SAMPLING.maxTokens }),
    });
    assert.equal(refused.status, 400);
    const prompt = Number(/your request has (\d+) input tokens/.exec(JSON.stringify(await refused.json()))?.[1]);
    assert.ok(prompt > 0 && prompt < 60);
    // The engine sends what the context leaves after the prompt (counted by /tokenize), and says the answer is cut.
    const [gen] = await engine.generate([PROMPT], SAMPLING);
    assert.equal(chats(server).at(-1)!.body.max_tokens, 60 - prompt);
    assert.equal(gen.finishReason, 'length');
    assert.equal(gen.tokens, 60 - prompt);
    assert.match(gen.cut ?? '', new RegExp(`max_tokens ${60 - prompt}, lowered from 1000 .*context 60`));
  });
});

test('SGLang: reasoning_content folded back, n honoured, usage counts the tokens', async () => {
  await withServer({ server: 'sglang' }, async (engine, server) => {
    const gens = await engine.generate([PROMPT, PROMPT, PROMPT], SAMPLING);
    assert.deepEqual(
      gens.map((g) => g.text),
      [0, 1, 2].map(answerOf),
    );
    assert.equal(chats(server).length, 1);
    const [one] = await engine.generate([PROMPT], { ...SAMPLING, maxTokens: 5 });
    assert.equal(one.tokens, 5);
    assert.equal(one.finishReason, 'length');
  });
  // SGLang refuses prompt + max_tokens beyond max_model_len too (tokenizer_manager.py _validate_one_request):
  // max_tokens is lowered to what the context leaves (the prompt estimated here: no tokenize route, no folder).
  await withServer({ server: 'sglang', models: [{ id: MODEL, max_model_len: 75 }] }, async (engine, server) => {
    const [gen] = await engine.generate([PROMPT], SAMPLING);
    const sent = chats(server).at(-1)!.body.max_tokens as number;
    assert.ok(sent > 0 && sent < 75, `max_tokens ${sent}`);
    assert.ok(gen.tokens <= sent);
    assert.equal(gen.finishReason, 'length');
  });
});

test("server-side templates: llama.cpp's built-in chatml differs on the fix turn -> the checkpoint's rendering goes to /v1/completions", async () => {
  const qwen = inPlaceRenderer(await loadTokenizer(QWEN3_DIR));
  // With the checkpoint's own template (llama-server --jinja on a GGUF carrying it) nothing changes.
  await withServer(
    { server: 'llama.cpp', serverTemplate: (m) => qwen(m as ChatMessage[]) },
    async (engine, server, logs) => {
      await engine.generate([PROMPT], SAMPLING);
      await engine.generate([FIX], SAMPLING);
      assert.equal(engine.promptRoute, 'chat');
      assert.deepEqual(engine.templateCheck, { renderer: 'llama.cpp', same: true, detail: undefined });
      assert.equal(server.requests.filter((r) => r.path === '/apply-template').length, 2, 'first and fix turn');
      assert.ok(!logs.some((l) => l.includes('differently')));
    },
    { tokenizerDir: QWEN3_DIR },
  );
  // llama.cpp's built-in chatml keeps the first answer's think block; Qwen3's template drops it.
  await withServer(
    { server: 'llama.cpp' },
    async (engine, server, logs) => {
      await engine.generate([PROMPT], SAMPLING);
      assert.equal(engine.promptRoute, 'chat', 'the first turn renders the same in chatml');
      const [fixed] = await engine.generate([FIX, FIX], SAMPLING);
      assert.equal(fixed.text, answerOf(0));
      assert.equal(engine.promptRoute, 'completions');
      assert.equal(engine.templateCheck?.renderer, 'llama.cpp');
      assert.equal(engine.templateCheck?.same, false);
      const said = logs.find((l) => l.includes('differently'));
      assert.match(said ?? '', /renders a fix-turn conversation differently from the checkpoint's \(first difference/);
      const raw = server.requests.filter((r) => r.path === '/v1/completions');
      assert.equal(raw.length, 3, 'n=2 refused once, then one request per sample');
      assert.equal(raw[1].body.prompt, qwen(FIX), "the checkpoint's rendering, verbatim");
      assert.notEqual(raw[1].body.prompt, chatmlRender(FIX));
      assert.ok(!('messages' in raw[1].body));
      const tokenizer = await loadTokenizer(QWEN3_DIR);
      assert.equal(
        await engine.countPromptTokens(FIX),
        tokenizer.encode(qwen(FIX)).length,
        "prompt lengths now counted on the checkpoint's rendering",
      );
    },
    { tokenizerDir: QWEN3_DIR },
  );
});

test("server-side templates: Ollama's differing Go template is reported; prompts then go raw to /api/generate", async () => {
  const qwen = inPlaceRenderer(await loadTokenizer(QWEN3_DIR));
  await withServer(
    { server: 'ollama', numCtx: 8192 },
    async (engine, server, logs) => {
      const first = await engine.generate([FIX, FIX], SAMPLING);
      assert.deepEqual(
        { renderer: engine.templateCheck?.renderer, same: engine.templateCheck?.same },
        { renderer: 'ollama', same: false },
      );
      assert.equal(engine.promptRoute, 'ollama-generate');
      const said = logs.find((l) => l.includes('differently'));
      assert.match(said ?? '', /Ollama's Go template.*api\/generate with raw: true/);
      const render = server.requests.find((r) => r.body._debug_render_only === true);
      assert.ok(render, 'asked Ollama to render only');
      assert.equal(render.body.max_tokens, 1);
      assert.ok(server.requests.some((r) => r.path === '/api/version'));
      const generate = server.requests.filter((r) => r.path === '/api/generate');
      assert.equal(generate.length, 2, 'one request per sample');
      assert.equal(generate[0].body.raw, true);
      assert.equal(generate[0].body.prompt, qwen(FIX), "the checkpoint's rendering, verbatim");
      assert.deepEqual(generate[0].body.options, { temperature: 1, top_p: 0.95, top_k: 0, num_predict: 1000 });
      assert.ok(!chats(server).some((r) => r.path === '/v1/chat/completions' && !r.body._debug_render_only));
      assert.deepEqual(
        first.map((g) => [g.text, g.finishReason]),
        [
          [answerOf(0), 'stop'],
          [answerOf(0), 'stop'],
        ],
        'thinking and response folded back into the whole answer',
      );
    },
    { tokenizerDir: QWEN3_DIR },
  );
  // The native route's answers are judged like the others: past /api/ps's context they are cut.
  await withServer(
    { server: 'ollama', numCtx: 100 },
    async (engine) => {
      await engine.generate([FIX], { ...SAMPLING, maxTokens: 1 });
      assert.equal(engine.promptRoute, 'ollama-generate');
      const [gen] = await engine.generate([FIX], SAMPLING);
      assert.equal(gen.finishReason, 'length');
      assert.match(gen.cut ?? '', /context of 100 tokens/);
      const [short] = await engine.generate([FIX], { ...SAMPLING, maxTokens: 3 });
      assert.equal(short.finishReason, 'length');
      assert.match(short.cut ?? '', /finish_reason "length" after 3 tokens/);
    },
    { tokenizerDir: QWEN3_DIR },
  );
});

test("vLLM: /tokenize ids of its rendering are compared with the checkpoint rendering's ids", async () => {
  const tokenizer = await loadTokenizer(QWEN3_DIR);
  const qwen = inPlaceRenderer(tokenizer);
  const ids = (t: string) => tokenizer.encode(t);
  await withServer(
    { server: 'vllm', tokenizeIds: ids, serverTemplate: (m) => qwen(m as ChatMessage[]) },
    async (engine) => {
      await engine.generate([FIX], SAMPLING);
      assert.deepEqual(engine.templateCheck, { renderer: 'vllm', same: true, detail: undefined });
      assert.equal(engine.promptRoute, 'chat');
    },
    { tokenizerDir: QWEN3_DIR },
  );
  // vllm serve --chat-template chatml.jinja: a different rendering of the fix turn.
  await withServer(
    { server: 'vllm', tokenizeIds: ids },
    async (engine, server) => {
      const gens = await engine.generate([FIX, FIX], SAMPLING);
      assert.equal(engine.templateCheck?.same, false);
      assert.match(engine.templateCheck?.detail ?? '', /first different token at position \d+/);
      assert.equal(engine.promptRoute, 'completions');
      const raw = server.requests.filter((r) => r.path === '/v1/completions');
      assert.equal(raw.length, 1, 'vLLM takes n on /v1/completions too');
      assert.equal(raw[0].body.n, 2);
      assert.equal(raw[0].body.prompt, qwen(FIX));
      assert.deepEqual(
        gens.map((g) => g.text),
        [answerOf(0), answerOf(1)],
        'raw completions carry the think tags in the text',
      );
    },
    { tokenizerDir: QWEN3_DIR },
  );
});

test('SGLang 0.5.23: its /tokenize with messages is recognised as SGLang (owned_by "sglang"), compared and named so', async () => {
  const tokenizer = await loadTokenizer(QWEN3_DIR);
  const qwen = inPlaceRenderer(tokenizer);
  const ids = (t: string) => tokenizer.encode(t);
  await withServer(
    { server: 'sglang', tokenizeIds: ids, serverTemplate: (m) => qwen(m as ChatMessage[]) },
    async (engine) => {
      await engine.generate([FIX], SAMPLING);
      assert.deepEqual(engine.templateCheck, { renderer: 'sglang', same: true, detail: undefined });
      assert.equal(engine.tokenCountSource, 'server', "prompts counted by SGLang's own tokenizer");
      assert.equal(await engine.countPromptTokens(FIX), ids(qwen(FIX)).length);
    },
    { tokenizerDir: QWEN3_DIR },
  );
  // sglang.launch_server --chat-template chatml: the fix turn renders differently; the log names SGLang.
  await withServer(
    { server: 'sglang', tokenizeIds: ids },
    async (engine, server, logs) => {
      await engine.generate([FIX], SAMPLING);
      assert.equal(engine.templateCheck?.renderer, 'sglang');
      assert.equal(engine.templateCheck?.same, false);
      const said = logs.find((l) => l.includes('differently')) ?? '';
      assert.match(said, /chat template \(SGLang\) renders a fix-turn conversation differently/);
      assert.doesNotMatch(said, /vLLM/);
      assert.equal(engine.promptRoute, 'completions');
      assert.equal(server.requests.filter((r) => r.path === '/v1/completions').length, 1);
    },
    { tokenizerDir: QWEN3_DIR },
  );
});

test('a server that shows no rendering is said once', async () => {
  await withServer(
    { server: 'sglang', tokenize: 'sglang-prompt' },
    async (engine, _server, logs) => {
      await engine.generate([PROMPT], SAMPLING);
      await engine.generate([FIX], SAMPLING);
      assert.equal(logs.filter((l) => l.includes('shows no rendering')).length, 1);
      assert.equal(engine.templateCheck, undefined);
    },
    { tokenizerDir: QWEN3_DIR },
  );
});

test('a model folder that cannot lend its template never stops a generation', async () => {
  const empty = mkdtempSync(join(tmpdir(), 'kimina-notok-'));
  await withServer(
    { server: 'llama.cpp' },
    async (engine, _server, logs) => {
      const [gen] = await engine.generate([FIX], SAMPLING);
      assert.equal(gen.text, answerOf(0));
      await engine.generate([PROMPT], SAMPLING);
      assert.equal(logs.filter((l) => l.includes("cannot compare the server's chat template")).length, 1);
      assert.match(logs.find((l) => l.includes('cannot compare')) ?? '', /no tokenizer\.json in/);
      assert.equal(engine.promptRoute, 'chat');
    },
    { tokenizerDir: empty },
  );
});

// Unauthorized and unknown-model answers, each as the server's source writes it (standInOpenAIServer.ts notes
// where): the user is told which key or which model is the problem.
const KEY = 'sk-right';
const connect = (server: { baseUrl: string }, o: Partial<Parameters<typeof OpenAIEngine.connect>[0]> = {}) =>
  OpenAIEngine.connect({ baseUrl: server.baseUrl, model: MODEL, log: () => {}, ...o });

test('vLLM and SGLang: a missing or wrong API key is refused at the model list (HTTP 401 "Unauthorized")', async () => {
  for (const kind of ['vllm', 'sglang'] as const) {
    const server = await startStandInOpenAIServer({ server: kind, apiKey: KEY, answer: (_m, k) => answerOf(k) });
    try {
      await assert.rejects(
        connect(server, { apiKey: 'sk-wrong' }),
        /refused the request \(HTTP 401: Unauthorized\): it refused the API key in KIMINA_OPENAI_API_KEY; set it to the key the server was started with/,
        kind,
      );
      await assert.rejects(
        connect(server),
        /\(HTTP 401: Unauthorized\): it wants an API key and none was sent; set KIMINA_OPENAI_API_KEY/,
        kind,
      );
      const engine = await connect(server, { apiKey: KEY });
      const [gen] = await engine.generate([PROMPT], SAMPLING);
      assert.equal(gen.text, answerOf(0), kind);
    } finally {
      await server.close();
    }
  }
});

test("llama.cpp: /v1/models is public, so a wrong key is refused at generation (HTTP 401 'Invalid API Key')", async () => {
  const server = await startStandInOpenAIServer({ server: 'llama.cpp', apiKey: KEY, answer: (_m, k) => answerOf(k) });
  try {
    const engine = await connect(server, { apiKey: 'sk-wrong' });
    await assert.rejects(
      engine.generate([PROMPT], SAMPLING),
      /refused the request \(HTTP 401: Invalid API Key\): it refused the API key in KIMINA_OPENAI_API_KEY/,
    );
    const keyless = await connect(server);
    await assert.rejects(keyless.generate([PROMPT], SAMPLING), /\(HTTP 401: Invalid API Key\): it wants an API key/);
    const [gen] = await (await connect(server, { apiKey: KEY })).generate([PROMPT], SAMPLING);
    assert.equal(gen.text, answerOf(0));
  } finally {
    await server.close();
  }
});

test('Ollama checks no API key: any key generates', async () => {
  const server = await startStandInOpenAIServer({ server: 'ollama', apiKey: KEY, answer: (_m, k) => answerOf(k) });
  try {
    const [gen] = await (await connect(server, { apiKey: 'sk-wrong' })).generate([PROMPT], SAMPLING);
    assert.equal(gen.text, answerOf(0));
  } finally {
    await server.close();
  }
});

test('every server: a model the list does not name is refused at connect, naming it and the served ones', async () => {
  for (const o of [
    { server: 'vllm' },
    { server: 'sglang' },
    { server: 'llama.cpp' },
    { server: 'llama.cpp', router: true },
    { server: 'ollama' },
  ] as const) {
    const server = await startStandInOpenAIServer({ ...o, answer: (_m, k) => answerOf(k) });
    try {
      await assert.rejects(
        connect(server, { model: 'nope/model' }),
        /has no model 'nope\/model'; it serves: AI-MO\/Kimina-Prover-RL-0\.6B(:latest)? \(set KIMINA_MODEL to one of them\)/,
        JSON.stringify(o),
      );
    } finally {
      await server.close();
    }
  }
});

test("a model gone after connect: each server's own refusal is told as a missing model", async () => {
  const two = (kind: string) => [
    { id: kind === 'ollama' ? `${MODEL}:latest` : MODEL },
    { id: kind === 'ollama' ? 'other:latest' : 'other' },
  ];
  const cases = [
    // vLLM _check_model: 404 "The model `…` does not exist."
    { o: { server: 'vllm' as const }, said: /HTTP 404: The model `AI-MO\/Kimina-Prover-RL-0\.6B` does not exist\./ },
    // Ollama ChatHandler through the /v1 writer: 404 "model '…' not found"
    { o: { server: 'ollama' as const }, said: /HTTP 404: model 'AI-MO\/Kimina-Prover-RL-0\.6B' not found/ },
    // a llama.cpp router: 400 "model not found"
    { o: { server: 'llama.cpp' as const, router: true }, said: /HTTP 400: model not found/ },
  ];
  for (const { o, said } of cases) {
    const server = await startStandInOpenAIServer({ ...o, models: two(o.server), answer: (_m, k) => answerOf(k) });
    try {
      const engine = await connect(server);
      server.removeModel(MODEL);
      const err = await engine.generate([PROMPT], SAMPLING).then(
        () => assert.fail(`${o.server}: generated for a removed model`),
        (e: Error) => e,
      );
      assert.match(err.message, /has no model 'AI-MO\/Kimina-Prover-RL-0\.6B'/, o.server);
      assert.match(err.message, said, o.server);
      assert.match(err.message, /set KIMINA_MODEL to a model it serves/, o.server);
    } finally {
      await server.close();
    }
  }
  // SGLang and a single-model llama-server answer whatever the name: the served model generates.
  for (const kind of ['sglang', 'llama.cpp'] as const) {
    const server = await startStandInOpenAIServer({ server: kind, models: two(kind), answer: (_m, k) => answerOf(k) });
    try {
      const engine = await connect(server);
      server.removeModel(MODEL);
      const [gen] = await engine.generate([PROMPT], SAMPLING);
      assert.equal(gen.text, answerOf(0), kind);
    } finally {
      await server.close();
    }
  }
});
