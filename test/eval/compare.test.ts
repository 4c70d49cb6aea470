import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compareReports } from '../../backend/eval/compare';
import { comparisonMarkdown } from '../../backend/eval/markdown';
import type { EvalConfig, EvalReport, ProblemOutcome } from '../../backend/protocol';

const config: EvalConfig = {
  benchmark: 'b',
  split: null,
  model: 'm',
  engine: 'e',
  samples: 4,
  fixTurns: 0,
  temperature: 1,
  topP: 1,
  maxTokens: 10,
  leanTimeout: 60,
};

function report(name: string, outcomes: [string, number, number][]): EvalReport {
  const problems: ProblemOutcome[] = outcomes.map(([id, correct, samples]) => ({
    id,
    source: 'MATHD',
    split: null,
    samples,
    correct,
    correctWithFix: null,
    proof: null,
  }));
  return {
    run: {
      name,
      config: { ...config, model: name },
      createdAt: '',
      problems: problems.length,
      complete: problems.length,
      wallSeconds: 1,
    },
    metrics: {} as EvalReport['metrics'],
    problems,
  };
}

test('compare lists solved-only-by and per-problem changes on the common problems', () => {
  const a = report('base', [
    ['p1', 0, 4],
    ['p2', 2, 4],
    ['p3', 4, 4],
    ['p4', 0, 4],
    ['only_in_a', 1, 4],
  ]);
  const b = report('tuned', [
    ['p1', 1, 4],
    ['p2', 2, 4],
    ['p3', 0, 4],
    ['p4', 0, 4],
    ['only_in_b', 1, 4],
  ]);
  const cmp = compareReports(a, b);
  assert.equal(cmp.common, 4);
  assert.equal(cmp.k, 4);
  assert.deepEqual(cmp.onlyA, ['p3']);
  assert.deepEqual(cmp.onlyB, ['p1']);
  assert.equal(cmp.both, 1);
  assert.equal(cmp.neither, 1);
  assert.deepEqual(
    cmp.changed.map((d) => [d.id, d.delta]),
    [
      ['p1', 1],
      ['p3', -1],
    ],
  );
  // pass@1 over the common problems: A (0 + .5 + 1 + 0)/4, B (.25 + .5 + 0 + 0)/4
  assert.ok(Math.abs(cmp.passAtK[0].a - 0.375) < 1e-12);
  assert.ok(Math.abs(cmp.passAtK[0].b - 0.1875) < 1e-12);
  const md = comparisonMarkdown(cmp);
  assert.match(md, /Only A solves: `p3`/);
  assert.match(
    md,
    /- A on \S+, Lean unknown, verdict strict; B on \S+, Lean unknown, verdict strict/,
    'every report names benchmark, Lean and verdict',
  );
  assert.match(md, /\| `p1` \| MATHD \| 0\/4 \| 1\/4 \| \+100\.0 pts \|/);
});

test('compare uses the smaller sample count and refuses runs with nothing in common', () => {
  const cmp = compareReports(report('a', [['x', 1, 8]]), report('b', [['x', 1, 2]]));
  assert.equal(cmp.k, 2);
  assert.deepEqual(
    cmp.changed.map((d) => d.id),
    ['x'],
  ); // 1/8 vs 1/2 differ at k = 2
  assert.throws(
    () => compareReports(report('a', [['x', 1, 4]]), report('b', [['y', 1, 4]])),
    /no measured problem in common/,
  );
});
