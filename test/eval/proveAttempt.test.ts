// The real attempter over the real prove loop, with an in-test engine and verifier (TEST DOUBLES).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage, Verdict } from '../../backend/protocol';
import type { Engine, Generation, SamplingOptions } from '../../backend/model/engine';
import type { LeanVerifier } from '../../backend/lean/types';
import { proveAttempter } from '../../backend/eval/proveAttempt';
import { loadBenchmark } from '../../backend/eval/benchmark';
import { minif2fDir } from './helpers';
import { scriptedAnswer } from './scriptedServerAnswers';

/** TEST DOUBLE engine: scripted answers (scriptedServerAnswers), records seeds, batch sizes and concurrency. */
class ScriptedEngine implements Engine {
  readonly name = 'scripted-test-double';
  readonly model = 'scripted';
  seeds: (number | undefined)[] = [];
  batchSizes: number[] = [];
  conversationsInFlight = 0;
  maxConversationsInFlight = 0;
  async generate(conversations: ChatMessage[][], options: SamplingOptions): Promise<Generation[]> {
    this.conversationsInFlight += conversations.length;
    this.maxConversationsInFlight = Math.max(this.maxConversationsInFlight, this.conversationsInFlight);
    this.batchSizes.push(conversations.length);
    this.seeds.push(options.seed);
    await new Promise((r) => setTimeout(r, 3));
    this.conversationsInFlight -= conversations.length;
    if (options.signal?.aborted)
      return conversations.map(() => ({ text: '', tokens: 0, finishReason: 'cancelled' as const }));
    return conversations.map((c) => {
      const text = scriptedAnswer(c, 0, options.seed);
      return { text, tokens: Math.ceil(text.length / 4), finishReason: 'stop' as const };
    });
  }
  async countPromptTokens(): Promise<number> {
    return 100;
  }
  async close(): Promise<void> {}
}

/** TEST DOUBLE verifier: valid unless the code uses a bogus_ name. */
const verifier: LeanVerifier = {
  async check(code: string) {
    const bad = code.includes('bogus_');
    const verdict: Verdict = {
      status: bad ? 'lean_error' : 'valid',
      reason: bad ? 'unknown identifier' : 'ok',
      time: 0.25,
      sorries: [],
      messages: bad
        ? [
            {
              pos: { line: 8, column: 2 },
              endPos: { line: 8, column: 20 },
              severity: 'error',
              data: "unknown identifier 'bogus_lemma'",
            },
          ]
        : [],
    };
    return { verdict };
  },
  async close() {},
};

const problems = loadBenchmark(minif2fDir(), { split: 'test', limit: 8 }).problems;
const byKind = (id: string) => problems.find((p) => p.id === id)!;

test("a problem's samples are one exhaustive prove call, decoded together; failed samples get their fix turn", async () => {
  const engine = new ScriptedEngine();
  const attempt = proveAttempter({
    deps: { engine, verifier },
    temperature: 1,
    topP: 0.95,
    maxTokens: 4096,
    parallel: 4,
    seed: 7,
  });
  const fixable = await attempt(
    byKind('aime_1983_p1'),
    { samples: [0, 1, 2, 3], fixTurns: 1 },
    new AbortController().signal,
  );
  assert.deepEqual(
    engine.batchSizes,
    [4, 4],
    'turn 1 for the four samples together, then their four fix turns together',
  );
  assert.deepEqual(fixable.map((o) => `${o.sample}/${o.turn}/${o.status}`).sort(), [
    '0/1/lean_error',
    '0/2/valid',
    '1/1/lean_error',
    '1/2/valid',
    '2/1/lean_error',
    '2/2/valid',
    '3/1/lean_error',
    '3/2/valid',
  ]);
  assert.equal(
    new Set(engine.seeds).size,
    1,
    'one seed per call (the engine draws each row from it); the fix turn reuses it',
  );
  const callSeed = engine.seeds[0];

  // The same call again gets the same seed, so a rerun is drawn the same way; a resumed subset has its own.
  engine.seeds = [];
  await attempt(byKind('aime_1983_p1'), { samples: [0, 1, 2, 3], fixTurns: 0 }, new AbortController().signal);
  await attempt(byKind('aime_1983_p1'), { samples: [2], fixTurns: 0 }, new AbortController().signal);
  assert.equal(engine.seeds[0], callSeed);
  assert.notEqual(engine.seeds[1], callSeed);

  // A sample verified at turn 1 cancels nothing: the others are still judged and fixed (sample ids kept).
  const easy = await attempt(byKind('aime_1983_p2'), { samples: [5, 9], fixTurns: 1 }, new AbortController().signal);
  assert.deepEqual(
    easy.map((o) => [o.sample, o.turn, o.valid, o.formatError]),
    [
      [5, 1, true, 'NONE'],
      [9, 1, true, 'NONE'],
    ],
  );
  assert.equal(easy[0].leanSeconds, 0.25);
  assert.ok(easy[0].tokens > 0 && easy[0].chars > easy[0].tokens);

  const hopeless = await attempt(byKind('aime_1983_p3'), { samples: [0], fixTurns: 1 }, new AbortController().signal);
  assert.deepEqual(
    hopeless.map((o) => [o.turn, o.status, o.formatError, o.code]),
    [[1, 'filtered', 'NO_VALID_LEAN4_CODE_BLOCK', null]],
  );
});

test('more samples than --parallel: calls of at most `parallel` samples, never more in flight over all problems', async () => {
  const engine = new ScriptedEngine();
  const attempt = proveAttempter({
    deps: { engine, verifier },
    temperature: 1,
    topP: 0.95,
    maxTokens: 4096,
    parallel: 3,
  });
  const signal = new AbortController().signal;
  const [a, b] = await Promise.all([
    attempt(byKind('aime_1983_p1'), { samples: [0, 1, 2, 3], fixTurns: 1 }, signal),
    attempt(byKind('aime_1983_p2'), { samples: [0, 1], fixTurns: 1 }, signal),
  ]);
  assert.ok(
    engine.batchSizes.every((n) => n <= 3),
    `batches ${engine.batchSizes}`,
  );
  assert.ok(engine.maxConversationsInFlight <= 3, `${engine.maxConversationsInFlight} conversations decoded at once`);
  assert.deepEqual(a.map((o) => `${o.sample}/${o.turn}/${o.status}`).sort(), [
    '0/1/lean_error',
    '0/2/valid',
    '1/1/lean_error',
    '1/2/valid',
    '2/1/lean_error',
    '2/2/valid',
    '3/1/lean_error',
    '3/2/valid',
  ]);
  assert.deepEqual(
    b.map((o) => `${o.sample}/${o.turn}/${o.valid}`),
    ['0/1/true', '1/1/true'],
  );
});

test('an aborted evaluation returns no half-finished samples', async () => {
  const engine = new ScriptedEngine();
  const attempt = proveAttempter({
    deps: { engine, verifier },
    temperature: 1,
    topP: 0.95,
    maxTokens: 4096,
    parallel: 1,
  });
  const ctl = new AbortController();
  const pending = attempt(byKind('aime_1983_p2'), { samples: [0, 1, 2, 3], fixTurns: 1 }, ctl.signal);
  setTimeout(() => ctl.abort(), 1);
  const out = await pending;
  assert.ok(out.length < 4, `got ${out.length} outcomes after the abort`);
  assert.ok(
    engine.seeds.every((s) => s === undefined),
    'no seed without --seed',
  );
});

test("goal states are asked of Lean only with --goals (the recipe's feedback had none); both verdicts are recorded", async () => {
  const asked: (string | null | undefined)[] = [];
  const recording: LeanVerifier = {
    check: async (code, options) => {
      asked.push(options?.infotree);
      return verifier.check(code, options);
    },
    close: async () => {},
  };
  const run = async (infotree: 'original' | null) => {
    asked.length = 0;
    const attempt = proveAttempter({
      deps: { engine: new ScriptedEngine(), verifier: recording, options: { infotree } },
      temperature: 1,
      topP: 0.95,
      maxTokens: 4096,
      parallel: 4,
    });
    return attempt(byKind('aime_1983_p1'), { samples: [0], fixTurns: 1 }, new AbortController().signal);
  };
  const off = await run(null); // what `kimina eval` passes without --goals
  assert.deepEqual(asked, [null, null]);
  assert.deepEqual(
    off.map((o) => [o.turn, o.valid, o.modes?.recipe?.valid]),
    [
      [1, false, false],
      [2, true, true],
    ],
  );
  await run('original'); // with --goals: asked when a fix turn may follow
  assert.deepEqual(asked, ['original', null]);
});
