// End to end with the project's other test doubles: `kimina eval run` on the in-process ONNX engine
// loading the scripted model (TEST DOUBLE: real Qwen3 graph whose weights replay fixed answers about
// algebra_example: a bogus proof first, the correct one in the fix turn) and the verifier pool over
// the stand-in REPL (TEST DOUBLE Lean). The benchmark is a JSONL: a miniF2F slice plus algebra_example.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { writeScriptedModel, ALGEBRA_STATEMENT } from '../../backend/demo/models/scriptedModel';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';
import { loadBenchmark } from '../../backend/eval/benchmark';
import { minif2fDir, tempDir } from './helpers';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

test(
  'kimina eval run on the ONNX engine with the scripted model: fix turns counted, other problems filtered',
  { timeout: 240_000 },
  async (t) => {
    const dir = tempDir(t);
    const modelDir = join(dir, 'scripted-model');
    writeScriptedModel(modelDir, { variant: 'fix' });
    const slice = loadBenchmark(minif2fDir(), { split: 'test', limit: 2 }).problems;
    const bench = join(dir, 'bench.jsonl');
    writeFileSync(
      bench,
      [
        ...slice.map((p) => JSON.stringify({ name: p.id, split: 'test', formal_statement: p.code })),
        JSON.stringify({
          name: 'algebra_example',
          split: 'test',
          formal_statement: `import Mathlib\n\n${ALGEBRA_STATEMENT} := by sorry`,
        }),
      ].join('\n') + '\n',
    );
    const args = [
      join(repoRoot, 'backend', 'cli.ts'),
      'eval',
      'run',
      bench,
      '--engine',
      'onnx',
      '--model',
      modelDir,
      '--samples',
      '2',
      '--fix-turns',
      '1',
      '--max-tokens',
      '400',
      '--parallel',
      '2',
      '--db',
      join(dir, 'kimina.db'),
      '--out',
      join(dir, 'out'),
      '--run',
      'onnx',
    ];
    const env = {
      ...process.env,
      ...standInReplEnv(),
      KIMINA_HOME: join(dir, 'home'),
      KIMINA_SANDBOX: 'none',
      KIMINA_MAX_REPLS: '1',
      KIMINA_THREADS: '1',
      KIMINA_LEAN_PROJECT: dir,
    };
    const result = await new Promise<{ code: number | null; out: string; err: string }>((done) => {
      const child = spawn(process.execPath, ['--import', 'tsx', ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      let err = '';
      child.stdout.on('data', (d) => {
        out += d;
      });
      child.stderr.on('data', (d) => {
        err += d;
      });
      child.on('exit', (code) => done({ code, out, err }));
    });
    assert.equal(result.code, 0, result.err);
    assert.match(result.err, /engine: onnx/);
    const report = JSON.parse(readFileSync(join(dir, 'out', 'report.json'), 'utf8'));
    const byId = new Map(
      (report.problems as { id: string; correct: number; correctWithFix: number; samples: number }[]).map((p) => [
        p.id,
        p,
      ]),
    );
    // algebra_example: the bogus first answer fails in Lean, the fix turn's answer is valid.
    assert.deepEqual(byId.get('algebra_example'), {
      ...byId.get('algebra_example'),
      samples: 2,
      correct: 0,
      correctWithFix: 2,
    });
    // miniF2F problems: the scripted answers never state them, so nothing is extracted or sent to Lean.
    for (const p of slice) assert.deepEqual([byId.get(p.id)!.correct, byId.get(p.id)!.correctWithFix], [0, 0]);
    assert.equal(report.metrics.passAtK.at(-1).value, 0);
    assert.ok(Math.abs(report.metrics.passAtKWithFix.at(-1).value - 1 / 3) < 1e-12);
    assert.ok(
      report.metrics.verdicts.filtered > 0 &&
        report.metrics.verdicts.valid > 0 &&
        report.metrics.verdicts.lean_error > 0,
    );
    assert.ok(report.metrics.meanResponseTokens > 10);
    assert.match(result.out, /onnx: 3 problems, pass@2 0\.00 %, with one error-fix turn 33\.33 %/);
  },
);
