import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bestAtKCurve, bootstrapBest, expectedBest, verlBestNs } from '../../backend/eval/bestk';
import { MT19937 } from '../../backend/eval/mt19937';

/** Brute force: the exact mean of max over every one of the N^n index tuples drawn with replacement. */
function bruteForceBest(values: number[], n: number): number {
  const N = values.length;
  let total = 0;
  let count = 0;
  const idx = new Array<number>(n).fill(0);
  for (;;) {
    total += Math.max(...idx.map((i) => values[i]));
    count++;
    let j = 0;
    while (j < n && ++idx[j] === N) idx[j++] = 0;
    if (j === n) break;
  }
  return total / count;
}

const smallCases: [number[], number][] = [
  [[1, 0, 0, 0], 2],
  [[1, 0, 0, 0], 4],
  [[1, 1, 0, 0], 3],
  [[0, 0, 0], 3],
  [[1, 1, 1], 2],
  [[0, 1, 0, 0, 0, 0], 4],
  [[0, 0, 1, 0, 1, 0, 0, 0], 4],
  [[1, 0, 0, 0, 0, 0, 0, 0], 6],
];

test('the closed form 1 − (1 − c/N)^n equals the brute-force bootstrap expectation', () => {
  for (const [values, n] of smallCases) {
    const c = values.filter((v) => v === 1).length;
    assert.ok(Math.abs(expectedBest(values.length, c, n) - bruteForceBest(values, n)) < 1e-12, `${values} n=${n}`);
  }
});

test('the 1000-resample bootstrap lands within sampling error of the brute-force expectation', () => {
  for (const [values, n] of smallCases) {
    const exact = bruteForceBest(values, n);
    const { mean } = bootstrapBest(values, n);
    const stderr = Math.sqrt((exact * (1 - exact)) / 1000);
    assert.ok(Math.abs(mean - exact) <= 4 * stderr + 1e-12, `${values} n=${n}: bootstrap ${mean} vs exact ${exact}`);
  }
});

test('MT19937 reproduces numpy: np.random.seed(42) outputs and randint(0, 5) draws', () => {
  // Reference values printed by numpy 2.4 (legacy RandomState): see the comment on the next test.
  const r = new MT19937(42);
  assert.deepEqual([r.nextUint32(), r.nextUint32(), r.nextUint32()], [1608637542, 3421126067, 4083286876]);
  const q = new MT19937(42);
  assert.deepEqual(
    Array.from({ length: 10 }, () => q.randint(5)),
    [3, 4, 2, 4, 4, 1, 2, 2, 2, 4],
  );
});

test("bootstrapBest gives the same numbers as verl's bootstrap_metric (numpy, seed 42)", () => {
  // Expected values came from running verl's bootstrap_metric body with numpy 2.4:
  //   np.random.seed(42); [max(data[i] for i in np.random.choice(len(data), size=n, replace=True)) for _ in range(1000)]
  const cases: [number[], number, number, number][] = [
    [[1, 0, 0, 0, 0, 0, 0, 0], 2, 0.252, 0.434161260363013],
    [[1, 0, 0, 0, 0, 0, 0, 0], 8, 0.651, 0.4766539625346673],
    [[0, 1, 1, 0, 0, 0, 0, 0], 4, 0.672, 0.46948482403587877],
    [[1, 0, 0], 3, 0.716, 0.45093680266751346],
    [Array.from({ length: 32 }, (_, i) => (i % 8 === 7 ? 1 : 0)), 32, 0.988, 0.10888526071052962],
    [[0, 0, 1, 0, 0], 5, 0.671, 0.46984997605618756],
  ];
  for (const [values, n, mean, std] of cases) {
    const got = bootstrapBest(values, n);
    assert.ok(Math.abs(got.mean - mean) < 1e-12, `mean ${got.mean} vs ${mean}`);
    assert.ok(Math.abs(got.std - std) < 1e-9, `std ${got.std} vs ${std}`);
  }
});

test('verl reports best@n for n = 2, 4, … below N, then N', () => {
  assert.deepEqual(verlBestNs(8), [2, 4, 8]);
  assert.deepEqual(verlBestNs(6), [2, 4, 6]);
  assert.deepEqual(verlBestNs(32), [2, 4, 8, 16, 32]);
  assert.deepEqual(verlBestNs(2), [2]);
  assert.deepEqual(verlBestNs(1), []);
});

test('best@8 sits below pass@8 as the recipe notes (N = 8, c = 1 → ≈ 0.656 expected)', () => {
  assert.ok(Math.abs(expectedBest(8, 1, 8) - 0.6563) < 1e-4);
  const curve = bestAtKCurve([
    [1, 0, 0, 0, 0, 0, 0, 0],
    [0, 0, 0, 0, 0, 0, 0, 0],
  ]);
  assert.deepEqual(
    curve.map((p) => p.k),
    [2, 4, 8],
  );
  assert.ok(Math.abs(curve[2].value - 0.651 / 2) < 1e-12);
});
