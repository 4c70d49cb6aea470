// The default fix-turn numbering is the one the released checkpoints were trained on. fixtures/
// released-feedback-golden.json holds what the recipe's own create_tool_message (kimina-prover-rl e16b605e) wrote
// for Lean answers with kimina-lean-server's pre-PR-#56 body positions: 8 real answers recorded in
// leanprover-community/repl's tests (each under 4 header layouts) and 150 generated ones; made by
// fixtures/make-released-golden.py. Here the same answers, moved to full-snippet positions as our verifier reports
// them (infotree left body-relative, as the verifier leaves it), must give the same bytes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ReplMessage, Verdict } from '../../backend/protocol';
import { splitHeader } from '../../backend/lean/header';
import { buildFeedback } from '../../backend/prover/feedback';

interface Case {
  name: string;
  code: string;
  klsHeaderLines: number;
  message: string;
  leanFeedback: { response: { messages?: ReplMessage[]; infotree?: unknown[] } | null; error: string | null };
}
const golden = JSON.parse(readFileSync(join(__dirname, 'fixtures', 'released-feedback-golden.json'), 'utf8')) as {
  cases: Case[];
};

/** The verifier's view of a kimina-lean-server answer: message positions rebased to the full snippet. */
function ours(c: Case): { verdict: Verdict; infotree: unknown } {
  const by = c.klsHeaderLines;
  const move = (p: { line: number; column: number }) => ({ line: p.line + by, column: p.column });
  const messages = (c.leanFeedback.response?.messages ?? []).map((m) => ({
    ...m,
    pos: move(m.pos),
    endPos: m.endPos ? move(m.endPos) : null,
  }));
  const hasError = messages.some((m) => m.severity === 'error');
  const status: Verdict['status'] = hasError ? 'lean_error' : c.leanFeedback.error ? 'timeout_error' : 'sorry';
  return {
    verdict: { status, reason: c.leanFeedback.error ?? 'Lean reported problems.', messages, sorries: [], time: 0.1 },
    infotree: c.leanFeedback.response?.infotree,
  };
}

test("released numbering: the recipe's messages byte for byte on 182 Lean answers (32 recorded, 150 generated)", () => {
  assert.equal(golden.cases.length, 182);
  for (const c of golden.cases) {
    assert.equal(
      splitHeader(c.code).headerLines,
      c.klsHeaderLines,
      `${c.name}: our header split is kimina-lean-server's`,
    );
    const { verdict, infotree } = ours(c);
    assert.equal(buildFeedback(c.code, verdict, { infotree }), c.message, c.name);
  }
  const recorded = golden.cases.filter((c) => c.name.startsWith('repl'));
  assert.equal(recorded.length, 32);
  assert.ok(recorded.every((c) => c.message.includes('# Error 1:')));
  assert.ok(golden.cases.some((c) => c.message.includes('Goals state before error position')));
  assert.ok(golden.cases.some((c) => c.message.startsWith('# System Error:')));
});

test('released vs snippet numbering on the usual layout: the marker sits one line above the error line', () => {
  const c = golden.cases.find((x) => x.name === 'repl Mathlib/test/H20231115_3 #1, header 0')!;
  const { verdict } = ours(c);
  const released = buildFeedback(c.code, verdict);
  const snippet = buildFeedback(c.code, verdict, undefined, { lineNumbering: 'snippet' });
  assert.match(released, /001 >\| \n002 {2}\| example/);
  assert.match(snippet, /001 {2}\| \n002 >\| example/);
});
