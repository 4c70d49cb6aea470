// Randomised runs of the prove loop (seeded): whatever the answers, check delays, early checks and
// cancellations, the result, the events and the store must agree with each other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProveEvent } from '../../backend/protocol';
import { prove } from '../../backend/prover/prove';
import { openDb } from '../../backend/store/db';
import { AttemptStore } from '../../backend/store/attempts';
import { ScriptedEngine, StandInVerifier, leanError, valid } from './doubles';
import { TYPE_MISMATCH, WELL_FORMED } from '../../backend/demo/kiminaExamples';

const FILE = 'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  sorry\n';
const BAD = WELL_FORMED.replaceAll('  linarith\n```', '  exact h₁\n```');
const ANSWERS = [
  WELL_FORMED,
  BAD,
  BAD + '\nDone.',
  'no answer at all',
  '<think>unfinished',
  WELL_FORMED.replace('With h₁', 'Long thinking. '.repeat(200) + 'With h₁'),
];

function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

test('60 seeded runs keep result, events and store consistent', { timeout: 120_000 }, async () => {
  for (let seed = 1; seed <= 60; seed++) {
    const r = rng(seed);
    const pick = () => ANSWERS[Math.floor(r() * ANSWERS.length)];
    const engine = new ScriptedEngine(() => pick(), undefined, 5 + Math.floor(r() * 40), r() < 0.3 ? 1 : 0);
    const verifier = new StandInVerifier((code) => ({
      verdict:
        code.endsWith('  linarith') && r() < 0.8
          ? valid()
          : leanError([{ severity: 'error', pos: { line: 5, column: 2 }, endPos: null, data: TYPE_MISMATCH }]),
      delayMs: Math.floor(r() * 15),
    }));
    const store = new AttemptStore(openDb(':memory:'));
    const controller = new AbortController();
    const cancelAfter = r() < 0.2 ? Math.floor(r() * 30) : -1;
    let deltas = 0;
    const events: ProveEvent[] = [];
    const samples = 1 + Math.floor(r() * 4),
      fixTurns = Math.floor(r() * 3);
    const result = await prove(
      { code: FILE, samples, fixTurns },
      { engine, verifier, store, options: { earlyCheck: r() < 0.7 } },
      (e) => {
        events.push(e);
        if ((e.type === 'think' || e.type === 'text') && ++deltas === cancelAfter) controller.abort();
      },
      controller.signal,
    );
    const where = `seed ${seed}`;

    // One attempt per (sample, turn), turns consecutive per sample, at most 1 + fixTurns.
    const bySample = new Map<number, number[]>();
    for (const a of result.attempts) bySample.set(a.sample, [...(bySample.get(a.sample) ?? []), a.turn]);
    for (const [, turns] of bySample)
      assert.deepEqual(
        turns,
        turns.map((_, i) => i + 1),
        where,
      );
    assert.ok(
      result.attempts.every((a) => a.turn <= 1 + fixTurns),
      where,
    );
    assert.equal(bySample.size, samples, where);

    // Status agrees with the attempts.
    const validOnes = result.attempts.filter((a) => a.verdict?.status === 'valid');
    if (result.status === 'proved') {
      assert.ok(validOnes.length >= 1 && result.proof === validOnes.find((a) => a.code === result.proof)?.code, where);
      assert.ok(result.proof?.startsWith('import Mathlib\n\ntheorem algebra_example'), where);
    } else {
      assert.equal(result.proof, null, where);
      assert.equal(validOnes.length, 0, where);
      assert.equal(result.status, controller.signal.aborted ? 'cancelled' : 'not_proved', where);
    }
    // Every attempt that did not continue says why; a continued one does not.
    for (const a of result.attempts) {
      const continued = result.attempts.some((b) => b.sample === a.sample && b.turn === a.turn + 1);
      assert.equal(
        a.fixSkipped === undefined,
        continued,
        `${where} sample ${a.sample} turn ${a.turn}: ${a.fixSkipped}`,
      );
      if (a.code === null) assert.equal(a.verdict, null, where);
    }
    // Events and store mirror the result.
    assert.equal(events[0].type, 'started', where);
    assert.equal(events.at(-1)?.type, 'done', where);
    assert.equal(events.filter((e) => e.type === 'attempt').length, result.attempts.length, where);
    const stored = store.attemptsOf(result.id);
    assert.deepEqual(
      stored.map((a) => [a.sample, a.turn, a.verdict?.status ?? null, a.fixSkipped ?? null]).sort(),
      result.attempts.map((a) => [a.sample, a.turn, a.verdict?.status ?? null, a.fixSkipped ?? null]).sort(),
      where,
    );
    assert.equal(store.getRun(result.id)?.status, result.status, where);
  }
});
