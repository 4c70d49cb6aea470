import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage, ProveEvent } from '../../backend/protocol';
import { prove } from '../../backend/prover/prove';
import { openDb } from '../../backend/store/db';
import { AttemptStore } from '../../backend/store/attempts';
import { ScriptedEngine, StandInVerifier, leanError, valid } from './doubles';
import { FAILING_CODE, FIX_MESSAGE_RELEASED, TYPE_MISMATCH, WELL_FORMED } from '../../backend/demo/kiminaExamples';

const FILE = `import Mathlib

/-- Solve 2x + 3 = 11. -/
theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry
`;
const FORMAL = 'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by';
/** §8.3's failing attempt, well formed: `exact h₁` in the last tactics block and the final block. */
const BAD = WELL_FORMED.replaceAll('  linarith\n```', '  exact h₁\n```');
/** Body-relative, as the verifier returns it: body line 3 (after `import Mathlib` and the blank line) = snippet line 5. */
const infotree = [
  {
    node: {
      stx: { range: { start: { line: 3, column: 2 }, finish: { line: 3, column: 10 } } },
      goalsBefore: ['x : ℝ\nh₀ : 2 * x + 3 = 11\nh₁ : 2 * x = 8\n⊢ x = 4'],
    },
  },
];
const mismatch = {
  severity: 'error' as const,
  pos: { line: 5, column: 2 },
  endPos: { line: 5, column: 10 },
  data: TYPE_MISMATCH,
};

/** Stand-in judgement: `linarith` as the last tactic proves it; `exact h₁` is the §8.3 type mismatch. */
const judgeByProof = (code: string) =>
  code.endsWith('  linarith') ? { verdict: valid() } : { verdict: leanError([mismatch]), response: { infotree } };
const turnOf = (c: ChatMessage[]) => c.filter((m) => m.role === 'user').length;

test('turn 1 wrong, fix turn with the §8.3 message, turn 2 verified; stored and streamed', async () => {
  const engine = new ScriptedEngine((c) => (turnOf(c) === 1 ? BAD : WELL_FORMED));
  const verifier = new StandInVerifier(judgeByProof);
  const store = new AttemptStore(openDb(':memory:'));
  const events: ProveEvent[] = [];
  const result = await prove({ code: FILE, samples: 1 }, { engine, verifier, store }, (e) => events.push(e));

  assert.equal(result.status, 'proved');
  assert.equal(result.proof, FORMAL + '\n  have h₁ : 2 * x = 8 := by linarith\n  linarith');
  assert.equal(result.tactics, '\n  have h₁ : 2 * x = 8 := by linarith\n  linarith');
  assert.deepEqual(
    result.attempts.map((a) => [a.turn, a.verdict?.status, a.format.error]),
    [
      [1, 'lean_error', 'NONE'],
      [2, 'valid', 'NONE'],
    ],
  );
  assert.equal(verifier.calls[0].code, FAILING_CODE);
  // the goal before the first error, from the REPL's infotree (the same goals the fix message quotes)
  assert.deepEqual(result.attempts[0].errorGoal, {
    line: 5,
    goals: ['x : ℝ\nh₀ : 2 * x + 3 = 11\nh₁ : 2 * x = 8\n⊢ x = 4'],
  });
  assert.ok(FIX_MESSAGE_RELEASED.includes('h₁ : 2 * x = 8\n⊢ x = 4'));
  assert.equal(result.attempts[1].errorGoal, undefined);
  assert.equal(verifier.calls[0].options?.infotree, 'original', 'goals are asked for when a fix turn may follow');
  assert.equal(verifier.calls[1].options?.infotree, null);
  assert.deepEqual(verifier.calls[0].options?.theorems, ['algebra_example']);

  const fix = engine.calls[1].conversations[0];
  assert.deepEqual(
    fix.map((m) => m.role),
    ['system', 'user', 'assistant', 'user'],
  );
  assert.equal(fix[2].content, BAD, 'the full turn-1 text is the assistant message');
  assert.equal(fix[3].content, FIX_MESSAGE_RELEASED);
  assert.ok(
    fix[1].content.includes('# Problem:\nSolve 2x + 3 = 11.\n\n# Formal Statement:\n```lean4\n' + FORMAL + '\n```\n'),
  );

  const types = events.map((e) => e.type);
  assert.equal(types[0], 'started');
  assert.equal(types.at(-1), 'done');
  const think = events
    .filter((e) => e.type === 'think' && e.turn === 1)
    .map((e) => (e as { delta: string }).delta)
    .join('');
  assert.ok(think.startsWith('\nThe hypothesis is linear') && think.endsWith('```\n') && !think.includes('<think>'));
  const text = events
    .filter((e) => e.type === 'text' && e.turn === 2)
    .map((e) => (e as { delta: string }).delta)
    .join('');
  assert.equal(text, WELL_FORMED.slice(WELL_FORMED.indexOf('</think>') + '</think>'.length));
  assert.ok(types.includes('progress') && types.includes('verdict'));
  assert.ok(types.indexOf('attempt') < types.lastIndexOf('verdict'), 'attempt 1 is reported before turn 2 is judged');

  const stored = store.attemptsOf(result.id);
  assert.equal(stored.length, 2);
  assert.equal(stored[0].feedback, FIX_MESSAGE_RELEASED);
  assert.equal(stored[0].think, result.attempts[0].think);
  assert.equal(stored[1].messages.length, 4);
  assert.equal(store.getRun(result.id)?.status, 'proved');
  assert.equal(store.getRun(result.id)?.proof, result.proof);
});

test('n samples decoded together; the first verified proof cancels the other checks', async () => {
  const engine = new ScriptedEngine((_c, i) => (i === 2 ? WELL_FORMED : BAD));
  const verifier = new StandInVerifier((code) =>
    code.endsWith('  linarith') ? { verdict: valid(), delayMs: 5 } : { ...judgeByProof(code), delayMs: 5000 },
  );
  const started = Date.now();
  const result = await prove({ code: FILE, samples: 3 }, { engine, verifier });
  assert.ok(Date.now() - started < 3000, 'slow checks were cancelled');
  assert.equal(engine.calls.length, 1);
  assert.equal(engine.calls[0].conversations.length, 3);
  assert.equal(result.status, 'proved');
  assert.equal(verifier.aborted, 2);
  assert.deepEqual(
    result.attempts.map((a) => [a.sample, a.verdict?.status ?? null, a.fixSkipped ?? null]),
    [
      [0, null, 'proved'],
      [1, null, 'proved'],
      [2, 'valid', 'valid'],
    ],
  );
});

test('no fix turns when disabled; malformed and unextractable answers say why', async () => {
  const engine = new ScriptedEngine((_c, i) => (i === 0 ? BAD : 'I cannot do this.'));
  const verifier = new StandInVerifier(judgeByProof);
  const result = await prove({ code: FILE, samples: 2, fixTurns: 0 }, { engine, verifier });
  assert.equal(result.status, 'not_proved');
  assert.equal(result.proof, null);
  assert.equal(engine.calls.length, 1);
  assert.deepEqual(
    result.attempts.map((a) => [a.format.error, a.code === null, a.fixSkipped]),
    [
      ['NONE', false, 'exceed_max_turn'],
      ['NO_VALID_LEAN4_CODE_BLOCK', true, 'filtered'],
    ],
  );
  assert.equal(verifier.calls.length, 1, 'nothing extracted, nothing sent to Lean');
});

test('a second fix turn only when asked; turn-1 format failures carry into later turns', async () => {
  const engine = new ScriptedEngine(() => BAD + '\nDone.');
  const verifier = new StandInVerifier(judgeByProof);
  const result = await prove({ code: FILE, samples: 1, fixTurns: 2 }, { engine, verifier });
  assert.equal(result.status, 'not_proved');
  assert.deepEqual(
    result.attempts.map((a) => [a.turn, a.format.error]),
    [
      [1, 'NO_VALID_LEAN4_CODE_BLOCK'],
      [2, 'NO_VALID_LEAN4_CODE_BLOCK'],
      [3, 'NO_VALID_LEAN4_CODE_BLOCK'],
    ],
  );
  assert.equal(engine.calls[2].conversations[0].length, 6);
  assert.equal(result.attempts[2].fixSkipped, 'exceed_max_turn');
});

test('feedback over 3000 characters and prompts over the token limit are dropped, not truncated', async () => {
  const long = { ...mismatch, data: 'x'.repeat(3100) };
  const engine = new ScriptedEngine(() => BAD);
  const r1 = await prove(
    { code: FILE, samples: 1 },
    { engine, verifier: new StandInVerifier(() => ({ verdict: leanError([long]) })) },
  );
  assert.equal(r1.attempts[0].fixSkipped, 'feedback_too_long');
  const r2 = await prove(
    { code: FILE, samples: 1 },
    { engine, verifier: new StandInVerifier(judgeByProof), options: { maxPromptTokens: 100 } },
  );
  assert.equal(r2.attempts[0].fixSkipped, 'max_prompt_token_len_exceeded');
  assert.equal(r2.attempts.length, 1);
});

test('cancelling mid-generation resolves as cancelled and keeps what was generated', async () => {
  const engine = new ScriptedEngine(() => WELL_FORMED, undefined, 3, 2);
  const verifier = new StandInVerifier(judgeByProof);
  const controller = new AbortController();
  const store = new AttemptStore(openDb(':memory:'));
  const pending = prove(
    { code: FILE, samples: 2 },
    { engine, verifier, store },
    (e) => {
      if (e.type === 'think') controller.abort();
    },
    controller.signal,
  );
  const result = await pending;
  assert.equal(result.status, 'cancelled');
  assert.equal(verifier.calls.length, 0);
  assert.ok(result.attempts.every((a) => a.finishReason === 'cancelled' && a.fixSkipped === 'cancelled'));
  assert.equal(store.getRun(result.id)?.status, 'cancelled');
});

test('maxTokens is cut to the context the prompt leaves; a prompt that does not fit is a clear error', async () => {
  const engine = new ScriptedEngine(() => WELL_FORMED, 400);
  await prove({ code: FILE, samples: 1, maxTokens: 5000 }, { engine, verifier: new StandInVerifier(judgeByProof) });
  const budget = engine.calls[0].options.maxTokens;
  assert.ok(budget < 400 && budget > 0);
  const tiny = new ScriptedEngine(() => WELL_FORMED, 10);
  await assert.rejects(
    prove({ code: FILE }, { engine: tiny, verifier: new StandInVerifier(judgeByProof) }),
    /does not fit the model's context of 10 tokens/,
  );
});

test('a verifier that throws gives a server_error verdict and stops the proof without a fix turn', async () => {
  const engine = new ScriptedEngine((c) => (turnOf(c) === 1 ? BAD : WELL_FORMED));
  let first = true;
  const verifier = new StandInVerifier((code) => {
    if (first) {
      first = false;
      throw new Error('pool is down');
    }
    return judgeByProof(code);
  });
  const result = await prove({ code: FILE, samples: 1 }, { engine, verifier });
  assert.equal(result.attempts[0].verdict?.status, 'server_error');
  assert.equal(
    result.attempts[0].feedback,
    '# System Error:\nError message: \nthe Lean verifier failed: pool is down\n\n',
  );
  // The verifier could not judge anything: no fix turn is spent on it, the proof stops and says why.
  assert.equal(result.attempts.length, 1);
  assert.equal(result.attempts[0].fixSkipped, 'verifier_failed');
  assert.equal(engine.calls.length, 1);
  assert.equal(result.status, 'not_proved');
  assert.deepEqual(result.verifierFailure, {
    reason: 'the Lean verifier failed: pool is down',
    leanMissing: false,
  });
});

test('Lean that cannot start stops every sample at once, named as missing, with no fix turn', async () => {
  // two samples: the first answer is checked early and Lean cannot start; the second, still thinking, stops
  const slow = WELL_FORMED.replace('<think>', `<think>\n${'more thinking '.repeat(300)}`);
  const engine = new ScriptedEngine((_c, i) => (i === 0 ? WELL_FORMED : slow), undefined, 7, 1);
  const verifier = new StandInVerifier(() => ({
    verdict: {
      status: 'server_error',
      reason: 'could not start the Lean REPL (lake env repl): spawn lake ENOENT',
      messages: [],
      sorries: [],
      time: 0,
      leanMissing: true,
    },
  }));
  const result = await prove({ code: FILE, samples: 2, fixTurns: 1 }, { engine, verifier });
  assert.equal(result.status, 'not_proved');
  assert.equal(result.verifierFailure?.leanMissing, true);
  assert.equal(engine.calls.length, 1, 'no fix turn was generated');
  assert.equal(verifier.calls.length, 1, 'the stopped sample was not sent to a verifier that cannot run');
  assert.ok(result.attempts.every((a) => a.turn === 1));
  assert.equal(result.attempts[1].finishReason, 'cancelled');
});

test('an answer cut off by cancellation is not format-checked', async () => {
  const engine = new ScriptedEngine(() => WELL_FORMED, undefined, 3, 2);
  const controller = new AbortController();
  let seen = 0;
  const result = await prove(
    { code: FILE, samples: 1 },
    { engine, verifier: new StandInVerifier(judgeByProof) },
    (e) => {
      if (e.type === 'think' && ++seen === 5) controller.abort();
    },
    controller.signal,
  );
  assert.equal(result.status, 'cancelled');
  const [a] = result.attempts;
  assert.equal(a.finishReason, 'cancelled');
  assert.deepEqual(
    { ok: a.format.ok, error: a.format.error, stopped: a.format.stopped },
    {
      ok: false,
      error: 'NONE',
      stopped: true,
    },
  );
});

test('bad targets are request errors', async () => {
  const deps = { engine: new ScriptedEngine(() => ''), verifier: new StandInVerifier(judgeByProof) };
  await assert.rejects(prove({ code: FILE, theorem: 'other' }, deps), {
    name: 'ProveRequestError',
    message: /no theorem named 'other'/,
  });
  await assert.rejects(prove({ code: 'import Mathlib\n' }, deps), /no theorem, lemma or example/);
});

test("the loop leaves no listener on the caller's signal", async () => {
  const controller = new AbortController();
  let added = 0,
    removed = 0;
  const signal = controller.signal;
  const add = signal.addEventListener.bind(signal),
    remove = signal.removeEventListener.bind(signal);
  signal.addEventListener = ((...a: Parameters<typeof add>) => {
    added++;
    add(...a);
  }) as typeof add;
  signal.removeEventListener = ((...a: Parameters<typeof remove>) => {
    removed++;
    remove(...a);
  }) as typeof remove;
  await prove(
    { code: FILE, samples: 2 },
    { engine: new ScriptedEngine(() => BAD), verifier: new StandInVerifier(judgeByProof) },
    () => {},
    signal,
  );
  assert.ok(added > 0);
  assert.equal(removed, added);
});

test('a sample that failed before another was verified gets no fix turn: proved', async () => {
  const engine = new ScriptedEngine((_c, i) => (i === 0 ? BAD : WELL_FORMED));
  const verifier = new StandInVerifier((code) =>
    code.endsWith('  linarith') ? { verdict: valid(), delayMs: 30 } : judgeByProof(code),
  );
  const events: ProveEvent[] = [];
  const result = await prove({ code: FILE, samples: 2 }, { engine, verifier }, (e) => events.push(e));
  assert.equal(result.status, 'proved');
  assert.deepEqual(
    result.attempts.map((a) => [a.verdict?.status, a.fixSkipped]),
    [
      ['lean_error', 'proved'],
      ['valid', 'valid'],
    ],
  );
  assert.ok(!events.some((e) => e.type === 'stopped'), 'a sample Lean already judged was not stopped');
  assert.equal(engine.calls.length, 1);
});

test('a theorem proved by pattern matching has nothing to prove after := and says so', async () => {
  const code = 'theorem t : ∀ n : ℕ, n = n\n  | 0 => rfl\n  | n + 1 => rfl\n';
  const deps = { engine: new ScriptedEngine(() => ''), verifier: new StandInVerifier(judgeByProof) };
  await assert.rejects(prove({ code }, deps), {
    name: 'ProveRequestError',
    message: /theorem t has no ':=' to prove after/,
  });
});

test('early check: a short answer verified while a long one still decodes stops the decoding', async () => {
  const LONG = WELL_FORMED.replace(
    'With h₁ available',
    'Let me think more about this. '.repeat(400) + '\nWith h₁ available',
  );
  const run = async (earlyCheck: boolean) => {
    const engine = new ScriptedEngine((_c, i) => (i === 0 ? WELL_FORMED : LONG), undefined, 7, 1);
    const verifier = new StandInVerifier(judgeByProof);
    const events: ProveEvent[] = [];
    const result = await prove({ code: FILE, samples: 2 }, { engine, verifier, options: { earlyCheck } }, (e) =>
      events.push(e),
    );
    return { result, verifier, events };
  };
  const early = await run(true);
  assert.equal(early.result.status, 'proved');
  const [short, long] = early.result.attempts;
  assert.equal(short.verdict?.status, 'valid');
  assert.equal(long.finishReason, 'cancelled');
  assert.ok(long.response.length < LONG.length / 2, 'the long answer was cut short');
  assert.equal(long.fixSkipped, 'proved');
  assert.equal(early.verifier.calls.length, 1);
  const verdictAt = early.events.findIndex((e) => e.type === 'verdict');
  assert.ok(
    early.events.slice(verdictAt).some((e) => e.type === 'think'),
    'the verdict came while the other sample was still thinking',
  );
  // The stopped sample is told so at once (the Proof view shows why, instead of waiting for Lean).
  const stopped = early.events.filter((e) => e.type === 'stopped');
  assert.deepEqual(
    stopped.map((e) => e.type === 'stopped' && [e.sample, e.turn, e.reason, e.bySample]),
    [[1, 1, 'proved', 0]],
  );
  assert.ok(early.events.findIndex((e) => e.type === 'stopped') > verdictAt);

  const late = await run(false);
  assert.equal(late.result.status, 'proved');
  assert.equal(late.result.attempts[1].response, LONG, 'without early checks the batch decodes to the end');
});

test('early check on an answer that then changes: the final text is what gets judged', async () => {
  // The first final block is wrong; the model keeps writing and ends with a second, right block.
  const revised =
    BAD + '\n\nWait, that is wrong.\n\n```lean4\n' + FORMAL + '\n  have h₁ : 2 * x = 8 := by linarith\n  linarith\n```';
  const engine = new ScriptedEngine(() => revised, undefined, 5, 1);
  const verifier = new StandInVerifier((code) => ({ ...judgeByProof(code), delayMs: 1 }));
  const result = await prove({ code: FILE, samples: 1, fixTurns: 0 }, { engine, verifier });
  assert.equal(result.status, 'proved');
  assert.equal(result.attempts[0].code?.endsWith('  linarith'), true);
  assert.equal(
    result.attempts[0].format.error,
    'NO_VALID_LEAN4_CODE_BLOCK',
    'two final blocks: the recipe format check fails',
  );
  assert.equal(verifier.calls.length, 2, 'early check of the first block, then the final code');
});
