import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DEFAULT_HEADER, loadBenchmark } from '../../backend/eval/benchmark';
import { sourceOf } from '../../backend/eval/sources';
import { firstTheoremName } from '../../backend/eval/theoremName';
import { minif2fDir, tempDir } from './helpers';

test('the miniF2F folder loads 244 test and 244 valid problems with their sources', () => {
  const test_ = loadBenchmark(minif2fDir(), { split: 'test' });
  assert.equal(test_.problems.length, 244);
  assert.equal(loadBenchmark(minif2fDir(), { split: 'valid' }).problems.length, 244);
  assert.equal(loadBenchmark(minif2fDir()).problems.length, 488);
  assert.deepEqual(test_.skipped.map((f) => f.split('/').pop()).sort(), ['Test.lean', 'Valid.lean']); // aggregators
  const counts: Record<string, number> = {};
  for (const p of test_.problems) counts[p.source] = (counts[p.source] ?? 0) + 1;
  assert.deepEqual(counts, { AIME: 15, ALGEBRA: 18, AMC: 45, IMO: 20, INDUCTION: 8, MATHD: 130, 'NUMBER THEORY': 8 });
  const p2 = test_.problems.find((p) => p.id === 'aime_1983_p2')!;
  assert.equal(p2.split, 'test');
  assert.equal(p2.theorem, 'aime_1983_p2');
  assert.match(p2.code, /^import Mathlib/);
  // Selecting: by split subfolder directly, by id list, by limit.
  assert.equal(loadBenchmark(join(minif2fDir(), 'MiniF2F', 'Valid')).problems[0].split, 'valid');
  assert.deepEqual(
    loadBenchmark(minif2fDir(), { only: ['imo_1959_p1', 'aime_1983_p2'] }).problems.map((p) => p.id),
    ['imo_1959_p1', 'aime_1983_p2'],
  );
  assert.equal(loadBenchmark(minif2fDir(), { split: 'test', limit: 5 }).problems.length, 5);
  assert.throws(
    () => loadBenchmark(minif2fDir(), { only: ['no_such_problem'] }),
    /not in the benchmark: no_such_problem/,
  );
  assert.throws(
    () => loadBenchmark(minif2fDir(), { split: 'train' }),
    /no problems in split 'train'.*splits: test, valid/,
  );
  assert.throws(() => loadBenchmark(join(minif2fDir(), 'nope')), /benchmark not found/);
});

test('sources come from competition prefixes', () => {
  assert.deepEqual(
    [
      'aime_1983_p2',
      'amc12a_2019_p21',
      'amc12b_2002_p3',
      'imo_1959_p1',
      'imosl_2007_algebra_p6',
      'mathd_algebra_10',
      'algebra_sqineq_at2malt1',
      'numbertheory_2dvd4expn',
      'induction_12dvd4expnp1p20',
      'my_lemma',
    ].map(sourceOf),
    ['AIME', 'AMC', 'AMC', 'IMO', 'IMO', 'MATHD', 'ALGEBRA', 'NUMBER THEORY', 'INDUCTION', 'OTHER'],
  );
});

test('the theorem name is found past comments, docstrings, attributes and `open … in`', () => {
  assert.equal(
    firstTheoremName('-- theorem fake : True\n/- theorem nested /- inner -/ -/\ntheorem real_one : True := trivial'),
    'real_one',
  );
  assert.equal(firstTheoremName('/-- doc with theorem inside -/\n@[simp] lemma l₁ (x : ℕ) : x = x := rfl'), 'l₁');
  assert.equal(firstTheoremName('open Nat in\ntheorem «odd name» : True := trivial'), '«odd name»');
  assert.equal(firstTheoremName('def x := "theorem not_me"\n'), null);
});

test('a JSONL benchmark reads DeepSeek/AI-MO columns, adds a header only when needed, and names bad lines', (t) => {
  const dir = tempDir(t);
  const file = join(dir, 'bench.jsonl');
  const rows = [
    {
      name: 'mathd_algebra_1',
      split: 'test',
      informal_prefix: '/-- What is $1+1$? Show that it is 2. -/\n',
      header: 'import Mathlib\nimport Aesop\n\n',
      formal_statement: 'theorem mathd_algebra_1 : (1 : ℕ) + 1 = 2 := by\n',
    },
    { formal_statement: 'import Mathlib\n\ntheorem no_name_field (x : ℝ) : x ^ 2 ≥ 0 := by sorry' },
    { id: 'bare', statement: 'theorem bare : True := by' },
  ];
  writeFileSync(file, rows.map((r) => JSON.stringify(r)).join('\n') + '\n\n');
  const [a, b, c] = loadBenchmark(file).problems.sort((x, y) => x.origin.localeCompare(y.origin));
  assert.equal(a.id, 'mathd_algebra_1');
  assert.equal(a.split, 'test');
  assert.equal(a.informal, 'What is $1+1$? Show that it is 2.');
  assert.equal(a.code, 'import Mathlib\nimport Aesop\n\ntheorem mathd_algebra_1 : (1 : ℕ) + 1 = 2 := by\n');
  assert.equal(a.origin, `${file}:1`);
  assert.equal(b.id, 'no_name_field');
  assert.equal(b.code, rows[1].formal_statement);
  assert.equal(c.id, 'bare');
  assert.equal(c.code, DEFAULT_HEADER + 'theorem bare : True := by');

  const bad = join(dir, 'bad.jsonl');
  writeFileSync(bad, JSON.stringify(rows[0]) + '\n{not json\n');
  assert.throws(() => loadBenchmark(bad), /bad\.jsonl:2: not JSON/);
  writeFileSync(bad, JSON.stringify({ name: 'x' }) + '\n');
  assert.throws(() => loadBenchmark(bad), /bad\.jsonl:1: missing field 'formal_statement' or 'statement' or 'code'/);
  writeFileSync(bad, JSON.stringify({ formal_statement: 'def x := 1' }) + '\n');
  assert.throws(() => loadBenchmark(bad), /bad\.jsonl:1: no theorem or lemma/);
  writeFileSync(
    bad,
    [
      JSON.stringify({ name: 'd', formal_statement: 'theorem d : True := by' }),
      JSON.stringify({ name: 'd', formal_statement: 'theorem d : True := by' }),
    ].join('\n'),
  );
  assert.throws(() => loadBenchmark(bad), /duplicate problem id 'd'|occurs in several splits/);
  writeFileSync(bad, '');
  assert.throws(() => loadBenchmark(bad), /no statements in/);
});

test('a folder without theorems is refused', (t) => {
  const dir = tempDir(t);
  mkdirSync(join(dir, 'Empty'));
  writeFileSync(join(dir, 'Empty', 'All.lean'), 'import Mathlib\n');
  assert.throws(() => loadBenchmark(join(dir, 'Empty')), /no Lean theorems found/);
});
