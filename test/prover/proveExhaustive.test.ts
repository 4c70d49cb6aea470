// ProveOptions.exhaustive (evaluation): a verified proof stops nothing, every failed sample gets its fix
// turn, and one call with `samples: k` returns all k samples' attempts. TEST DOUBLES: scripted engine,
// stand-in verifier (./doubles).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage, ProveEvent } from '../../backend/protocol';
import { prove } from '../../backend/prover/prove';
import { openDb } from '../../backend/store/db';
import { AttemptStore } from '../../backend/store/attempts';
import { ScriptedEngine, StandInVerifier, leanError, valid } from './doubles';
import { TYPE_MISMATCH, WELL_FORMED } from '../../backend/demo/kiminaExamples';

const FILE = 'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  sorry\n';
/** Well formed, but `exact h₁` is a type mismatch for the stand-in verifier. */
const BAD = WELL_FORMED.replaceAll('  linarith\n```', '  exact h₁\n```');
const mismatch = {
  severity: 'error' as const,
  pos: { line: 5, column: 2 },
  endPos: { line: 5, column: 10 },
  data: TYPE_MISMATCH,
};
const judge = (code: string) =>
  code.endsWith('  linarith') ? { verdict: valid() } : { verdict: leanError([mismatch]) };
const turnOf = (c: ChatMessage[]) => c.filter((m) => m.role === 'user').length;
const summary = (
  attempts: { sample: number; turn: number; verdict: { status: string } | null; fixSkipped?: string }[],
) => attempts.map((a) => `${a.sample}/${a.turn}/${a.verdict?.status ?? 'none'}/${a.fixSkipped ?? '-'}`);

test('exhaustive: a sample verified at turn 1 does not stop the others; each failed one gets its fix turn, batched', async () => {
  // sample 0 right at once; samples 1 and 2 wrong at turn 1, right after the fix
  const answer = (c: ChatMessage[], i: number) => (turnOf(c) === 1 && i !== 0 ? BAD : WELL_FORMED);
  const verifier = new StandInVerifier((code) => ({ ...judge(code), delayMs: code.endsWith('  linarith') ? 1 : 40 }));
  const engine = new ScriptedEngine(answer);
  const store = new AttemptStore(openDb(':memory:'));
  const events: ProveEvent[] = [];
  const result = await prove(
    { code: FILE, samples: 3, fixTurns: 1 },
    { engine, verifier, store, options: { exhaustive: true } },
    (e) => events.push(e),
  );

  assert.equal(result.status, 'proved');
  assert.deepEqual(summary(result.attempts), [
    '0/1/valid/valid',
    '1/1/lean_error/-',
    '2/1/lean_error/-',
    '1/2/valid/valid',
    '2/2/valid/valid',
  ]);
  assert.equal(result.proof, result.attempts[0].code, 'the proof is the first one verified');
  assert.equal(verifier.aborted, 0, 'no check was cancelled');
  assert.deepEqual(
    engine.calls.map((c) => c.conversations.length),
    [3, 2],
    'each round decodes its lanes together',
  );
  assert.equal(store.attemptsOf(result.id).length, 5);
  assert.equal(events.filter((e) => e.type === 'attempt').length, 5);

  // The default stops at the first verified proof: the failed samples get no fix turn.
  const first = await prove(
    { code: FILE, samples: 3, fixTurns: 1 },
    { engine: new ScriptedEngine(answer), verifier: new StandInVerifier(judge) },
  );
  assert.deepEqual(summary(first.attempts), ['0/1/valid/valid', '1/1/lean_error/proved', '2/1/lean_error/proved']);
});

test("exhaustive: an early verified proof does not cut another sample's decoding", async () => {
  const LONG = WELL_FORMED.replace(
    'With h₁ available',
    'Let me think more about this. '.repeat(200) + '\nWith h₁ available',
  );
  const engine = new ScriptedEngine((_c, i) => (i === 0 ? WELL_FORMED : LONG), undefined, 7, 1);
  const result = await prove(
    { code: FILE, samples: 2 },
    { engine, verifier: new StandInVerifier(judge), options: { exhaustive: true, earlyCheck: true } },
  );
  assert.equal(result.attempts[1].response, LONG);
  assert.equal(result.attempts[1].finishReason, 'stop');
  assert.deepEqual(summary(result.attempts), ['0/1/valid/valid', '1/1/valid/valid']);
});

test('exhaustive: later valid turns keep the first verified proof; nothing valid is not_proved; cancelling still cancels', async () => {
  // sample 0 fails both turns, sample 1 is right only after its fix
  const engine = new ScriptedEngine((c, i) => (i === 1 && turnOf(c) === 2 ? WELL_FORMED : BAD));
  const result = await prove(
    { code: FILE, samples: 2, fixTurns: 1 },
    { engine, verifier: new StandInVerifier(judge), options: { exhaustive: true } },
  );
  assert.equal(result.status, 'proved');
  assert.deepEqual(summary(result.attempts), [
    '0/1/lean_error/-',
    '1/1/lean_error/-',
    '0/2/lean_error/exceed_max_turn',
    '1/2/valid/valid',
  ]);
  assert.equal(result.proof, result.attempts[3].code);

  const none = await prove(
    { code: FILE, samples: 2, fixTurns: 1 },
    { engine: new ScriptedEngine(() => BAD), verifier: new StandInVerifier(judge), options: { exhaustive: true } },
  );
  assert.equal(none.status, 'not_proved');
  assert.equal(none.attempts.length, 4);

  const controller = new AbortController();
  const slow = new ScriptedEngine(() => WELL_FORMED, undefined, 3, 2);
  const pending = prove(
    { code: FILE, samples: 2 },
    { engine: slow, verifier: new StandInVerifier(judge), options: { exhaustive: true } },
    undefined,
    controller.signal,
  );
  setTimeout(() => controller.abort(), 20);
  const cancelled = await pending;
  assert.equal(cancelled.status, 'cancelled');
});

test(
  'exhaustive: randomised runs return every sample to its end (1 + fixTurns turns unless it stopped for a reason)',
  { timeout: 60_000 },
  async () => {
    let a = 12345;
    const r = () => {
      a = (Math.imul(a, 1103515245) + 12345) >>> 0;
      return a / 4294967296;
    };
    const ANSWERS = [WELL_FORMED, BAD, 'no answer at all', '<think>unfinished'];
    for (let run = 0; run < 25; run++) {
      const samples = 1 + Math.floor(r() * 4),
        fixTurns = Math.floor(r() * 3);
      const engine = new ScriptedEngine(
        () => ANSWERS[Math.floor(r() * ANSWERS.length)],
        undefined,
        5 + Math.floor(r() * 30),
      );
      const verifier = new StandInVerifier((code) => ({ ...judge(code), delayMs: Math.floor(r() * 10) }));
      const result = await prove(
        { code: FILE, samples, fixTurns },
        { engine, verifier, options: { exhaustive: true, earlyCheck: r() < 0.5 } },
      );
      const where = `run ${run}: ${summary(result.attempts).join(' ')}`;
      for (let s = 0; s < samples; s++) {
        const chain = result.attempts.filter((x) => x.sample === s);
        assert.deepEqual(
          chain.map((x) => x.turn),
          chain.map((_, i) => i + 1),
          where,
        );
        const last = chain.at(-1)!;
        assert.ok(
          last.fixSkipped !== undefined && last.fixSkipped !== 'proved' && last.fixSkipped !== 'cancelled',
          where,
        );
        if (last.verdict?.status !== 'valid' && last.fixSkipped === 'exceed_max_turn')
          assert.equal(chain.length, 1 + fixTurns, where);
        assert.ok(
          chain.slice(0, -1).every((x) => x.fixSkipped === undefined && x.verdict?.status !== 'valid'),
          where,
        );
      }
      assert.equal(
        result.status,
        result.attempts.some((x) => x.verdict?.status === 'valid') ? 'proved' : 'not_proved',
        where,
      );
    }
  },
);
