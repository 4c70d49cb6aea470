// The prover decodes its samples in waves of the engine's scheduled rows (issue 32): with a scripted engine whose
// schedule is calibrated on a TimeStep double, a stand-in verifier and gates between them, so the order of
// decoding and checking is fixed, not timed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage, ProveEvent } from '../../backend/protocol';
import type { Generation, OnDelta, SamplingOptions } from '../../backend/model/engine';
import {
  calibrate,
  expectedFirstProof,
  scheduleOf,
  stepMs,
  type Schedule,
  type StepCost,
} from '../../backend/model/schedule';
import { prove } from '../../backend/prover/prove';
import { TerminalView } from '../../backend/prover/terminal';
import { WELL_FORMED } from '../../backend/demo/kiminaExamples';
import type { CheckOptions, CheckOutcome } from '../../backend/lean/types';
import { ScriptedEngine, StandInVerifier, leanError, valid } from './doubles';

const FILE = `import Mathlib

/-- Solve 2x + 3 = 11. -/
theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry
`;
/** A well-formed answer whose proof Lean rejects (`exact h₁`), and the one it accepts (`linarith`). */
const BAD = WELL_FORMED.replaceAll('  linarith\n```', '  exact h₁\n```');
const GOOD = WELL_FORMED;
const mismatch = {
  severity: 'error' as const,
  pos: { line: 5, column: 2 },
  endPos: { line: 5, column: 10 },
  data: 'type mismatch',
};

/** Test double of a GPU-like device (a TimeStep): a step costs the cost model's known function of rows and cache. */
const GPU: StepCost = { a: 8, m: 0.3, b: 2e-5 };
const gpuDevice = async (rows: number, cachedPerRow: number) => stepMs(GPU, rows, rows * cachedPerRow);

/**
 * Test double: the scripted engine with a schedule calibrated on the TimeStep double (memory allowing `fit` rows
 * at most), which logs when each generate call (one wave) starts and ends, and can be waited on for a call.
 */
class ScheduledEngine extends ScriptedEngine {
  readonly log: string[];
  private readonly waveStarted: (() => void)[] = [];
  private readonly started: Promise<void>[] = [];
  constructor(
    answer: (conversation: ChatMessage[], index: number) => string,
    log: string[],
    private readonly fit: number[],
  ) {
    super(answer, undefined, 7, 1);
    this.log = log;
    for (let i = 0; i < 16; i++) this.started.push(new Promise((r) => this.waveStarted.push(r)));
  }
  async schedule(): Promise<Schedule | undefined> {
    return scheduleOf(await calibrate(gpuDevice), { candidates: this.fit, calibratedNow: true });
  }
  /** Resolves once the `n`th generate call (1-based) has begun. */
  wave(n: number): Promise<void> {
    return this.started[n - 1];
  }
  override async generate(
    conversations: ChatMessage[][],
    options: SamplingOptions,
    onDelta?: OnDelta,
  ): Promise<Generation[]> {
    const n = this.calls.length + 1;
    this.log.push(`wave ${n} starts`);
    const out = super.generate(conversations, options, onDelta);
    this.waveStarted[n - 1]();
    const gens = await out;
    this.log.push(`wave ${n} ends`);
    return gens;
  }
}

/** Test double: the stand-in verifier, which logs each check's start and end and may hold a check until a gate opens. */
class GatedVerifier extends StandInVerifier {
  constructor(
    judge: (code: string) => { verdict: ReturnType<typeof valid> },
    private readonly log: string[],
    private readonly gate: (code: string) => Promise<void> = async () => undefined,
  ) {
    super(judge);
  }
  override async check(code: string, options?: CheckOptions): Promise<CheckOutcome> {
    const name = code.endsWith('linarith') ? 'good' : 'bad';
    this.log.push(`check ${name} starts`);
    await this.gate(code);
    const outcome = await super.check(code, options);
    this.log.push(`check ${name} ends`);
    return outcome;
  }
}

const judge = (code: string) => ({ verdict: code.endsWith('  linarith') ? valid() : leanError([mismatch]) });

/** Answers in the order the engine asks for them (waves in order, rows in order): sample k gets answers[k]. */
function inOrder(answers: string[]): () => string {
  let k = 0;
  return () => answers[k++] ?? BAD;
}

test('samples decode in waves of the scheduled rows, each wave reported in the progress events', async () => {
  const log: string[] = [];
  const engine = new ScheduledEngine(inOrder([]), log, [1, 2]); // memory for two rows: the GPU takes both
  const verifier = new GatedVerifier(judge, log);
  const events: ProveEvent[] = [];
  const result = await prove({ code: FILE, samples: 5, fixTurns: 0 }, { engine, verifier }, (e) => events.push(e));

  assert.equal(result.status, 'not_proved');
  assert.deepEqual(
    engine.calls.map((c) => c.conversations.length),
    [2, 2, 1],
  );
  assert.deepEqual(
    result.attempts.map((a) => a.sample),
    [0, 1, 2, 3, 4],
  );
  const started = events.find((e) => e.type === 'started');
  assert.ok(started?.type === 'started' && started.schedule);
  const s = started.schedule;
  assert.deepEqual([s.rows, s.waves, s.from, s.samples], [2, 3, 'calibration', 5]);
  assert.ok(Math.abs(s.calibration!.a - GPU.a) < 1e-9 && Math.abs(s.calibration!.m - GPU.m) < 1e-9);
  assert.ok(s.calibration!.now && s.expectedFirstProofSeconds! > 0 && s.worstCaseSeconds! > 0);
  assert.match(
    s.text,
    /^scripted-test-double: 2 of 5 samples at once, 3 waves \(calibrated now: 8\.0 ms \+ 0\.3 ms per further row/,
  );
  const waves = new Set(
    events.flatMap((e) => (e.type === 'progress' && e.wave ? [`${e.wave.index}/${e.wave.of}x${e.wave.rows}`] : [])),
  );
  assert.deepEqual([...waves], ['1/3x2', '2/3x2', '3/3x1']);

  // The terminal says the wave and follows a sample of each wave.
  const err = {
    text: '',
    isTTY: false,
    write(s: string) {
      this.text += s;
      return true;
    },
  };
  const out = {
    text: '',
    isTTY: false,
    write(s: string) {
      this.text += s;
      return true;
    },
  };
  const view = new TerminalView({ out: out as never, err: err as never, color: false });
  for (const e of events) view.event(e);
  assert.match(err.text, /Decoding: scripted-test-double: 2 of 5 samples at once, 3 waves \(calibrated now: /);
  assert.match(err.text, /── sample 1, turn 1 .*── sample 3, turn 1 .*── sample 5, turn 1/s);
});

test("Lean checks a wave's answers while the next wave decodes; the first verified proof starts no further wave", async () => {
  const log: string[] = [];
  // Wave 1: sample 0 is wrong, sample 1 right; its check is held until wave 2 has begun decoding.
  const engine = new ScheduledEngine(inOrder([BAD, GOOD]), log, [1, 2]);
  const verifier = new GatedVerifier(judge, log, (code) =>
    code.endsWith('linarith') ? engine.wave(2) : Promise.resolve(),
  );
  const events: ProveEvent[] = [];
  const result = await prove({ code: FILE, samples: 6, fixTurns: 0 }, { engine, verifier }, (e) => events.push(e));

  assert.equal(result.status, 'proved');
  assert.equal(engine.calls.length, 2, 'wave 3 never started');
  // The good answer's check began during wave 1 (early, when its final block closed), ended during wave 2.
  assert.ok(log.indexOf('check good starts') < log.indexOf('wave 1 ends'), log.join(', '));
  assert.ok(log.indexOf('wave 2 starts') < log.indexOf('check good ends'), log.join(', '));
  assert.ok(log.indexOf('check good ends') < log.indexOf('wave 2 ends'), log.join(', '));
  // Wave 2 was stopped by the proof; the samples of wave 3 have no attempt and were told why.
  assert.deepEqual(
    result.attempts.map((a) => [a.sample, a.finishReason]),
    [
      [0, 'stop'],
      [1, 'stop'],
      [2, 'cancelled'],
      [3, 'cancelled'],
    ],
  );
  const stopped = events.flatMap((e) => (e.type === 'stopped' ? [[e.sample, e.reason, e.bySample]] : []));
  for (const sample of [2, 3, 4, 5])
    assert.deepEqual(
      stopped.find((x) => x[0] === sample),
      [sample, 'proved', 1],
    );
});

test('evaluation (exhaustive) still decodes every wave after a verified proof', async () => {
  const log: string[] = [];
  const engine = new ScheduledEngine(inOrder([BAD, GOOD]), log, [1, 2]);
  const verifier = new GatedVerifier(judge, log);
  const result = await prove(
    { code: FILE, samples: 6, fixTurns: 0 },
    { engine, verifier, options: { exhaustive: true } },
  );
  assert.equal(result.status, 'proved');
  assert.equal(engine.calls.length, 3);
  assert.deepEqual(
    result.attempts.map((a) => [a.sample, a.verdict?.status]),
    [0, 1, 2, 3, 4, 5].map((k) => [k, k === 1 ? 'valid' : 'lean_error']),
  );
});

test('an engine without a schedule decodes every sample of a round at once, as before', async () => {
  const engine = new ScriptedEngine(() => BAD);
  const events: ProveEvent[] = [];
  await prove({ code: FILE, samples: 3, fixTurns: 0 }, { engine, verifier: new StandInVerifier(judge) }, (e) =>
    events.push(e),
  );
  assert.deepEqual(
    engine.calls.map((c) => c.conversations.length),
    [3],
  );
  const started = events.find((e) => e.type === 'started');
  assert.ok(started?.type === 'started');
  assert.deepEqual(
    [started.schedule?.rows, started.schedule?.waves, started.schedule?.from, started.schedule?.calibration],
    [3, 1, 'engine', undefined],
  );
  assert.equal(
    started.schedule?.text,
    'scripted-test-double: all 3 samples at once (scripted-test-double has no calibrated schedule)',
  );
});

test('a seeded request (evaluation --seed) draws distinct samples in every wave, not the first wave again', async () => {
  // Engines draw row r of a call from (seed, r) (onnx rowRandom, llama.cpp seed + r, servers seed + r): a later wave
  // of the same prompt with the same seed would decode the first wave's samples again.
  const log: string[] = [];
  const engine = new ScheduledEngine(inOrder([]), log, [1, 2]);
  const verifier = new GatedVerifier(judge, log);
  await prove({ code: FILE, samples: 5, fixTurns: 0 }, { engine, verifier, options: { seed: 1234, exhaustive: true } });
  assert.equal(engine.calls.length, 3);
  const draws = engine.calls.flatMap((c) => c.conversations.map((_, row) => `${c.options.seed}:${row}`));
  assert.equal(new Set(draws).size, 5, `(seed, row) draws: ${draws.join(', ')}`);
  // Under seed + row, the waves draw exactly what all five decoded at once would have.
  const seedPlusRow = engine.calls.flatMap((c) => c.conversations.map((_, row) => c.options.seed! + row));
  assert.deepEqual(seedPlusRow, [1234, 1235, 1236, 1237, 1238]);
});

test("a wave whose decoding fails ends the request: the earlier wave's Lean checks are stopped, not left running", async () => {
  const log: string[] = [];
  /** Test double: the scheduled engine whose second wave fails (an engine error: out of memory, a lost GPU). */
  class FailingSecondWave extends ScheduledEngine {
    override async generate(conversations: ChatMessage[][], options: SamplingOptions, onDelta?: OnDelta) {
      if (this.calls.length === 1) {
        this.calls.push({ conversations, options });
        throw new Error('the engine failed');
      }
      return super.generate(conversations, options, onDelta);
    }
  }
  const engine = new FailingSecondWave(inOrder([]), log, [1, 2]);
  // Lean takes long over the first wave's answers (a test double honouring the abort signal).
  const verifier = new StandInVerifier(() => ({ verdict: leanError([mismatch]), delayMs: 5000 }));
  const t0 = Date.now();
  await assert.rejects(prove({ code: FILE, samples: 4, fixTurns: 0 }, { engine, verifier }), /the engine failed/);
  assert.equal(verifier.calls.length, 2, "the first wave's two answers went to Lean");
  await new Promise((r) => setTimeout(r, 20));
  assert.equal(verifier.aborted, 2, "the first wave's checks were stopped with the request");
  assert.ok(Date.now() - t0 < 4000);
});

test("fewer samples than the scheduled rows: the expected first proof is the cost model's at the rows that decode", async () => {
  const log: string[] = [];
  const engine = new ScheduledEngine(inOrder([]), log, [1, 2, 4, 8]); // the GPU-like device takes 8 rows
  assert.equal((await engine.schedule())!.rows, 8);
  const events: ProveEvent[] = [];
  await prove({ code: FILE, samples: 4, fixTurns: 0 }, { engine, verifier: new GatedVerifier(judge, log) }, (e) =>
    events.push(e),
  );
  const started = events.find((e) => e.type === 'started');
  assert.ok(started?.type === 'started' && started.schedule?.calibration);
  const s = started.schedule;
  assert.equal(s.rows, 4);
  const atFour = expectedFirstProof(s.calibration!, 4).expectedSeconds;
  const atEight = expectedFirstProof(s.calibration!, 8).expectedSeconds;
  assert.ok(atFour > atEight * 1.2, 'the two row counts differ enough to tell apart');
  assert.equal(s.expectedFirstProofSeconds, atFour);
});
