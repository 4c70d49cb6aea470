import { test } from 'node:test';
import assert from 'node:assert/strict';
import { passAtK, passAtKCurve, passAtKEqualBudget } from '../../backend/eval/passk';

/** Exact 1 − C(n−c,k)/C(n,k) with BigInt binomials: the definition, for checking the product form. */
function exact(n: number, c: number, k: number): number {
  const choose = (a: number, b: number): bigint => {
    if (b < 0 || b > a) return 0n;
    let r = 1n;
    for (let i = 1; i <= b; i++) r = (r * BigInt(a - b + i)) / BigInt(i);
    return r;
  };
  return 1 - Number(choose(n - c, k)) / Number(choose(n, k));
}

test('pass@k matches hand-computed values', () => {
  assert.ok(Math.abs(passAtK(10, 3, 1) - 0.3) < 1e-15); // c/n
  assert.ok(Math.abs(passAtK(5, 2, 2) - 0.7) < 1e-15); // 1 − C(3,2)/C(5,2) = 1 − 3/10
  assert.ok(Math.abs(passAtK(4, 1, 2) - 0.5) < 1e-15); // 1 − C(3,2)/C(4,2) = 1 − 3/6
  assert.ok(Math.abs(passAtK(32, 1, 16) - 0.5) < 1e-15); // one correct in 32, half the samples drawn
  assert.ok(Math.abs(passAtK(6, 2, 3) - 0.8) < 1e-15); // 1 − C(4,3)/C(6,3) = 1 − 4/20
});

test('pass@k edge cases: n = k, c = 0, c = n, n − c < k', () => {
  assert.equal(passAtK(8, 1, 8), 1); // n = k: solved iff any sample is correct
  assert.equal(passAtK(8, 0, 8), 0); // n = k, c = 0
  assert.equal(passAtK(32, 0, 1), 0); // c = 0 at any k
  assert.equal(passAtK(32, 0, 32), 0);
  assert.equal(passAtK(5, 5, 1), 1); // c = n
  assert.equal(passAtK(5, 3, 3), 1); // n − c = 2 < k = 3: every draw of 3 holds a correct one
  assert.equal(passAtK(1, 1, 1), 1);
  assert.equal(passAtK(1, 0, 1), 0);
});

test('pass@k agrees with the binomial definition on every (n, c, k) up to n = 40', () => {
  for (let n = 1; n <= 40; n++)
    for (let c = 0; c <= n; c++)
      for (let k = 1; k <= n; k++) {
        assert.ok(Math.abs(passAtK(n, c, k) - exact(n, c, k)) < 1e-12, `n=${n} c=${c} k=${k}`);
      }
});

test('pass@k refuses impossible inputs with a clear message', () => {
  assert.throws(() => passAtK(4, 5, 1), /0 ≤ c ≤ n/);
  assert.throws(() => passAtK(4, 1, 5), /1 ≤ k ≤ n/);
  assert.throws(() => passAtK(4, 1, 0), /1 ≤ k ≤ n/);
  assert.throws(() => passAtK(4, 1.5, 1), /integers/);
});

test('the curve averages over problems and stops at the smallest sample count', () => {
  const curve = passAtKCurve([
    { n: 4, c: 1 },
    { n: 4, c: 0 },
    { n: 8, c: 8 },
  ]);
  assert.deepEqual(
    curve.map((p) => p.k),
    [1, 2, 3, 4],
  );
  assert.ok(Math.abs(curve[0].value - (0.25 + 0 + 1) / 3) < 1e-15);
  assert.ok(Math.abs(curve[3].value - (1 + 0 + 1) / 3) < 1e-15);
  assert.deepEqual(passAtKCurve([]), []);
});

test('equal budget spends k generations as k/2 answers plus k/2 fixes', () => {
  const eq = passAtKEqualBudget([{ n: 4, cWithFix: 2 }]);
  assert.deepEqual(
    eq.map((p) => p.k),
    [2, 4, 6, 8],
  );
  assert.ok(Math.abs(eq[0].value - 0.5) < 1e-15); // pass@1 of 2/4
  assert.ok(Math.abs(eq[1].value - (1 - 1 / 6)) < 1e-15); // pass@2 = 1 − C(2,2)/C(4,2)
  assert.equal(eq[3].value, 1);
});
