import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ReplMessage, Verdict } from '../../backend/protocol';
import { buildFeedback, goalsAt, windowLines } from '../../backend/prover/feedback';
import { planFixTurn } from '../../backend/prover/fixTurn';
import { FAILING_CODE, FIX_MESSAGE, FIX_MESSAGE_RELEASED, TYPE_MISMATCH } from '../../backend/demo/kiminaExamples';

/** These cases check the corrected numbering (marker on the real line); the released default has its own golden. */
const SNIPPET = { lineNumbering: 'snippet' } as const;

function verdict(
  messages: ReplMessage[],
  status: Verdict['status'] = 'lean_error',
  reason = 'Lean reported errors.',
): Verdict {
  return { status, reason, messages, sorries: [], time: 0.1 };
}
const mismatch: ReplMessage = {
  severity: 'error',
  pos: { line: 5, column: 2 },
  endPos: { line: 5, column: 10 },
  data: TYPE_MISMATCH,
};
/** An infotree shaped like the REPL's: nested nodes with syntax ranges and goals. */
const infotree = [
  {
    node: {
      stx: { range: { start: { line: 3, column: 0 }, finish: { line: 5, column: 10 } } },
      goalsBefore: ['outer goal'],
    },
    children: [
      {
        node: {
          stx: { range: { start: { line: 5, column: 2 }, finish: { line: 5, column: 10 } } },
          goalsBefore: ['x : ℝ\nh₀ : 2 * x + 3 = 11\nh₁ : 2 * x = 8\n⊢ x = 4'],
          goalsAfter: [],
        },
      },
      {
        node: {
          stx: { range: { start: { line: 4, column: 2 }, finish: { line: 4, column: 36 } } },
          goalsBefore: ['have goal'],
        },
      },
    ],
  },
];

test('§8.3: the fix message byte for byte (goals from the infotree, marker on the real line)', () => {
  assert.equal(buildFeedback(FAILING_CODE, verdict([mismatch]), { infotree }, SNIPPET), FIX_MESSAGE);
});

test('§8.3 under the released numbering (the default): same text, marker one line up, goals from the body-relative infotree', () => {
  const body = JSON.parse(
    JSON.stringify(infotree)
      .replaceAll('"line":5', '"line":3')
      .replaceAll('"line":4', '"line":2')
      .replaceAll('"line":3,"column":0', '"line":1,"column":0'),
  ) as unknown;
  const released = buildFeedback(FAILING_CODE, verdict([mismatch]), { infotree: body });
  assert.equal(released, FIX_MESSAGE_RELEASED);
  assert.match(released, /001 {2}\| \n002 {2}\| theorem[^\n]*\n003 >\| {3}have/);
});

test('an infotree relative to the body is matched with the header offset', () => {
  const shifted = JSON.parse(
    JSON.stringify(infotree)
      .replaceAll('"line":5', '"line":3')
      .replaceAll('"line":4', '"line":2')
      .replaceAll('"line":3,"column":0', '"line":1,"column":0'),
  ) as unknown;
  assert.equal(
    buildFeedback(FAILING_CODE, verdict([mismatch]), { infotree: shifted }, { ...SNIPPET, infotreeLineOffset: 2 }),
    FIX_MESSAGE,
  );
  assert.ok(
    !buildFeedback(FAILING_CODE, verdict([mismatch]), { infotree: shifted }, SNIPPET).includes('Goals'),
    'unmatched ranges give no goals',
  );
});

test('without an infotree there is no goal section', () => {
  const expected = FIX_MESSAGE.replace(/Goals state before error position: \n[\s\S]*?\n\n/, '');
  assert.equal(buildFeedback(FAILING_CODE, verdict([mismatch]), undefined, SNIPPET), expected);
  assert.ok(!expected.includes('Goals'));
});

test('at most 3 errors, warnings skipped, numbered # Error i:', () => {
  const err = (line: number, data: string): ReplMessage => ({
    severity: 'error',
    pos: { line, column: 0 },
    endPos: null,
    data,
  });
  const warn: ReplMessage = { severity: 'warning', pos: { line: 3, column: 0 }, endPos: null, data: 'unused' };
  const out = buildFeedback(
    FAILING_CODE,
    verdict([warn, err(3, 'e1'), err(4, 'e2'), err(5, 'e3'), err(5, 'e4')]),
    undefined,
    SNIPPET,
  );
  assert.deepEqual(out.match(/# Error \d:/g), ['# Error 1:', '# Error 2:', '# Error 3:']);
  assert.ok(!out.includes('e4') && !out.includes('unused'));
  // Error on window line 2 (the theorem line): window 001-004.
  assert.ok(
    out.startsWith(
      '# Error 1:\nError message: \ne1\n\nLean 4 code snippet with error:\n```lean4\n001  | \n002 >| theorem',
    ),
  );
});

test('window numbering drops leading import lines only; count_heartbeats in is removed', () => {
  const code =
    'import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\ncount_heartbeats in\ntheorem t : True := by\n  bad';
  assert.deepEqual(windowLines(code).lines.slice(0, 2), ['', 'set_option maxHeartbeats 400000']);
  const out = buildFeedback(
    code,
    verdict([{ severity: 'error', pos: { line: 8, column: 2 }, endPos: null, data: ' unknown tactic ' }]),
    undefined,
    SNIPPET,
  );
  assert.equal(
    out,
    '# Error 1:\nError message: \nunknown tactic\n\nLean 4 code snippet with error:\n```lean4\n' +
      '004  | \n005  | theorem t : True := by\n006 >|   bad\n```\n',
  );
});

test('system errors, sorry-only failures and errors without position', () => {
  assert.equal(
    buildFeedback(FAILING_CODE, verdict([], 'timeout_error', 'Lean REPL command timed out in 60 seconds')),
    '# System Error:\nError message: \nLean REPL command timed out in 60 seconds\n\n',
  );
  assert.equal(buildFeedback(FAILING_CODE, verdict([], 'sorry', 'The proof uses sorry.')), '');
  const noPos = { severity: 'error', data: 'kernel error' } as unknown as ReplMessage;
  assert.equal(buildFeedback(FAILING_CODE, verdict([noPos])), '# Error 1:\nError message: \nkernel error\n\n');
});

test('goalsAt picks the closest enclosed node, goalsAfter when goalsBefore is empty', () => {
  assert.deepEqual(goalsAt(infotree, { line: 5, column: 2 }, { line: 5, column: 10 }), [
    'x : ℝ\nh₀ : 2 * x + 3 = 11\nh₁ : 2 * x = 8\n⊢ x = 4',
  ]);
  assert.equal(goalsAt(infotree, { line: 5, column: 2 }, null), null);
  assert.equal(goalsAt('not a tree', { line: 1, column: 0 }, { line: 1, column: 1 }), null);
  const afterOnly = [
    {
      node: {
        stx: { range: { start: { line: 1, column: 0 }, finish: { line: 1, column: 4 } } },
        goalsBefore: [],
        goalsAfter: ['⊢ after'],
      },
    },
  ];
  assert.deepEqual(goalsAt(afterOnly, { line: 1, column: 0 }, { line: 1, column: 4 }), ['⊢ after']);
});

const engine = (tokens: number) => ({ countPromptTokens: async () => tokens });
const turn1 = [
  { role: 'system' as const, content: 's' },
  { role: 'user' as const, content: 'u' },
];

test('fix turn: [system, user, assistant, user(feedback)] and the recipe filters in order', async () => {
  const ok = await planFixTurn({
    conversation: turn1,
    response: 'answer',
    feedback: FIX_MESSAGE,
    maxFixTurns: 1,
    engine: engine(100),
  });
  assert.ok(ok.ok);
  assert.deepEqual(
    ok.conversation.map((m) => m.role),
    ['system', 'user', 'assistant', 'user'],
  );
  assert.equal(ok.conversation[3].content, FIX_MESSAGE);
  const plan = (over: object) =>
    planFixTurn({ conversation: turn1, response: 'a', feedback: 'f', maxFixTurns: 1, engine: engine(100), ...over });
  assert.deepEqual(await plan({ feedback: null }), { ok: false, reason: 'valid' });
  assert.deepEqual(await plan({ feedback: 'filtered' }), { ok: false, reason: 'filtered' });
  assert.deepEqual(await plan({ feedback: 'x'.repeat(3001) }), { ok: false, reason: 'feedback_too_long' });
  assert.equal((await plan({ feedback: 'x'.repeat(3000) })).ok, true);
  // Characters as the recipe's Python counts them (code points): 3000 astral letters are 6000 UTF-16 units.
  assert.equal((await plan({ feedback: '𝕜'.repeat(3000) })).ok, true);
  assert.deepEqual(await plan({ feedback: '𝕜'.repeat(3001) }), { ok: false, reason: 'feedback_too_long' });
  assert.deepEqual(await plan({ maxFixTurns: 0 }), { ok: false, reason: 'exceed_max_turn' });
  assert.deepEqual(await plan({ engine: engine(8193) }), { ok: false, reason: 'max_prompt_token_len_exceeded' });
  assert.equal((await plan({ engine: engine(8192) })).ok, true);
  const turn2 = [...ok.conversation];
  assert.deepEqual(await plan({ conversation: turn2 }), { ok: false, reason: 'exceed_max_turn' });
  assert.equal((await plan({ conversation: turn2, maxFixTurns: 2 })).ok, true);
});
