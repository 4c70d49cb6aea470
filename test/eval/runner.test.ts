import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDb } from '../../backend/store/db';
import { EvalStore } from '../../backend/store/eval';
import { loadBenchmark } from '../../backend/eval/benchmark';
import { runEvaluation } from '../../backend/eval/runner';
import { buildReport } from '../../backend/eval/report';
import { writeReport } from '../../backend/eval/writeReports';
import type { EvalConfig, EvalProgress } from '../../backend/protocol';
import { minif2fDir, scriptedAttempter, scriptedKind, tempDir } from './helpers';

const config = (over: Partial<EvalConfig> = {}): EvalConfig => ({
  benchmark: minif2fDir(),
  split: 'test',
  model: 'scripted-test-double',
  engine: 'scripted',
  samples: 4,
  fixTurns: 1,
  temperature: 1,
  topP: 0.95,
  maxTokens: 1024,
  leanTimeout: 60,
  ...over,
});

function slice(limit: number) {
  return loadBenchmark(minif2fDir(), { split: 'test', limit }).problems;
}

test('a run attempts every problem, respects the concurrency limit and reports progress', async () => {
  const store = new EvalStore(openDb(':memory:'));
  const problems = slice(12);
  store.openRun('r1', config(), problems);
  const inFlight = { now: 0, max: 0 };
  const progress: EvalProgress[] = [];
  const out = await runEvaluation({
    store,
    run: 'r1',
    attempt: scriptedAttempter({ delayMs: 5, inFlight }),
    concurrency: 3,
    onProgress: (p) => progress.push(p),
  });
  assert.deepEqual(out, { finished: 12, complete: true, stopped: false });
  assert.equal(inFlight.max, 3);
  assert.equal(progress.at(-1)!.done, 12);
  const expectSolved = problems.filter((p) => scriptedKind(p.id) !== 'hopeless').length;
  assert.equal(progress.at(-1)!.solved, expectSolved);
  assert.equal(store.summary('r1').complete, 12);

  const report = buildReport(store, 'r1');
  const m = report.metrics;
  const kinds = problems.map((p) => scriptedKind(p.id));
  const share = (pred: (k: string) => boolean) => kinds.filter(pred).length / kinds.length;
  // pass@1: easy 1, half 0.5; with fix: fixable 1 too; pass@4: anything with a valid sample.
  assert.ok(Math.abs(m.passAtK[0].value - (share((k) => k === 'easy') + share((k) => k === 'half') / 2)) < 1e-12);
  assert.ok(Math.abs(m.passAtK[3].value - share((k) => k === 'easy' || k === 'half')) < 1e-12);
  assert.ok(Math.abs(m.passAtKWithFix![3].value - share((k) => k !== 'hopeless')) < 1e-12);
  assert.equal(
    m.formatErrors.turn1.NO_VALID_LEAN4_CODE_BLOCK,
    share((k) => k === 'hopeless'),
  );
  assert.equal(m.meanResponseTokens > 100, true);
  assert.equal(m.leanSecondsPerCheck!.median, 0.5);
  assert.equal(
    m.bySource.reduce((s, r) => s + r.problems, 0),
    12,
  );
});

test('an interrupted run resumes: finished problems are not redone and the result equals a straight run', async () => {
  const store = new EvalStore(openDb(':memory:'));
  const problems = slice(10);
  store.openRun('resume', config(), problems);
  const ctl = new AbortController();
  const calls: { id: string; samples: number[] }[] = [];
  let seen = 0;
  const first = await runEvaluation({
    store,
    run: 'resume',
    attempt: scriptedAttempter({ delayMs: 5, calls }),
    concurrency: 2,
    signal: ctl.signal,
    onProgress: (p) => {
      if (p.done >= 4 && seen++ === 0) ctl.abort();
    },
  });
  assert.equal(first.stopped, true);
  assert.equal(first.complete, false);
  const doneBefore = store.summary('resume').complete;
  assert.ok(doneBefore >= 4 && doneBefore < 10, `finished ${doneBefore}`);

  const again: { id: string; samples: number[] }[] = [];
  const second = await runEvaluation({
    store,
    run: 'resume',
    attempt: scriptedAttempter({ calls: again }),
    concurrency: 2,
  });
  assert.equal(second.complete, true);
  assert.equal(second.finished, 10 - doneBefore);
  const finishedFirst = new Set(
    store
      .problems('resume')
      .map((p) => p.id)
      .filter((id) => calls.some((c) => c.id === id)),
  );
  assert.ok(again.every((c) => c.samples.join() === '0,1,2,3'));
  assert.equal(again.length, 10 - doneBefore);
  assert.ok(finishedFirst.size >= doneBefore);

  const straight = new EvalStore(openDb(':memory:'));
  straight.openRun('straight', config(), problems);
  await runEvaluation({ store: straight, run: 'straight', attempt: scriptedAttempter(), concurrency: 4 });
  assert.deepEqual(buildReport(store, 'resume').problems, buildReport(straight, 'straight').problems);
  assert.deepEqual(buildReport(store, 'resume').metrics.passAtK, buildReport(straight, 'straight').metrics.passAtK);
});

test('raising --samples on an existing run asks only for the missing samples', async () => {
  const store = new EvalStore(openDb(':memory:'));
  const problems = slice(3);
  store.openRun('grow', config({ samples: 2 }), problems);
  await runEvaluation({ store, run: 'grow', attempt: scriptedAttempter(), concurrency: 1 });
  store.openRun('grow', config({ samples: 5 }), problems);
  const calls: { id: string; samples: number[] }[] = [];
  await runEvaluation({ store, run: 'grow', attempt: scriptedAttempter({ calls }), concurrency: 1 });
  assert.deepEqual(
    calls.map((c) => c.samples.join()),
    ['2,3,4', '2,3,4', '2,3,4'],
  );
  assert.ok(buildReport(store, 'grow').problems.every((p) => p.samples === 5));
});

test('a run refuses to resume with other settings, and a changed problem is refused', () => {
  const store = new EvalStore(openDb(':memory:'));
  const problems = slice(2);
  store.openRun('fixed', config(), problems);
  assert.throws(
    () => store.openRun('fixed', config({ temperature: 0.6 }), problems),
    /other settings \(temperature 1 → 0.6\)/,
  );
  assert.throws(
    () => store.openRun('fixed', config(), [{ ...problems[0], code: problems[0].code + '\n' }]),
    /changed since run 'fixed' started/,
  );
  assert.throws(() => store.openRun('bad name!', config(), problems), /may hold only/);
});

test('an attempter failure stops the run with its error and loses no finished problem', async () => {
  const store = new EvalStore(openDb(':memory:'));
  const problems = slice(6);
  store.openRun('fail', config(), problems);
  const good = scriptedAttempter();
  let n = 0;
  await assert.rejects(
    runEvaluation({
      store,
      run: 'fail',
      concurrency: 1,
      attempt: async (p, r, s) => {
        if (n++ === 3) throw new Error('engine went away');
        return good(p, r, s);
      },
    }),
    /engine went away/,
  );
  assert.equal(store.summary('fail').complete, 3);
  await assert.rejects(
    runEvaluation({ store, run: 'fail', concurrency: 1, attempt: async () => [] }),
    /4 samples asked, 0 answered/,
  );
  await assert.rejects(
    runEvaluation({
      store,
      run: 'fail',
      concurrency: 2,
      attempt: async (p, r, s) => (await good(p, r, s)).map((o) => ({ ...o, sample: o.sample + 10 })),
    }),
    /attempt for sample 10, which was not asked for/,
  );
  assert.equal(store.summary('fail').complete, 3);
});

test('report files are written: Markdown table, JSON, SVG and PNG plots', async (t) => {
  const dir = tempDir(t);
  const store = new EvalStore(openDb(join(dir, 'kimina.db')));
  store.openRun('files', config(), slice(16));
  await runEvaluation({ store, run: 'files', attempt: scriptedAttempter(), concurrency: 4 });
  const report = buildReport(store, 'files');
  const written = writeReport(report, join(dir, 'out'));
  for (const name of ['report.md', 'report.json', 'pass-at-k.svg', 'pass-at-k.png', 'by-source.svg', 'by-source.png']) {
    assert.ok(existsSync(join(dir, 'out', name)), name);
  }
  assert.equal(written.length, 6);
  const md = readFileSync(join(dir, 'out', 'report.md'), 'utf8');
  assert.match(md, /\| Model \| Verdict \| pass@4 \| pass@4 \+ 1 error-fix turn \|/);
  assert.match(md, /Kimina-Prover-RL-1\.7B \| 76\.23 % \| 77\.87 %/);
  const json = JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8'));
  assert.deepEqual(json.metrics.passAtK, report.metrics.passAtK);
  const png = readFileSync(join(dir, 'out', 'pass-at-k.png'));
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(png.readUInt32BE(16), 1080); // 720 px at zoom 1.5
  assert.match(readFileSync(join(dir, 'out', 'by-source.svg'), 'utf8'), /<svg[^>]*>[\s\S]*AIME[\s\S]*<\/svg>/);
});

test('whole responses are stored only with keepResponses, and read back only on request', async () => {
  const store = new EvalStore(openDb(':memory:'));
  store.openRun('keep', config({ samples: 1 }), slice(2));
  await runEvaluation({ store, run: 'keep', attempt: scriptedAttempter(), concurrency: 1, keepResponses: true });
  assert.ok(store.attempts('keep').every((a) => a.response === null));
  assert.ok(store.attempts('keep', true).every((a) => a.response?.startsWith('answer ')));
  store.openRun('drop', config({ samples: 1 }), slice(2));
  await runEvaluation({ store, run: 'drop', attempt: scriptedAttempter(), concurrency: 1 });
  assert.ok(store.attempts('drop', true).every((a) => a.response === null));
  assert.deepEqual(
    [...store.solvedProblems('keep')].sort(),
    slice(2)
      .filter((p) => scriptedKind(p.id) !== 'hopeless')
      .map((p) => p.id)
      .sort(),
  );
  assert.equal(store.deleteRun('keep'), true);
  assert.equal(store.attempts('keep', true).length, 0);
  assert.equal(
    store
      .listRuns()
      .map((r) => r.name)
      .join(),
    'drop',
  );
});

test('a run can work on a subset of its problems; the others keep what they have', async () => {
  const store = new EvalStore(openDb(':memory:'));
  const problems = slice(6);
  store.openRun('subset', config({ samples: 2 }), problems);
  const calls: { id: string; samples: number[] }[] = [];
  const out = await runEvaluation({
    store,
    run: 'subset',
    attempt: scriptedAttempter({ calls }),
    concurrency: 2,
    only: problems.slice(0, 2).map((p) => p.id),
  });
  assert.deepEqual(out, { finished: 2, complete: true, stopped: false });
  assert.deepEqual(
    calls.map((c) => c.id).sort(),
    problems
      .slice(0, 2)
      .map((p) => p.id)
      .sort(),
  );
  assert.equal(store.summary('subset').complete, 2);
  assert.equal(buildReport(store, 'subset').metrics.problems, 2); // the report covers what was measured
});
