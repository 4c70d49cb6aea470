import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import type { Attempt, ProveEvent } from '../../backend/protocol';
import { TerminalView, attemptLine } from '../../backend/prover/terminal';

function sink(isTTY: boolean) {
  const s = new PassThrough() as PassThrough & { isTTY?: boolean; text: () => string };
  s.isTTY = isTTY;
  let data = '';
  s.on('data', (c: Buffer) => {
    data += c.toString();
  });
  s.text = () => data;
  return s;
}

const attempt = (over: Partial<Attempt>): Attempt => ({
  sample: 0,
  turn: 1,
  response: '',
  think: '',
  code: 'c',
  format: { ok: true, error: 'NONE' },
  verdict: null,
  ...over,
});

test('attempt lines say format, tokens, verdict and why no fix turn followed', () => {
  assert.equal(
    attemptLine(
      attempt({
        tokens: 12,
        verdict: { status: 'lean_error', reason: 'Lean reported 1 error.', messages: [], sorries: [], time: 1 },
        fixSkipped: 'feedback_too_long',
      }),
    ),
    'sample 1, turn 1: format ok, 12 tokens; Lean lean_error: Lean reported 1 error. (no fix turn: feedback_too_long)',
  );
  assert.equal(
    attemptLine(
      attempt({
        code: null,
        format: { ok: false, error: 'NO_VALID_LEAN4_CODE_BLOCK' },
        fixSkipped: 'filtered',
        sample: 2,
        turn: 2,
      }),
    ),
    'sample 3, turn 2: format NO_VALID_LEAN4_CODE_BLOCK; Lean nothing to check (no proof found in the answer) (no fix turn: filtered)',
  );
  assert.match(attemptLine(attempt({ finishReason: 'cancelled', fixSkipped: 'cancelled' })), /Lean cancelled$/);
  assert.equal(
    attemptLine(
      attempt({
        tokens: 4000,
        finishReason: 'length',
        cut: "prompt (96 tokens) and answer (4000 tokens) reached the server's context of 4096 tokens",
        code: null,
      }),
    ),
    "sample 1, turn 1: format ok, 4000 tokens; cut short: prompt (96 tokens) and answer (4000 tokens) reached the server's context of 4096 tokens; Lean nothing to check (no proof found in the answer)",
  );
  assert.match(attemptLine(attempt({ finishReason: 'length' })), /; cut short at the token limit; /);
});

const events = (id = 'x'): ProveEvent[] => [
  { type: 'started', id, samples: 2, fixTurns: 1, theorem: 't' },
  { type: 'think', id, sample: 0, turn: 1, delta: 'first li' },
  { type: 'think', id, sample: 1, turn: 1, delta: 'OTHER SAMPLE' },
  { type: 'think', id, sample: 0, turn: 1, delta: 'ne\nsecond' },
  { type: 'progress', id, tokens: 10, tokensPerSecond: 5 },
  { type: 'text', id, sample: 0, turn: 1, delta: 'answer\n' },
  { type: 'attempt', id, attempt: attempt({ tokens: 3 }) },
];

test('piped output: the followed sample streams as is, notes go to stderr', () => {
  const out = sink(false),
    err = sink(false);
  const view = new TerminalView({ out, err, color: false });
  for (const e of events()) view.event(e);
  view.finish({ id: 'x', status: 'proved', proof: 'theorem t : True := by\n  trivial', attempts: [attempt({})] });
  assert.equal(
    out.text(),
    'first line\nsecondanswer\n\nProved. Verified proof:\n\ntheorem t : True := by\n  trivial\n',
  );
  const unterminated = sink(false);
  const v2 = new TerminalView({ out: unterminated, err: sink(false), color: false });
  v2.event({ type: 'text', id: 'x', sample: 0, turn: 1, delta: '```' });
  v2.event({ type: 'attempt', id: 'x', attempt: attempt({}) });
  assert.equal(unterminated.text(), '```\n', 'a note after unterminated text starts a new line');
  assert.ok(
    err
      .text()
      .startsWith('Proving t with 2 samples, up to 1 fix turn.\n── sample 1, turn 1 (showing 1 of the samples) ──\n'),
    err.text(),
  );
  assert.ok(err.text().includes('[10 tokens · 5.0 tok/s]\n'));
  assert.ok(!out.text().includes('OTHER SAMPLE'));
});

test('terminal output: thinking dimmed line by line, progress redrawn in place below it', () => {
  const out = sink(true),
    err = sink(true);
  const view = new TerminalView({ out, err, color: true });
  for (const e of events()) view.event(e);
  view.finish({ id: 'x', status: 'not_proved', proof: null, attempts: [attempt({})] });
  assert.ok(
    out.text().startsWith('\x1b[2mfirst line\x1b[22m\n\x1b[2msecond\x1b[22m\nanswer\n'),
    JSON.stringify(out.text()),
  );
  assert.ok(err.text().includes('\r\x1b[2K10 tokens · 5.0 tok/s'));
  assert.ok(out.text().includes('Not proved.\x1b[22m 1 attempt, none verified by Lean.'));
});
