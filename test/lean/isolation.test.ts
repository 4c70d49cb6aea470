// Failure isolation at the verifier level: a runner that throws for one snippet (a test double)
// costs only that snippet its answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Verifier } from '../../backend/lean/verifier';
import type { RunRequest, RunResult, SnippetRunner } from '../../backend/lean/runner';

/** TEST DOUBLE runner: throws for bodies containing `explode`, answers a clean env otherwise. */
const explodingRunner: SnippetRunner = {
  mode: 'repl',
  async run(req: RunRequest): Promise<RunResult> {
    if (req.body.includes('explode')) throw new Error('runner blew up');
    const audit = new Map(
      req.audit.map((n) => [
        n,
        [
          {
            pos: { line: 1, column: 0 },
            endPos: null,
            severity: 'info' as const,
            data: `'${n}' does not depend on any axioms`,
          },
        ],
      ]),
    );
    return { kind: 'ok', response: { env: 1 }, audit, time: 0.001 };
  },
  stats: () => ({ mode: 'repl', total: 1 }),
  close: async () => {},
};

test("an unexpected exception is that snippet's server_error; the rest of the batch answers", async () => {
  const v = new Verifier({
    runner: explodingRunner,
    policy: { allowed: [], allowNativeDecide: false },
    maxInFlight: 8,
    defaultTimeoutS: 5,
  });
  const [a, b, c] = await v.checkBatch([
    'theorem a : True := trivial',
    'theorem b : True := explode',
    'theorem c : True := trivial',
  ]);
  assert.deepEqual([a.verdict.status, b.verdict.status, c.verdict.status], ['valid', 'server_error', 'valid']);
  assert.match(b.verdict.reason, /runner blew up/);
  assert.equal(v.stats().inFlight, 0);
});

test('a body answer without an env (so no audit could run) is never valid', async () => {
  const { standInVerifier } = await import('./standInVerifier');
  const s = standInVerifier({ maxRepls: 1 });
  try {
    const out = await s.verifier.check('theorem t : 1 = 1 := by simp -- stand_in_no_env');
    assert.equal(out.verdict.status, 'lean_error');
    assert.match(out.verdict.reason, /Could not audit the axioms of 't': no answer/);
  } finally {
    await s.verifier.close();
  }
});
