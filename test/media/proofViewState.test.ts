// The Proof view's reducer: think deltas accumulate per sample and turn, the block closes when the answer
// starts ("Thought for N s"), attempts and verdicts attach to their turn, the fix turn is labelled as such.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Attempt, EditorProveResult, LspProveEvent, ProveSchedule, Verdict } from '../../backend/protocol';
import {
  candidateLines,
  emptyState,
  fileLineMapper,
  formatLabel,
  formatWords,
  reduce,
  resultLook,
  stoppedLabel,
  thinkLabel,
  turnLabel,
  verdictLabel,
  viewTexts,
  type ViewState,
} from '../../media/proofViewState';

const id = 'p1';
const ev = (event: LspProveEvent, at: number) => ({ type: 'event' as const, event, at });
const bad: Verdict = {
  status: 'lean_error',
  reason: "unknown identifier 'bogus_lemma'",
  messages: [
    { pos: { line: 6, column: 8 }, endPos: null, severity: 'error', data: "unknown identifier 'bogus_lemma'" },
  ],
  sorries: [],
  time: 0.1,
};
const good: Verdict = {
  status: 'valid',
  reason: 'Lean accepted',
  axioms: ['propext'],
  messages: [],
  sorries: [],
  time: 0.1,
};
const attempt = (turn: number, verdict: Verdict): Attempt => ({
  sample: 0,
  turn,
  response: '<think>t</think>',
  think: 't',
  code: 'theorem t : True := by\n  trivial',
  format: { ok: true, error: 'NONE' },
  verdict,
});

function run(messages: Parameters<typeof reduce>[1][]): ViewState {
  return messages.reduce(reduce, emptyState());
}

test('think deltas stream into one block per sample and turn, which closes when the answer starts', () => {
  const s = run([
    { type: 'start', id, title: 'Prove', mode: 'theorem', file: 'A.lean', startedAt: 0 },
    ev({ type: 'think', id, sample: 0, turn: 1, delta: 'Let me ' }, 1000),
    ev({ type: 'think', id, sample: 0, turn: 1, delta: 'think.' }, 2000),
  ]);
  assert.equal(s.turns.length, 1);
  assert.equal(s.turns[0].think, 'Let me think.');
  assert.equal(thinkLabel(s.turns[0]), 'Thinking…');
  const answered = reduce(s, ev({ type: 'text', id, sample: 0, turn: 1, delta: '```lean4' }, 4400));
  assert.equal(thinkLabel(answered.turns[0]), 'Thought for 3 s');
  assert.equal(s.turns[0].thinkEnd, undefined, 'the reducer never mutates the previous state');
});

test('attempts and verdicts attach to their turn; the fix turn is labelled; progress is kept', () => {
  const s = run([
    { type: 'start', id, title: 'Prove', mode: 'theorem', file: 'A.lean', startedAt: 0 },
    ev({ type: 'stage', id, message: 'Proving theorem t' }, 0),
    ev({ type: 'think', id, sample: 0, turn: 1, delta: 'a' }, 0),
    ev({ type: 'attempt', id, attempt: attempt(1, bad) }, 1000),
    ev({ type: 'think', id, sample: 0, turn: 2, delta: 'b' }, 1500),
    ev({ type: 'progress', id, tokens: 120, tokensPerSecond: 30.5 }, 1600),
    ev({ type: 'attempt', id, attempt: { ...attempt(2, bad), verdict: null } }, 2500),
    ev({ type: 'verdict', id, sample: 0, turn: 2, verdict: good }, 2600),
  ]);
  assert.deepEqual(s.stages, ['Proving theorem t']);
  assert.deepEqual(s.turns.map(turnLabel), ['Sample 1 · Turn 1', 'Sample 1 · Turn 2 (error fix)']);
  assert.equal(s.turns[0].attempt?.verdict?.status, 'lean_error');
  assert.equal(s.turns[1].attempt?.verdict?.status, 'valid');
  assert.equal(s.tokens, 120);
  assert.equal(verdictLabel(s.turns[0].attempt!).text, "✘ Lean error at line 6: unknown identifier 'bogus_lemma'");
  assert.equal(verdictLabel(s.turns[1].attempt!).text, '✔✔ Lean accepted, axioms clean');
});

test('events of another run are ignored; a new start clears the view', () => {
  const s = run([
    { type: 'start', id, title: 'Prove', mode: 'theorem', file: 'A.lean', startedAt: 0 },
    ev({ type: 'think', id: 'other', sample: 0, turn: 1, delta: 'x' }, 0),
  ]);
  assert.equal(s.turns.length, 0);
  const again = reduce(reduce(s, ev({ type: 'think', id, sample: 0, turn: 1, delta: 'y' }, 0)), {
    type: 'start',
    id: 'p2',
    title: 'Again',
    mode: 'goal',
    file: 'A.lean',
    startedAt: 5,
  });
  assert.equal(again.turns.length, 0);
  assert.equal(again.mode, 'goal');
});

test('the result closes open think blocks, fills attempts the stream missed, and Accept state resolves', () => {
  const result: EditorProveResult = {
    id,
    status: 'proved',
    proof: 'p',
    tactics: 'trivial',
    attempts: [attempt(1, good)],
    mode: 'theorem',
    declaration: null,
    edit: { range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } }, newText: '' },
  };
  const s = run([
    { type: 'start', id, title: 'Prove', mode: 'theorem', file: 'A.lean', startedAt: 0 },
    { type: 'result', result, canAccept: true, at: 2000 },
  ]);
  assert.equal(s.turns.length, 1);
  assert.equal(thinkLabel(s.turns[0]), 'Thought for 1 s');
  assert.equal(s.canAccept, true);
  // a repair starts from the user's own proof: it is labelled as theirs and has no think block to show
  const repair = run([
    { type: 'start', id, title: 'Repair', mode: 'repair', file: 'A.lean', startedAt: 0 },
    {
      type: 'result',
      result: { ...result, mode: 'repair', attempts: [{ ...attempt(1, good), user: true, think: '' }] },
      canAccept: false,
      at: 2000,
    },
  ]);
  assert.equal(turnLabel(repair.turns[0]), 'Your proof, as in the file');
  assert.equal(thinkLabel(repair.turns[0]), undefined);
  assert.equal(
    reduce(s, {
      type: 'result',
      result: { ...result, declaration: { name: 'algebra_example', range: result.edit!.range } },
      canAccept: true,
      at: 2000,
    }).title,
    'Proof of algebra_example',
  );
  const accepted = reduce(s, { type: 'resolved', outcome: 'accepted' });
  assert.equal(accepted.canAccept, false);
  assert.equal(accepted.resolved, 'accepted');
});

test('format failures are said in words, never as the enum name', () => {
  const a: Attempt = {
    ...attempt(1, good),
    format: { ok: false, error: 'NO_VALID_LEAN4_CODE_BLOCK' },
    verdict: null,
    code: null,
  };
  assert.equal(
    verdictLabel(a).text,
    '✘ Not checked: the answer has no complete lean4 code block with the proof, so no proof could be taken from it',
  );
  for (const error of Object.keys(formatWords) as (keyof typeof formatWords)[]) {
    if (error === 'NONE') continue;
    const label = formatLabel({ ...a, format: { ok: false, error } })!;
    assert.doesNotMatch(label, /[A-Z]{2,}_[A-Z_]+/, label);
    assert.doesNotMatch(verdictLabel({ ...a, format: { ok: false, error } }).text, /[A-Z]{2,}_[A-Z_]+/);
  }
  // Lean checked the proof anyway: the format is a note beside the verdict.
  assert.match(
    formatLabel({ ...attempt(1, bad), format: { ok: false, error: 'GENERATION_REPEATS' } })!,
    /still checked/,
  );
});

test('a cancelled answer is stopped, not a format failure', () => {
  const cut: Attempt = {
    ...attempt(1, good),
    verdict: null,
    code: null,
    finishReason: 'cancelled',
    format: { ok: false, error: 'NONE', stopped: true },
  };
  assert.equal(formatLabel(cut), undefined);
  assert.deepEqual(verdictLabel(cut), {
    text: '■ Stopped before the answer ended; it was not checked',
    ok: false,
    stopped: true,
  });
  // From an older server that still format-checked the cut answer: the cut wins over the format error.
  const old: Attempt = { ...cut, format: { ok: false, error: 'NO_VALID_LEAN4_CODE_BLOCK' }, fixSkipped: 'cancelled' };
  assert.equal(formatLabel(old), undefined);
  assert.equal(verdictLabel(old).text, '■ Stopped: the proof was cancelled');
});

test('a cancelled run marks the turns still streaming as stopped by the cancel', () => {
  const s = run([
    { type: 'start', id, title: 'Prove', mode: 'theorem', file: 'A.lean', startedAt: 0 },
    ev({ type: 'think', id, sample: 0, turn: 1, delta: 'step 1 ' }, 0),
    {
      type: 'result',
      result: { id, status: 'cancelled', proof: null, attempts: [], mode: 'theorem', declaration: null, edit: null },
      canAccept: false,
      at: 1000,
    },
  ]);
  assert.equal(stoppedLabel(s.turns[0]), '■ Stopped: the proof was cancelled');
});

test("Lean's line numbers are the file's: the candidate's target declaration starts at its file line", () => {
  const code =
    'import Mathlib\n\ntheorem earlier : True := trivial\n\ntheorem t (x : Nat) : x = x := by\n  exact bogus';
  const lineOf = fileLineMapper(code, { name: 't', kind: 'theorem', line: 20 });
  assert.equal(lineOf(5), 21, 'the theorem line');
  assert.equal(lineOf(6), 22);
  assert.equal(lineOf(3), undefined, 'an earlier declaration carried as context');
  const v: Verdict = { ...bad, messages: [{ ...bad.messages[0], pos: { line: 6, column: 2 } }] };
  assert.equal(
    verdictLabel({ ...attempt(1, v), code }, {}, lineOf).text,
    "✘ Lean error at line 22: unknown identifier 'bogus_lemma'",
  );
});

test('a verifier that cannot run is named as such', () => {
  const missing: Verdict = {
    status: 'server_error',
    reason: 'could not start the Lean REPL (lake env repl): spawn lake ENOENT',
    messages: [],
    sorries: [],
    time: 0,
    leanMissing: true,
  };
  assert.match(verdictLabel(attempt(1, missing)).text, /^✘ Lean is missing: /);
  assert.match(verdictLabel(attempt(1, { ...missing, leanMissing: undefined })).text, /^✘ Lean could not run: /);
  assert.equal(
    stoppedLabel({ attempt: { ...attempt(1, good), verdict: null, fixSkipped: 'verifier_failed' } }),
    '■ Not checked: Lean could not run',
  );
});

test('think text splits into prose and fenced Lean code, also while a fence is still open', async () => {
  const { splitFences } = await import('../../media/proofViewState');
  assert.deepEqual(splitFences('Start.\n```tactics\nhave h : 1 = 1 := rfl\n```\nThen.'), [
    { kind: 'prose', text: 'Start.\n' },
    { kind: 'code', lang: 'tactics', text: 'have h : 1 = 1 := rfl' },
    { kind: 'prose', text: '\nThen.' },
  ]);
  assert.deepEqual(splitFences('Now:\n```lean4\ntheorem t'), [
    { kind: 'prose', text: 'Now:\n' },
    { kind: 'code', lang: 'lean4', text: 'theorem t' },
  ]);
  assert.deepEqual(splitFences('no code'), [{ kind: 'prose', text: 'no code' }]);
});

test('samples stopped by the first verified proof say so and why, not "checking with Lean"', () => {
  const s = run([
    { type: 'start', id, title: 'Prove', mode: 'theorem', file: 'A.lean', startedAt: 0 },
    ev({ type: 'think', id, sample: 0, turn: 1, delta: 'a' }, 0),
    ev({ type: 'think', id, sample: 1, turn: 1, delta: 'b' }, 0),
    ev({ type: 'think', id, sample: 2, turn: 1, delta: 'c' }, 0),
    ev({ type: 'verdict', id, sample: 1, turn: 1, verdict: good }, 1000),
    ev({ type: 'stopped', id, sample: 0, turn: 1, reason: 'proved', bySample: 1 }, 1000),
    ev({ type: 'stopped', id, sample: 2, turn: 1, reason: 'proved', bySample: 1 }, 1000),
  ]);
  const [s0, , s2] = s.turns;
  // Still streaming when stopped: the think block closes and the row says why.
  assert.equal(thinkLabel(s0), 'Thought for 1 s');
  assert.equal(stoppedLabel(s0), '■ Stopped: sample 2 was verified first, so this one was not finished');
  // Its attempt then arrives without a verdict (decoding or the check was cancelled).
  const cancelled: Attempt = { ...attempt(1, good), verdict: null, finishReason: 'cancelled', fixSkipped: 'proved' };
  const after = reduce(s, ev({ type: 'attempt', id, attempt: cancelled }, 1200));
  const label = verdictLabel(after.turns[0].attempt!, after.turns[0]);
  assert.deepEqual(label, {
    text: '■ Stopped: sample 2 was verified first, so this one was not finished',
    ok: false,
    stopped: true,
  });
  assert.doesNotMatch(label.text, /checking with Lean/);
  assert.ok(stoppedLabel(s2));
  // From the result alone (no stopped event seen): fixSkipped says why.
  assert.equal(
    verdictLabel(cancelled).text,
    '■ Stopped: another sample was verified first, so this one was not finished',
  );
  assert.equal(verdictLabel({ ...cancelled, fixSkipped: 'cancelled' }).text, '■ Stopped: the proof was cancelled');
  // A turn still waiting for Lean, a judged one and a format failure are not "stopped".
  assert.equal(
    verdictLabel({ ...cancelled, fixSkipped: undefined, finishReason: 'stop' }).text,
    '… checking with Lean',
  );
  assert.equal(
    verdictLabel({ ...cancelled, fixSkipped: undefined }).text,
    '■ Stopped before the answer ended; it was not checked',
  );
  assert.equal(stoppedLabel({ stopped: { reason: 'proved', bySample: 1 }, attempt: attempt(1, bad) }), undefined);
  // A cut-off answer is stopped even when an older server format-checked it.
  assert.match(
    verdictLabel({ ...cancelled, format: { ok: false, error: 'NO_VALID_THINK_BLOCK' } }, s0).text,
    /^■ Stopped/,
  );
  assert.match(
    verdictLabel({ ...cancelled, finishReason: 'stop', format: { ok: false, error: 'NO_VALID_THINK_BLOCK' } }, s0).text,
    /^✘ Not checked: the answer has no complete thinking block/,
  );
});

test("goal mode: the candidate's lemma has no line numbers (it stands nowhere in the file), the header is context", () => {
  // what editorProve.ts proves in goal mode: the file's header, then the sorry's goal stated as `<name>_goal`
  const code = [
    'import Mathlib',
    '',
    'open Real',
    '',
    'theorem algebra_goal_goal (x : ℝ) (h₀ : 2 * x + 3 = 11) : 2 * x = 8 := by',
    '  have h₁ : 2 * x = 8 := by linarith',
    '  exact bogus_lemma h₁',
  ].join('\n');
  const lines = candidateLines(code, 'goal', { name: 'algebra_goal', kind: 'theorem', line: 14 });
  for (let l = 1; l <= 7; l++) assert.equal(lines.lineOf(l), undefined, `candidate line ${l} has no file number`);
  assert.deepEqual(
    [1, 2, 3, 4, 5, 6, 7].map(lines.context),
    [true, true, true, true, false, false, false],
    'the header is folded as context; the lemma is shown',
  );
  const v: Verdict = { ...bad, messages: [{ ...bad.messages[0], pos: { line: 7, column: 8 } }] };
  const a = { ...attempt(1, v), code };
  assert.equal(
    verdictLabel(a, {}, lines.lineOf, lines.context).text,
    "✘ Lean error in the goal's lemma: unknown identifier 'bogus_lemma'",
  );
  // the view's texts for a goal-mode run say no snippet line number
  const s = run([
    { type: 'start', id, title: 'Goal at line 16', mode: 'goal', file: 'A.lean', startedAt: 0 },
    ev({ type: 'target', id, name: 'algebra_goal', kind: 'theorem', line: 14 }, 0),
    ev({ type: 'attempt', id, attempt: a }, 1000),
  ]);
  const texts = viewTexts(s, 2000);
  assert.ok(texts.includes("✘ Lean error in the goal's lemma: unknown identifier 'bogus_lemma'"), texts.join('\n'));
  assert.ok(!texts.some((t) => /at line 7\b/.test(t)), texts.join('\n'));
  // theorem mode keeps the file's numbers
  const theorem = candidateLines(code.replace('algebra_goal_goal', 'algebra_goal'), 'theorem', {
    name: 'algebra_goal',
    kind: 'theorem',
    line: 14,
  });
  assert.equal(theorem.lineOf(5), 15);
  assert.equal(theorem.lineOf(7), 17);
  assert.equal(theorem.context(3), true);
  assert.equal(theorem.context(5), false);
});

test('the schedule: shown as a stage, the wave in the running line, and the estimate from the cost model', () => {
  const schedule: ProveSchedule = {
    engine: 'onnx',
    samples: 4,
    rows: 2,
    waves: 2,
    from: 'calibration',
    calibration: { a: 25, m: 20, b: 8e-3, now: false },
    expectedFirstProofSeconds: 600,
    worstCaseSeconds: 3600,
    text: 'onnx: 2 of 4 samples at once, 2 waves (calibrated: 25.0 ms + 20.0 ms per further row + 8.00 µs per cached token a step)',
  };
  const s = run([
    { type: 'start', id, title: 'Prove', mode: 'theorem', file: 'A.lean', startedAt: 0 },
    ev({ type: 'started', id, samples: 4, fixTurns: 1, schedule }, 0),
    ev({ type: 'progress', id, tokens: 900, tokensPerSecond: 20, wave: { index: 2, of: 2, rows: 2 } }, 1000),
  ]);
  assert.deepEqual(s.stages, [`Decoding: ${schedule.text}`]);
  // 2 minutes in: the expected first proof 8 minutes away, the worst case 58 minutes (the model, not the speed).
  assert.equal(
    resultLook(s, 120_000).text,
    '2 min 0 s · wave 2 of 2, 2 rows at once · 900 tokens · 20.0 tok/s · first proof expected in about 8 min · at most about 58 min left (cost model)',
  );
  assert.match(
    resultLook(s, 700_000).text,
    /past the expected first proof · at most about 48 min left \(cost model\)$/,
  );
  // Without a calibrated model (an engine without a schedule): the longest at the measured speed, as before.
  const plain = run([
    {
      type: 'start',
      id,
      title: 'Prove',
      mode: 'theorem',
      file: 'A.lean',
      startedAt: 0,
      budget: { preset: 'custom', maxTokens: 1000, samples: 2, fixTurns: 0, text: '' },
    },
    ev(
      {
        type: 'started',
        id,
        samples: 2,
        fixTurns: 0,
        schedule: {
          ...schedule,
          from: 'engine',
          calibration: undefined,
          expectedFirstProofSeconds: undefined,
          worstCaseSeconds: undefined,
        },
      },
      0,
    ),
    ev({ type: 'progress', id, tokens: 1000, tokensPerSecond: 10 }, 1000),
  ]);
  assert.equal(resultLook(plain, 10_000).text, '10 s · 1000 tokens · 10.0 tok/s · at most about 2 min left');
});
