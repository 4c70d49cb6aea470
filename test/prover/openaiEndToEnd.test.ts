// The prove loop over the OpenAI-compatible engine against the model team's stand-in server (a TEST DOUBLE
// that streams scripted answers), with the think block split into a reasoning field as vLLM's qwen3 parser
// and llama.cpp do: the engine folds it back, and the answer must still pass the recipe's format checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OpenAIEngine } from '../../backend/model/openai/engine';
import { prove } from '../../backend/prover/prove';
import { startStandInOpenAIServer } from '../model/standInOpenAIServer';
import { StandInVerifier, leanError, valid } from './doubles';
import { TYPE_MISMATCH, WELL_FORMED } from '../../backend/demo/kiminaExamples';

const FILE =
  'import Mathlib\n\n/-- Solve for x. -/\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  sorry\n';
const BAD = WELL_FORMED.replaceAll('  linarith\n```', '  exact h₁\n```');
const judge = (code: string) =>
  code.endsWith('  linarith')
    ? { verdict: valid() }
    : {
        verdict: leanError([
          { severity: 'error', pos: { line: 5, column: 2 }, endPos: { line: 5, column: 10 }, data: TYPE_MISMATCH },
        ]),
      };

for (const variant of [
  {
    name: 'vLLM-style reasoning field, n honoured',
    reasoningField: 'reasoning' as const,
    honorsN: true,
    trimReasoning: false,
  },
  {
    name: 'llama.cpp-style reasoning_content, trimmed, one choice per request',
    reasoningField: 'reasoning_content' as const,
    honorsN: false,
    trimReasoning: true,
  },
  {
    name: 'no reasoning parser (think tags in the content)',
    reasoningField: undefined,
    honorsN: true,
    trimReasoning: false,
  },
]) {
  test(`OpenAI engine, ${variant.name}: format ok, fix turn, verified`, { timeout: 60_000 }, async () => {
    const server = await startStandInOpenAIServer({
      answer: (messages) => (messages.filter((m) => m.role === 'user').length === 1 ? BAD : WELL_FORMED),
      reasoningField: variant.reasoningField,
      trimReasoning: variant.trimReasoning,
      honorsN: variant.honorsN,
      chunkChars: 9,
    });
    const engine = await OpenAIEngine.connect({ baseUrl: server.baseUrl, log: () => {} });
    try {
      const result = await prove({ code: FILE, samples: 2 }, { engine, verifier: new StandInVerifier(judge) });
      assert.equal(result.status, 'proved');
      // Answers decoded to the end pass the format checks once folded; one cut short by the winner may not.
      const finished = result.attempts.filter((a) => a.finishReason !== 'cancelled');
      assert.ok(finished.length >= 2);
      for (const a of finished) {
        assert.equal(a.format.error, 'NONE', `sample ${a.sample} turn ${a.turn}: ${a.response.slice(0, 80)}`);
        assert.ok(a.think.includes('The hypothesis is linear in x'));
      }
      assert.equal(result.attempts.find((a) => a.verdict?.status === 'valid')?.format.error, 'NONE');
      assert.deepEqual([...new Set(result.attempts.map((a) => a.turn))], [1, 2]);
      const fixRequest = server.requests.find(
        (r) => r.path.endsWith('/chat/completions') && JSON.stringify(r.body).includes('# Error 1:'),
      );
      assert.ok(fixRequest, 'the fix turn reached the server');
    } finally {
      await engine.close();
      await server.close();
    }
  });
}

test(
  'pass@4 through a stand-in answering as llama-server does (HTTP 500 for n > 1): proved',
  { timeout: 60_000 },
  async () => {
    let served = 0;
    // One sample in four writes the proof that Lean accepts; llama.cpp's server answers one choice per request.
    const server = await startStandInOpenAIServer({
      server: 'llama.cpp',
      answer: () => (served++ === 3 ? WELL_FORMED : BAD),
      chunkChars: 9,
    });
    const logs: string[] = [];
    const engine = await OpenAIEngine.connect({ baseUrl: server.baseUrl, log: (l) => logs.push(l) });
    try {
      const result = await prove(
        { code: FILE, samples: 4, fixTurns: 0 },
        { engine, verifier: new StandInVerifier(judge) },
      );
      assert.equal(result.status, 'proved');
      assert.equal(result.attempts.filter((a) => a.turn === 1).length, 4);
      assert.ok(result.attempts.every((a) => a.turn === 1 && a.format.error === 'NONE'));
      const chat = server.requests.filter((r) => r.path === '/v1/chat/completions');
      assert.deepEqual(
        chat.map((r) => r.body.n),
        [4, 1, 1, 1, 1],
        'refused once with n=4, then one request per sample',
      );
      assert.ok(logs.some((l) => /refuses n > 1 \(HTTP 500: Only one completion choice is allowed\)/.test(l)));
    } finally {
      await engine.close();
      await server.close();
    }
  },
);

for (const build of [
  { name: 'since PR #17775, 4 slots (-np 4)', slots: 4 as number | undefined, requests: [4, 4] },
  { name: 'before PR #17775 (one choice per request)', slots: undefined, requests: [4, 4, 1, 1, 1, 1, 1, 1, 1, 1] },
]) {
  test(
    `pass@8 through a stand-in llama-server ${build.name}: all 8 samples generated and judged`,
    { timeout: 60_000 },
    async () => {
      // Every sample fails Lean, so none is cancelled by a winner: each of the 8 must come back and be judged.
      const server = await startStandInOpenAIServer({
        server: 'llama.cpp',
        slots: build.slots,
        answer: () => BAD,
        chunkChars: 9,
      });
      const engine = await OpenAIEngine.connect({ baseUrl: server.baseUrl, log: () => {} });
      const verifier = new StandInVerifier(judge);
      try {
        const result = await prove({ code: FILE, samples: 8, fixTurns: 0 }, { engine, verifier });
        assert.notEqual(result.status, 'proved');
        const attempts = result.attempts.filter((a) => a.turn === 1);
        assert.equal(attempts.length, 8);
        assert.ok(attempts.every((a) => a.finishReason === 'stop' && a.verdict?.status === 'lean_error'));
        const chat = server.requests.filter((r) => r.path === '/v1/chat/completions');
        // Two requests of n = 4 (the slots /props says); the older build refuses both, then one request per sample.
        assert.deepEqual(
          chat.map((r) => r.body.n),
          build.requests,
        );
      } finally {
        await engine.close();
        await server.close();
      }
    },
  );
}

test(
  'an Ollama-shaped answer that overflows the context is reported as cut in the attempt',
  { timeout: 60_000 },
  async () => {
    // Ollama shifts its context and ends with "stop"; only its usage and /api/ps show the answer ran past it.
    const server = await startStandInOpenAIServer({
      server: 'ollama',
      numCtx: 128,
      answer: () => BAD,
      chunkChars: 4,
    });
    const engine = await OpenAIEngine.connect({ baseUrl: server.baseUrl, log: () => {} });
    try {
      const result = await prove(
        { code: FILE, samples: 1, fixTurns: 0 },
        { engine, verifier: new StandInVerifier(judge) },
      );
      const [a] = result.attempts;
      assert.equal(a.finishReason, 'length');
      assert.match(a.cut ?? '', /reached the server's context of 128 tokens \(Ollama \/api\/ps\)/);
    } finally {
      await engine.close();
      await server.close();
    }
  },
);
