// The evaluation routes over real HTTP (express app on 127.0.0.1).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import express from 'express';
import type { AddressInfo } from 'node:net';
import { openDb } from '../../backend/store/db';
import { EvalStore } from '../../backend/store/eval';
import { createEvalRouter } from '../../backend/api/evalRoutes';
import { loadBenchmark } from '../../backend/eval/benchmark';
import { runEvaluation } from '../../backend/eval/runner';
import { minif2fDir, scriptedAttempter } from './helpers';

test('GET /v1/eval/runs, a report, its plots and a comparison; unknown runs are 404', async (t) => {
  const store = new EvalStore(openDb(':memory:'));
  const problems = loadBenchmark(minif2fDir(), { split: 'test', limit: 5 }).problems;
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
  for (const name of ['base', 'tuned']) {
    store.openRun(name, config, problems);
    await runEvaluation({ store, run: name, attempt: scriptedAttempter(), concurrency: 2 });
  }
  const app = express();
  app.use(createEvalRouter(store));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  t.after(() => server.close());
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const runs = (await (await fetch(`${base}/v1/eval/runs`)).json()) as { runs: { name: string; complete: number }[] };
  assert.deepEqual(
    runs.runs.map((r) => [r.name, r.complete]),
    [
      ['base', 5],
      ['tuned', 5],
    ],
  );
  const report = (await (await fetch(`${base}/v1/eval/runs/base`)).json()) as {
    metrics: { problems: number; samples: number };
  };
  assert.deepEqual([report.metrics.problems, report.metrics.samples], [5, 2]);
  const plot = await fetch(`${base}/v1/eval/runs/base/pass-at-k.svg`);
  assert.match(plot.headers.get('content-type') ?? '', /image\/svg\+xml/);
  assert.match(await plot.text(), /^<svg /);
  assert.equal((await fetch(`${base}/v1/eval/runs/base/by-source.svg`)).status, 200);
  const cmp = (await (await fetch(`${base}/v1/eval/runs/base/compare/tuned`)).json()) as {
    common: number;
    changed: unknown[];
  };
  assert.deepEqual([cmp.common, cmp.changed.length], [5, 0]);
  assert.equal((await fetch(`${base}/v1/eval/runs/base/compare/tuned/pass-at-k.svg`)).status, 200);
  const missing = await fetch(`${base}/v1/eval/runs/nope`);
  assert.equal(missing.status, 404);
  assert.deepEqual(await missing.json(), { detail: "no evaluation run named 'nope'" });
  assert.equal((await fetch(`${base}/v1/eval/runs/base/compare/nope`)).status, 404);
});
