// `kimina eval` argument handling in-process: bad input is refused with a clear message before any
// engine or Lean starts; report/list/delete/compare work on a stored run.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { run as runEval } from '../../backend/cli/evaluate';
import { readSettings } from '../../backend/settings/settings';
import { openDb } from '../../backend/store/db';
import { EvalStore } from '../../backend/store/eval';
import { loadBenchmark } from '../../backend/eval/benchmark';
import { runEvaluation } from '../../backend/eval/runner';
import { minif2fDir, scriptedAttempter, tempDir } from './helpers';

/** `kimina eval ARGS` as cli.ts runs it: with the settings read once. */
const run = (args: string[]) => runEval(args, readSettings());

async function captured(fn: () => Promise<number>): Promise<{ code: number; out: string }> {
  const lines: string[] = [];
  const log = console.log;
  const err = console.error;
  console.log = (...a: unknown[]) => {
    lines.push(a.join(' '));
  };
  console.error = () => {};
  try {
    return { code: await fn(), out: lines.join('\n') };
  } finally {
    console.log = log;
    console.error = err;
  }
}

test('bad arguments are refused before anything starts', async (t) => {
  const db = join(tempDir(t), 'k.db');
  const bench = minif2fDir();
  await assert.rejects(run(['run', bench, '--db', db]), /needs --model NAME/);
  await assert.rejects(run(['run', '--model', 'm', '--db', db]), /needs a benchmark/);
  await assert.rejects(
    run(['run', bench, '--model', 'm', '--engine', 'tgi', '--db', db]),
    /--engine must be one of auto, onnx, openai, llama, vllm, got 'tgi'/,
  );
  await assert.rejects(
    run(['run', bench, '--model', 'm', '--samples', '0', '--db', db]),
    /--samples must be a whole number from 1 to 1024/,
  );
  await assert.rejects(
    run(['run', bench, '--model', 'm', '--fix-turns', '2', '--db', db]),
    /--fix-turns must be a whole number from 0 to 1/,
  );
  await assert.rejects(
    run(['run', bench, '--model', 'm', '--top-p', '3', '--db', db]),
    /--top-p must be from 0.01 to 1/,
  );
  await assert.rejects(
    run(['run', bench, '--model', 'm', '--split', 'test', '--parallel', '0', '--db', db]),
    /--parallel must be a whole number/,
  );
  await assert.rejects(run(['run', join(bench, 'nope'), '--model', 'm', '--db', db]), /benchmark not found/);
  await assert.rejects(
    run(['fetch', 'putnam']),
    /knows AI-MO\/minif2f_test \(the default\) and 'minif2f', got 'putnam'/,
  );
  await assert.rejects(run(['fetch', 'minif2f', '--method', 'ftp']), /--method must be git, archive or auto/);
  await assert.rejects(run(['report', 'missing', '--db', db]), /no evaluation run named 'missing'/);
  await assert.rejects(run(['compare', 'a', '--db', db]), /needs two runs/);
  assert.equal((await captured(() => run(['bogus-subcommand']))).code, 2);
  assert.equal((await captured(() => run(['--help']))).code, 0);
});

test('report, list, compare and delete work on stored runs', async (t) => {
  const dir = tempDir(t);
  const db = join(dir, 'k.db');
  const store = new EvalStore(openDb(db));
  const problems = loadBenchmark(minif2fDir(), { split: 'test', limit: 6 }).problems;
  const config = {
    benchmark: minif2fDir(),
    split: 'test',
    model: 'scripted',
    engine: 'openai',
    samples: 2,
    fixTurns: 1,
    temperature: 1,
    topP: 0.95,
    maxTokens: 100,
    leanTimeout: 60,
  };
  for (const name of ['alpha', 'beta']) {
    store.openRun(name, config, problems);
    await runEvaluation({ store, run: name, attempt: scriptedAttempter(), concurrency: 2 });
  }
  const list = await captured(() => run(['list', '--db', db]));
  assert.match(list.out, /^alpha {2}scripted {2}6\/6 problems × 2/m);
  const report = await captured(() => run(['report', 'alpha', '--db', db, '--out', join(dir, 'r')]));
  assert.match(report.out, /alpha: 6 problems, pass@2/);
  assert.ok(existsSync(join(dir, 'r', 'by-source.png')));
  const cmp = await captured(() =>
    run(['compare', 'alpha', join(dir, 'r', 'report.json'), '--db', db, '--out', join(dir, 'c')]),
  );
  assert.match(cmp.out, /6 common problems; pass@2/);
  assert.ok(existsSync(join(dir, 'c', 'compare.md')));
  // A complete run needs no engine: rerunning it only rewrites the report.
  const again = await captured(() =>
    run([
      'run',
      minif2fDir(),
      '--split',
      'test',
      '--limit',
      '6',
      '--samples',
      '2',
      '--model',
      'scripted',
      '--temperature',
      '1',
      '--top-p',
      '0.95',
      '--max-tokens',
      '100',
      '--run',
      'alpha',
      '--db',
      db,
      '--out',
      join(dir, 'again'),
    ]),
  );
  assert.equal(again.code, 0);
  assert.ok(existsSync(join(dir, 'again', 'report.md')));
  assert.equal((await captured(() => run(['delete', 'beta', '--db', db]))).code, 0);
  await assert.rejects(run(['delete', 'beta', '--db', db]), /no evaluation run named 'beta'/);
});
