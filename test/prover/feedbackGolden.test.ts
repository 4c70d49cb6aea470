// Differential check of the fix-turn message: fixtures/feedback-golden.json holds what the recipe's own
// create_tool_message wrote for the same Lean results (fixtures/feedbackCases.ts), with positions given in
// the recipe's numbering. Our builder takes full-snippet positions and renumbers itself (§6.4).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildFeedback } from '../../backend/prover/feedback';
import { feedbackCases } from './fixtures/feedbackCases';

const golden = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'feedback-golden.json'), 'utf8')) as {
  cases: number;
  seed: number;
  messages: string[];
};

test('snippet numbering: fix messages match the recipe on 150 Lean results (goals, windows, caps, system errors, sorry-only)', () => {
  const cases = feedbackCases(golden.cases, golden.seed);
  cases.forEach((c, i) => {
    const mine = buildFeedback(
      c.code,
      c.verdict,
      { infotree: c.infotree },
      { lineNumbering: 'snippet', infotreeLineOffset: c.windowShift },
    );
    assert.equal(mine, golden.messages[i], `case ${i}`);
  });
  assert.ok(golden.messages.some((m) => m.includes('Goals state before error position: \n')));
  assert.ok(golden.messages.some((m) => m.startsWith('# System Error:\n')));
  assert.ok(golden.messages.some((m) => m === ''));
  assert.ok(
    golden.messages.some((m) => m.includes('# Error 3:')) && !golden.messages.some((m) => m.includes('# Error 4:')),
  );
});
