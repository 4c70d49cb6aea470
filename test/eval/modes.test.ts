// Evaluation under every verdict mode of the registry (lean/verdictModes.ts): each answer carries every mode's
// judgement, metrics have figures per mode, the report has one row per mode (the headline's first) and a list
// of what only each non-default mode accepts, the CLI summary one line per non-default mode, and runs stored
// with the two recipe columns before per-mode judgements existed are read into the same shape.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Attempt, BenchmarkProblem, EvalConfig, Verdict, VerdictMode } from '../../backend/protocol';
import { DEFAULT_VERDICT_MODE, VERDICT_MODES, verdictModeRules } from '../../backend/lean/verdictModes';
import { outcomeOf } from '../../backend/eval/proveAttempt';
import { judgeInEveryMode, modesHeadlineFirst } from '../../backend/eval/modes';
import { buildReport } from '../../backend/eval/report';
import { reportMarkdown } from '../../backend/eval/markdown';
import { headline } from '../../backend/cli/evaluate';
import { migrate, openDb } from '../../backend/store/db';
import { EvalStore, evalMigrations, type StoredAttempt } from '../../backend/store/eval';

const CONFIG: EvalConfig = {
  benchmark: '/x/bench.jsonl',
  split: null,
  model: 'm',
  engine: 'openai',
  samples: 2,
  fixTurns: 0,
  temperature: 1,
  topP: 0.95,
  maxTokens: 1000,
  leanTimeout: 60,
};
const problems: BenchmarkProblem[] = ['p1', 'p2'].map((id) => ({
  id,
  split: null,
  source: 'OTHER',
  code: `theorem ${id} : True := by sorry`,
  theorem: id,
  origin: 'x',
}));

const verdict = (status: Verdict['status'], extra: Partial<Verdict> = {}): Verdict =>
  ({ status, reason: `${status} reason`, messages: [], sorries: [], time: 0.1, ...extra }) as Verdict;

/** An attempt of the prove loop with this verdict (undefined: nothing extracted). */
const attempt = (v: Verdict | undefined): Attempt =>
  ({
    sample: 0,
    turn: 1,
    response: 'r',
    code: v ? 'code' : null,
    format: { error: 'NONE' },
    verdict: v,
    tokens: 5,
  }) as unknown as Attempt;

test('every answer is judged by every mode of the registry, the default mode agreeing with `valid`', () => {
  const shapes: (Verdict | undefined)[] = [
    verdict('valid'),
    verdict('sorry'),
    verdict('rejected', { axioms: ['myAxiom'] }), // Lean ran it; only the audit refused it
    verdict('rejected'), // refused before Lean
    verdict('lean_error', { messages: [{ severity: 'error', data: 'x' }] as Verdict['messages'] }),
    verdict('timeout_error'),
    undefined,
  ];
  for (const v of shapes) {
    const o = outcomeOf(attempt(v), 0);
    assert.deepEqual(Object.keys(o.modes ?? {}).sort(), [...VERDICT_MODES].sort());
    assert.equal(o.modes?.[DEFAULT_VERDICT_MODE]?.valid, o.valid);
    for (const m of VERDICT_MODES)
      assert.equal(o.modes?.[m]?.valid === true, verdictModeRules[m].accepts(v ?? null), `${m} on ${v?.status}`);
  }
  assert.deepEqual(
    judgeInEveryMode(null),
    Object.fromEntries(VERDICT_MODES.map((m) => [m, verdictModeRules[m].judge(null)])),
  );
});

test('metrics, report rows, only-accepted lists and the CLI summary come from the registry, one per mode', () => {
  const store = new EvalStore(openDb(':memory:'));
  store.openRun('r', CONFIG, problems);
  // p1: valid by every mode; p2: an axiom only the audit refuses (Lean ran it), then nothing extracted
  const rec = (problem: string, sample: number, v: Verdict | undefined): StoredAttempt => ({
    ...outcomeOf(attempt(v), sample),
    problem,
    response: null,
  });
  store.recordSamples('r', 'p1', [0, 1], [rec('p1', 0, verdict('valid')), rec('p1', 1, verdict('valid'))]);
  store.recordSamples(
    'r',
    'p2',
    [0, 1],
    [rec('p2', 0, verdict('rejected', { axioms: ['myAxiom'] })), rec('p2', 1, undefined)],
  );
  const report = buildReport(store, 'r');
  assert.deepEqual(Object.keys(report.metrics.modes ?? {}).sort(), [...VERDICT_MODES].sort());
  const defaultFigures = report.metrics.modes?.[DEFAULT_VERDICT_MODE];
  assert.deepEqual(
    defaultFigures?.passAtK,
    report.metrics.passAtK,
    "the default mode's figures are the top-level ones",
  );
  assert.equal(defaultFigures?.unknown, 0);
  const others = VERDICT_MODES.filter((m) => m !== DEFAULT_VERDICT_MODE);
  assert.deepEqual(Object.keys(report.onlyAcceptedBy ?? {}).sort(), [...others].sort());
  for (const m of others) {
    const accepts = verdictModeRules[m].accepts(verdict('rejected', { axioms: ['myAxiom'] }));
    assert.equal(report.onlyAcceptedBy?.[m]?.length, accepts ? 1 : 0, `${m}: the audited answer`);
  }

  for (const headlineMode of VERDICT_MODES) {
    const md = reportMarkdown({ ...report, run: { ...report.run, config: { ...CONFIG, verdictMode: headlineMode } } });
    const rows = [...md.matchAll(/^\| `m` \| (\w+)( \(headline\))? \|/gm)].map((r) => [r[1], Boolean(r[2])]);
    assert.deepEqual(
      rows,
      modesHeadlineFirst(headlineMode).map((m) => [m, m === headlineMode]),
      `one row per mode, ${headlineMode} first`,
    );
    assert.match(md, new RegExp(`verdict mode: \\*\\*${headlineMode}\\*\\*`));
    for (const m of others)
      assert.match(md, new RegExp(`The ${verdictModeRules[m].name} \\(${verdictModeRules[m].by}: `));
  }
  const lines = headline(report);
  assert.match(lines[0], new RegExp(`under the ${verdictModeRules[DEFAULT_VERDICT_MODE].name}$`));
  assert.deepEqual(
    lines.slice(1, 1 + others.length).map((l) => l.split(':')[0]),
    others.map((m) => `${verdictModeRules[m].name} (${verdictModeRules[m].by})`),
  );
});

test('a run stored with the two recipe columns is read into per-mode judgements by the migration', () => {
  const db = openDb(':memory:');
  migrate(db, 'eval', evalMigrations.slice(0, 2)); // the schema before per-mode judgements
  db.prepare("INSERT INTO eval_runs (name, config, created_at) VALUES ('old', ?, 'now')").run(JSON.stringify(CONFIG));
  for (const [i, p] of problems.entries())
    db.prepare(
      "INSERT INTO eval_problems (run, problem, position, source, theorem, code, origin) VALUES ('old', ?, ?, 'OTHER', ?, ?, 'x')",
    ).run(p.id, i, p.theorem, p.code);
  const legacy: [string, number, number, number | null, string | null][] = [
    // problem, sample, valid, recipe_valid, recipe_reason
    ['p1', 0, 1, 1, null],
    ['p1', 1, 0, 1, 'strict verdict sorry: admit'],
    ['p2', 0, 0, null, 'not run in Lean: refused'],
    ['p2', 1, 0, 0, null],
  ];
  for (const [problem, sample, valid, rv, rr] of legacy) {
    db.prepare("INSERT INTO eval_samples (run, problem, sample, finished_at) VALUES ('old', ?, ?, 'now')").run(
      problem,
      sample,
    );
    db.prepare(
      `INSERT INTO eval_attempts (run, problem, sample, turn, format_error, status, valid, tokens, chars, generate_ms,
       verify_ms, lean_seconds, code, recipe_valid, recipe_reason) VALUES ('old', ?, ?, 1, 'NONE', ?, ?, 1, 1, 1, 1, 0.1, 'c', ?, ?)`,
    ).run(problem, sample, valid ? 'valid' : 'sorry', valid, rv, rr);
  }
  // a row stored before the recipe columns existed: no judgement but the default mode's
  db.prepare("INSERT INTO eval_runs (name, config, created_at) VALUES ('older', ?, 'now')").run(JSON.stringify(CONFIG));
  db.prepare(
    "INSERT INTO eval_problems (run, problem, position, source, theorem, code, origin) VALUES ('older', 'p1', 0, 'OTHER', 'p1', 'c', 'x')",
  ).run();
  db.prepare("INSERT INTO eval_samples (run, problem, sample, finished_at) VALUES ('older', 'p1', 0, 'now')").run();
  db.prepare(
    `INSERT INTO eval_attempts (run, problem, sample, turn, format_error, status, valid, tokens, chars, generate_ms,
     verify_ms, lean_seconds, code) VALUES ('older', 'p1', 0, 1, 'NONE', 'valid', 1, 1, 1, 1, 1, 0.1, 'c')`,
  ).run();

  const store = new EvalStore(db); // applies the remaining migrations
  const recipe: VerdictMode = 'recipe';
  assert.deepEqual(
    store.attempts('old').map((a) => a.modes?.[recipe]),
    [
      { valid: true, reason: null },
      { valid: true, reason: 'strict verdict sorry: admit' },
      { valid: null, reason: 'not run in Lean: refused' },
      { valid: false, reason: null },
    ],
  );
  const report = buildReport(store, 'old');
  assert.equal(report.metrics.modes?.[recipe]?.solved, 0.5);
  assert.equal(report.metrics.modes?.[recipe]?.unknown, 1);
  assert.deepEqual(
    report.onlyAcceptedBy?.[recipe]?.map((o) => [o.problem, o.sample, o.reason]),
    [['p1', 1, 'strict verdict sorry: admit']],
  );
  const older = buildReport(store, 'older');
  assert.equal(store.attempts('older')[0].modes, undefined);
  assert.deepEqual(Object.keys(older.metrics.modes ?? {}), [DEFAULT_VERDICT_MODE], 'only the default mode is known');
  assert.deepEqual(older.onlyAcceptedBy, {});
  assert.match(reportMarkdown(older), new RegExp(`^\\| \`m\` \\| ${DEFAULT_VERDICT_MODE} \\(headline\\) \\|`, 'm'));
});
