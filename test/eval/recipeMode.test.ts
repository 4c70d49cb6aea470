// The recipe's benchmark and verdict: `kimina eval fetch` gets AI-MO/minif2f_test through the datasets server's
// /rows pages (a TEST DOUBLE here: a real HTTP server on 127.0.0.1 serving 244 rows shaped like the dataset's
// columns, name / informal_prefix / formal_statement), the prompts are prepare_data.py's, every answer is judged
// both ways (strict and kimina-client's rule), reports give both pass@k figures with the answers only the recipe
// rule accepts, and say whether the figure is comparable to the published table.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BenchmarkProblem, EvalConfig, Verdict } from '../../backend/protocol';
import { loadBenchmark } from '../../backend/eval/benchmark';
import { benchmarkName, comparability, leanVersionOf } from '../../backend/eval/comparable';
import { reportMarkdown } from '../../backend/eval/markdown';
import { buildReport } from '../../backend/eval/report';
import { fetchMinif2fTest, minif2fTestPrompts } from '../../backend/eval/recipeBenchmark';
import { builtinMinif2fDir } from '../../backend/eval/builtin';
import { recipeVerdictOf } from '../../backend/lean/verdictModes';
import { run as runEval } from '../../backend/cli/evaluate';
import { readSettings } from '../../backend/settings/settings';
import { buildPrompt } from '../../backend/prover/prompt';
import { openDb } from '../../backend/store/db';
import { EvalStore, type StoredAttempt } from '../../backend/store/eval';
import { tempDir } from './helpers';

const row = (i: number) => ({
  name: `mathd_algebra_${i}`,
  informal_prefix: `/-- What is $x$ if $2x + 3 = ${11 + i}$? Show that it is ${(8 + i) / 2}.-/\n`,
  formal_statement: `import Mathlib\nimport Aesop\n\nset_option maxHeartbeats 400000\n\nopen BigOperators Real Nat Topology Rat\n\ntheorem mathd_algebra_${i} (x : ℝ) (h₀ : 2 * x + 3 = ${11 + i}) : x = ${(8 + i) / 2} := by\n`,
});

async function standInDatasetsServer(rows: number) {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    requests.push(url.pathname + url.search);
    if (
      url.pathname !== '/rows' ||
      url.searchParams.get('dataset') !== 'AI-MO/minif2f_test' ||
      url.searchParams.get('split') !== 'train'
    ) {
      res.writeHead(404).end();
      return;
    }
    const offset = Number(url.searchParams.get('offset'));
    const length = Math.min(100, Number(url.searchParams.get('length')));
    const page = Array.from({ length: Math.max(0, Math.min(length, rows - offset)) }, (_, k) => ({
      row_idx: offset + k,
      row: row(offset + k),
    }));
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ rows: page, num_rows_total: rows }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: () => new Promise((r) => server.close(r)),
  };
}

test("kimina eval fetch: AI-MO/minif2f_test in pages, 244 problems with informal statements, the recipe's prompts", async (t) => {
  const dir = tempDir(t);
  const hub = await standInDatasetsServer(244);
  try {
    const dest = join(dir, 'minif2f_test.jsonl');
    const r = await fetchMinif2fTest({ dest, endpoint: hub.url });
    assert.deepEqual([r.rows, r.withInformal, r.downloaded], [244, 244, true]);
    assert.equal(hub.requests.length, 3, 'pages of 100');
    const problems = loadBenchmark(dest).problems;
    assert.equal(
      problems[0].informal,
      row(0).informal_prefix,
      'informal statement kept verbatim, as prepare_data.py formats it',
    );
    assert.equal(problems[0].split, 'test');
    const prompts = minif2fTestPrompts(dest);
    assert.deepEqual(prompts[5].prompt, buildPrompt(row(5).formal_statement, row(5).informal_prefix));
    assert.equal(prompts[5].id, 'mathd_algebra_5');
    // A second call keeps the file; a short dataset is refused and leaves nothing behind.
    assert.equal((await fetchMinif2fTest({ dest, endpoint: hub.url })).downloaded, false);
  } finally {
    await hub.close();
  }
  const short = await standInDatasetsServer(200);
  try {
    const dest = join(dir, 'short.jsonl');
    await assert.rejects(fetchMinif2fTest({ dest, endpoint: short.url }), /200 problems, AI-MO\/minif2f_test has 244/);
    assert.equal(existsSync(dest), false);
  } finally {
    await short.close();
  }
  assert.throws(() => minif2fTestPrompts(join(dir, 'missing.jsonl')), /run `kimina eval fetch`/);
});

const v = (status: Verdict['status'], extra: Partial<Verdict> = {}): Verdict => ({
  status,
  reason: `${status} reason`,
  messages: [],
  sorries: [],
  time: 0.1,
  ...extra,
});

test("the recipe rule on the strict verdict's Lean answer: errors and sorries only", () => {
  assert.deepEqual(recipeVerdictOf(v('valid', { axioms: [] })), { valid: true, reason: null });
  assert.equal(
    recipeVerdictOf(
      v('lean_error', { messages: [{ severity: 'error', pos: { line: 3, column: 0 }, endPos: null, data: 'x' }] }),
    ).valid,
    false,
  );
  assert.equal(
    recipeVerdictOf(
      v('sorry', { sorries: [{ pos: { line: 4, column: 2 }, endPos: { line: 4, column: 7 }, goal: '⊢ False' }] }),
    ).valid,
    false,
  );
  // admit-style sorry (only the warning), forbidden axioms and an audit failure: Lean had no error and no sorries entry.
  const admit = recipeVerdictOf(
    v('sorry', {
      axioms: ['sorryAx'],
      messages: [{ severity: 'warning', pos: { line: 1, column: 0 }, endPos: null, data: "declaration uses 'sorry'" }],
    }),
  );
  assert.deepEqual(admit, { valid: true, reason: 'strict verdict sorry: sorry reason' });
  assert.equal(
    recipeVerdictOf(
      v('rejected', {
        axioms: ['Lean.ofReduceBool'],
        reason: 'The proof depends on axioms outside the allow-list: Lean.ofReduceBool.',
      }),
    ).valid,
    true,
  );
  assert.deepEqual(recipeVerdictOf(v('rejected', { time: 0, reason: 'Rejected before Lean (line 3): #eval' })), {
    valid: null,
    reason: 'not run in Lean: Rejected before Lean (line 3): #eval',
  });
  assert.equal(recipeVerdictOf(v('timeout_error')).valid, false);
  assert.equal(recipeVerdictOf(null).valid, false);
});

const CONFIG: EvalConfig = {
  benchmark: '/x/minif2f_test.jsonl',
  split: 'test',
  model: 'm',
  engine: 'openai',
  samples: 32,
  fixTurns: 1,
  temperature: 1,
  topP: 0.95,
  maxTokens: 24576,
  leanTimeout: 60,
  verdictMode: 'recipe',
  benchmarkName: 'AI-MO/minif2f_test',
  lean: 'v4.15.0',
};

test('comparable to the published table only with its benchmark, k, verdict, Lean and length; each difference named', () => {
  assert.equal(comparability(CONFIG, 244).comparable, true);
  const no = (over: Partial<EvalConfig>, problems: number, why: RegExp) => {
    const c = comparability({ ...CONFIG, ...over }, problems);
    assert.equal(c.comparable, false);
    assert.match(c.why, why);
  };
  no({ benchmarkName: 'minif2f-lean4' }, 244, /the benchmark is minif2f-lean4, not AI-MO\/minif2f_test/);
  no({}, 200, /200 of the 244 problems/);
  // the built-in copy (data/minif2f-lean4): never the published table's benchmark, whatever it is called
  const builtin = join(builtinMinif2fDir(), 'MiniF2F');
  assert.equal(benchmarkName(builtin), 'miniF2F-lean4 (built-in, yangky11/miniF2F-lean4@5746b7d)');
  no(
    { benchmark: builtin, benchmarkName: benchmarkName(builtin) },
    244,
    /is not the published table's AI-MO\/minif2f_test/,
  );
  no(
    { benchmark: builtin },
    244,
    /built-in miniF2F-lean4 \(yangky11\/miniF2F-lean4@5746b7d, Lean v4\.24\.0 statements/,
  );
  no({ samples: 8 }, 244, /8 samples per problem; the table is pass@32/);
  no({ verdictMode: 'strict' }, 244, /strict verdict; the table counted with kimina-client's rule/);
  no({ lean: 'v4.26.0' }, 244, /Lean v4\.26\.0; the table used v4\.15\.0/);
  no({ lean: null }, 244, /Lean version is unknown/);
  no({ maxTokens: 16384 }, 244, /cut at 16384 tokens/);
  no({ goals: true }, 244, /goal states/);
});

test('reports give both pass@k figures and list what only the recipe rule accepts, with the reason', () => {
  const store = new EvalStore(openDb(':memory:'));
  const problems: BenchmarkProblem[] = ['p1', 'p2'].map((id) => ({
    id,
    split: 'test',
    source: 'OTHER',
    code: `theorem ${id} : True := by sorry`,
    theorem: id,
    origin: 'x',
  }));
  store.openRun('r', { ...CONFIG, samples: 2 }, problems);
  const a = (
    problem: string,
    sample: number,
    turn: number,
    valid: boolean,
    recipeValid: boolean | null,
    recipeReason: string | null = null,
  ): StoredAttempt => ({
    problem,
    sample,
    turn,
    formatError: 'NONE',
    status: valid ? 'valid' : 'rejected',
    valid,
    tokens: 10,
    chars: 20,
    generateMs: 5,
    verifyMs: 5,
    leanSeconds: 0.1,
    code: `proof ${problem} ${sample} ${turn}`,
    response: null,
    modes: { strict: { valid, reason: null }, recipe: { valid: recipeValid, reason: recipeReason } },
  });
  store.recordSamples(
    'r',
    'p1',
    [0, 1],
    [
      a('p1', 0, 1, true, true),
      a(
        'p1',
        1,
        1,
        false,
        true,
        'strict verdict rejected: The proof depends on axioms outside the allow-list: Lean.ofReduceBool.',
      ),
    ],
  );
  store.recordSamples(
    'r',
    'p2',
    [0, 1],
    [
      a('p2', 0, 1, false, null, 'not run in Lean: Rejected before Lean'),
      a('p2', 0, 2, false, true, 'strict verdict sorry: admit'),
      a('p2', 1, 1, false, false),
    ],
  );
  const report = buildReport(store, 'r');
  const at = (c: { k: number; value: number }[] | null | undefined, k: number) => c?.find((x) => x.k === k)?.value;
  assert.equal(at(report.metrics.passAtK, 2), 0.5, 'strict: p1 only');
  assert.equal(at(report.metrics.modes?.recipe?.passAtK, 2), 0.5);
  assert.equal(at(report.metrics.modes?.recipe?.passAtK, 1), 0.5, 'recipe: p1 both samples, p2 none on turn 1');
  assert.equal(at(report.metrics.passAtK, 1), 0.25);
  assert.equal(at(report.metrics.modes?.recipe?.passAtKWithFix, 2), 1, 'recipe: p2 fixed by an admit-style answer');
  assert.equal(report.metrics.modes?.recipe?.unknown, 1);
  assert.deepEqual(
    report.onlyAcceptedBy?.recipe?.map((o) => [o.problem, o.sample, o.turn]),
    [
      ['p1', 1, 1],
      ['p2', 0, 2],
    ],
  );
  assert.equal(report.comparability?.comparable, false, 'two problems, two samples');
  const md = reportMarkdown(report);
  assert.match(
    md,
    /\| `m` \| recipe \(headline\) \| 50\.00 % \| 100\.00 % \|\n\| `m` \| strict \| 50\.00 % \| 50\.00 % \|/,
  );
  assert.match(md, /accepts 2 answers the strict verdict refuses; 1 answers never reached Lean/);
  assert.match(
    md,
    /\| `p1` \| 1 \| 1 \| strict verdict rejected: The proof depends on axioms outside the allow-list: Lean\.ofReduceBool\. \|/,
  );
  assert.match(md, /- Benchmark: \*\*AI-MO\/minif2f_test\*\*/);
  assert.match(md, /- Lean: v4\.15\.0; verdict mode: \*\*recipe\*\*/);
  assert.match(
    md,
    /Comparable to the published table: \*\*no\*\* \(2 of the 244 problems were measured; 2 samples per problem/,
  );
});

test("kimina eval fetch with no argument downloads the recipe's benchmark; --verdict takes strict or recipe", async (t) => {
  const dir = tempDir(t);
  const hub = await standInDatasetsServer(244);
  const lines: string[] = [];
  const log = console.log;
  const err = console.error;
  const before = process.env.KIMINA_DATASETS_SERVER;
  process.env.KIMINA_DATASETS_SERVER = hub.url;
  console.log = (...a: unknown[]) => {
    lines.push(a.join(' '));
  };
  console.error = () => {};
  try {
    const code = await runEval(['fetch', '--dest', join(dir, 'm.jsonl')], readSettings());
    assert.equal(code, 0);
  } finally {
    console.log = log;
    console.error = err;
    if (before === undefined) delete process.env.KIMINA_DATASETS_SERVER;
    else process.env.KIMINA_DATASETS_SERVER = before;
    await hub.close();
  }
  assert.match(lines.join('\n'), /AI-MO\/minif2f_test: 244 problems, 244 with an informal statement/);
  assert.match(lines.join('\n'), /kimina eval run .*m\.jsonl --model NAME --verdict recipe/);
  await assert.rejects(
    runEval(
      ['run', join(dir, 'm.jsonl'), '--model', 'm', '--verdict', 'lenient', '--db', join(dir, 'k.db')],
      readSettings(),
    ),
    /verdict mode must be strict or recipe, got 'lenient'/,
  );
});

test("the Lean version comes from the verifier project's lean-toolchain", (t) => {
  const dir = tempDir(t);
  writeFileSync(join(dir, 'lean-toolchain'), 'leanprover/lean4:v4.15.0\n');
  assert.equal(leanVersionOf(dir), 'v4.15.0');
  assert.equal(leanVersionOf(join(dir, 'none')), null);
  assert.equal(leanVersionOf(undefined), null);
  assert.equal(benchmarkName('/home/u/.kimina/benchmarks/minif2f_test.jsonl'), 'AI-MO/minif2f_test');
  assert.equal(benchmarkName('/data/miniF2F-lean4/MiniF2F'), 'MiniF2F');
});
