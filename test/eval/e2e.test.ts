// End to end: `kimina eval run` as a child process over a slice of miniF2F, with the real OpenAI
// engine against the stand-in OpenAI server (TEST DOUBLE model) and the real verifier pool over the
// stand-in REPL (TEST DOUBLE Lean). Killed mid-run, resumed, reported, compared.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openDbReadonly } from '../../backend/store/db';
import { startStandInOpenAIServer } from '../model/standInOpenAIServer';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';
import { loadBenchmark } from '../../backend/eval/benchmark';
import { minif2fDir, scriptedKind, tempDir } from './helpers';
import { scriptedAnswer, statementOf, theoremOf } from './scriptedServerAnswers';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const cli = [process.execPath, '--import', 'tsx', join(repoRoot, 'backend', 'cli.ts')];
const PROBLEMS = 8;
const SAMPLES = 4;

/** The stand-in server, slow (10 ms per chunk) until `fast()`: the first run must still be going when it is killed. */
async function withServer(t: { after(fn: () => Promise<void> | void): void }) {
  const options = {
    models: [{ id: 'kimina-stand-in', max_model_len: 32768 }],
    answer: scriptedAnswer,
    chunkChars: 24,
    chunkDelayMs: 10,
  };
  const server = await startStandInOpenAIServer(options);
  t.after(() => server.close());
  return Object.assign(server, {
    fast: () => {
      options.chunkDelayMs = 0;
    },
  });
}

function env(dir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    ...standInReplEnv(),
    KIMINA_HOME: join(dir, 'home'),
    KIMINA_SANDBOX: 'none',
    KIMINA_MAX_REPLS: '2',
    KIMINA_LEAN_PROJECT: dir,
  };
}

function evalArgs(
  dir: string,
  baseUrl: string,
  o: { seed: number; run: string; out: string } = { seed: 7, run: 'e2e', out: 'report' },
): string[] {
  return [
    ...cli.slice(1),
    'eval',
    'run',
    // the built-in benchmark by name (data/minif2f-lean4), as a user types it
    'minif2f-lean4',
    '--split',
    'test',
    '--limit',
    String(PROBLEMS),
    '--samples',
    String(SAMPLES),
    '--fix-turns',
    '1',
    '--model',
    'kimina-stand-in',
    '--engine',
    'openai',
    '--base-url',
    baseUrl,
    '--db',
    join(dir, 'kimina.db'),
    '--parallel',
    '4',
    '--seed',
    String(o.seed),
    '--run',
    o.run,
    '--out',
    join(dir, o.out),
    '--max-tokens',
    '4096',
  ];
}

/** Runs the CLI without blocking this process (the stand-in server lives here). */
function runCli(
  args: string[],
  environment: NodeJS.ProcessEnv,
): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(cli[0], args, { env: environment, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('exit', (status) => done({ status, stdout, stderr }));
  });
}

function finishedSamples(dbFile: string): { problem: string; sample: number }[] {
  if (!existsSync(dbFile)) return [];
  const db = openDbReadonly(dbFile);
  try {
    return db.prepare("SELECT problem, sample FROM eval_samples WHERE run = 'e2e'").all() as {
      problem: string;
      sample: number;
    }[];
  } catch {
    return [];
  } finally {
    db.close();
  }
}

test(
  'kimina eval run: killed mid-run, resumed to the end, reports and plots written',
  { timeout: 180_000 },
  async (t) => {
    const dir = tempDir(t);
    const server = await withServer(t);
    const dbFile = join(dir, 'kimina.db');

    // First run: SIGKILL (no clean-up at all) once a few problems are stored.
    const child = spawn(cli[0], evalArgs(dir, server.baseUrl), { env: env(dir), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    let atKill: { problem: string; sample: number }[] = [];
    for (let i = 0; i < 600; i++) {
      atKill = finishedSamples(dbFile);
      if (atKill.length >= 2 * SAMPLES) break;
      if (child.exitCode !== null) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    await exited;
    atKill = finishedSamples(dbFile);
    const doneAtKill = new Set(atKill.map((s) => s.problem));
    assert.ok(doneAtKill.size >= 2, `problems stored before the kill: ${doneAtKill.size}\n${stderr}`);
    assert.ok(doneAtKill.size < PROBLEMS, `the run finished before it could be killed\n${stderr}`);
    const requestsBefore = server.requests.length;
    server.fast();

    // Second run: the same command continues.
    const second = await runCli(evalArgs(dir, server.baseUrl), env(dir));
    assert.equal(second.status, 0, second.stderr);
    assert.match(second.stderr, new RegExp(`${doneAtKill.size} already complete`));
    const all = finishedSamples(dbFile);
    assert.equal(all.length, PROBLEMS * SAMPLES);
    assert.equal(new Set(all.map((s) => `${s.problem}#${s.sample}`)).size, PROBLEMS * SAMPLES);

    // Problems finished before the kill were not asked again.
    const resumed = server.requests.slice(requestsBefore).filter((r) => r.path.endsWith('/chat/completions'));
    const askedAgain = resumed.map((r) =>
      theoremOf(statementOf(r.body.messages as { role: string; content: string }[])),
    );
    assert.ok(askedAgain.length > 0);
    for (const id of doneAtKill) assert.ok(!askedAgain.includes(id), `${id} was proved again after the resume`);

    // The numbers follow from the script: easy and fixable problems solved, half by seed, hopeless never.
    const report = JSON.parse(readFileSync(join(dir, 'report', 'report.json'), 'utf8'));
    const problems = loadBenchmark(minif2fDir(), { split: 'test', limit: PROBLEMS }).problems;
    for (const p of report.problems as { id: string; correct: number; correctWithFix: number; samples: number }[]) {
      const kind = scriptedKind(p.id);
      assert.equal(p.samples, SAMPLES);
      if (kind === 'easy') assert.deepEqual([p.correct, p.correctWithFix], [SAMPLES, SAMPLES], p.id);
      if (kind === 'fixable') assert.deepEqual([p.correct, p.correctWithFix], [0, SAMPLES], p.id);
      if (kind === 'hopeless') assert.deepEqual([p.correct, p.correctWithFix], [0, 0], p.id);
      if (kind === 'half') assert.equal(p.correct, p.correctWithFix, p.id);
    }
    assert.equal(report.problems.length, problems.length);
    assert.equal(report.run.complete, PROBLEMS);
    assert.ok(report.metrics.leanSecondsPerCheck !== null);
    assert.ok(report.metrics.meanResponseTokens > 0);
    assert.ok(report.metrics.formatErrors.turn1.NONE > 0);
    const md = readFileSync(join(dir, 'report', 'report.md'), 'utf8');
    assert.match(md, /\| Model \| Verdict \| pass@4 \| pass@4 \+ 1 error-fix turn \|/);
    // Every report names the benchmark, the Lean version and the verdict mode, and says whether it is comparable.
    assert.match(md, /- Benchmark: \*\*miniF2F-lean4 \(built-in, yangky11\/miniF2F-lean4@5746b7d\)\*\*/);
    assert.match(md, /verdict mode: \*\*strict\*\*/);
    assert.match(
      md,
      /Comparable to the published table: \*\*no\*\* \(the built-in miniF2F-lean4 \(yangky11\/miniF2F-lean4@5746b7d, Lean v4\.24\.0 statements, no informal statements\) is not the published table's AI-MO\/minif2f_test/,
    );
    assert.match(md, /\| `kimina-stand-in` \| recipe \|/);
    for (const png of ['pass-at-k.png', 'by-source.png']) {
      const bytes = readFileSync(join(dir, 'report', png));
      assert.equal(bytes.subarray(1, 4).toString(), 'PNG');
      assert.ok(bytes.length > 5000, `${png} has ${bytes.length} bytes`);
    }
    assert.match(second.stdout, /e2e: 8 problems, pass@4/);

    // A second model setting on the same problems, then the comparison.
    const other = await runCli(evalArgs(dir, server.baseUrl, { seed: 8, run: 'e2e-seed8', out: 'report8' }), env(dir));
    assert.equal(other.status, 0, other.stderr);
    const cmp = await runCli(
      [...cli.slice(1), 'eval', 'compare', 'e2e', 'e2e-seed8', '--db', dbFile, '--out', join(dir, 'cmp')],
      env(dir),
    );
    assert.equal(cmp.status, 0, cmp.stderr);
    assert.match(cmp.stdout, /8 common problems; pass@4/);
    const comparison = JSON.parse(readFileSync(join(dir, 'cmp', 'compare.json'), 'utf8'));
    // Every problem whose count differs between the two runs' own reports is listed, with those counts.
    const report8 = JSON.parse(readFileSync(join(dir, 'report8', 'report.json'), 'utf8'));
    const countsA = new Map((report.problems as { id: string; correct: number }[]).map((p) => [p.id, p.correct]));
    const countsB = new Map((report8.problems as { id: string; correct: number }[]).map((p) => [p.id, p.correct]));
    const differing = [...countsA.keys()].filter((id) => countsA.get(id) !== countsB.get(id)).sort();
    assert.deepEqual(comparison.changed.map((d: { id: string }) => d.id).sort(), differing);
    for (const d of comparison.changed as { id: string; a: { correct: number }; b: { correct: number } }[]) {
      assert.deepEqual([d.a.correct, d.b.correct], [countsA.get(d.id), countsB.get(d.id)]);
      assert.equal(scriptedKind(d.id), 'half'); // only seed-dependent problems can differ
    }
    assert.ok(existsSync(join(dir, 'cmp', 'compare-pass-at-k.png')));
    assert.match(readFileSync(join(dir, 'cmp', 'compare.md'), 'utf8'), /## Per-problem differences/);
  },
);

test(
  'kimina eval run: Ctrl-C stops cleanly with exit 130 and the next run finishes the rest',
  { timeout: 120_000 },
  async (t) => {
    const dir = tempDir(t);
    const server = await startStandInOpenAIServer({
      models: [{ id: 'kimina-stand-in', max_model_len: 32768 }],
      answer: scriptedAnswer,
      chunkChars: 24,
      chunkDelayMs: 8,
    });
    t.after(() => server.close());
    const dbFile = join(dir, 'kimina.db');
    const child = spawn(cli[0], evalArgs(dir, server.baseUrl), { env: env(dir), stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    for (let i = 0; i < 600 && finishedSamples(dbFile).length < SAMPLES && child.exitCode === null; i++)
      await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    const code = await exited;
    assert.equal(code, 130, stderr);
    assert.match(stderr, /stopping: unfinished problems are dropped/);
    assert.match(stderr, /rerun the same command to continue run 'e2e'/);
    const stored = new Set(finishedSamples(dbFile).map((s) => s.problem)).size;
    assert.ok(stored >= 1 && stored < PROBLEMS, `stored ${stored}`);
    const db = openDbReadonly(dbFile);
    const wall = (db.prepare("SELECT wall_ms FROM eval_runs WHERE name = 'e2e'").get() as { wall_ms: number }).wall_ms;
    db.close();
    assert.ok(wall > 0, 'the stopped session kept its wall time');
    const rest = await runCli(evalArgs(dir, server.baseUrl), env(dir));
    assert.equal(rest.status, 0, rest.stderr);
    assert.equal(finishedSamples(dbFile).length, PROBLEMS * SAMPLES);
  },
);
