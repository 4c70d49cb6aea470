// The unbiased pass@k estimator (Chen et al. 2021): the chance that k samples drawn without
// replacement from n, of which c are correct, include at least one correct one.
import type { KValue } from '../protocol';

/** 1 − C(n−c, k)/C(n, k), computed as a product so large n stays exact enough. */
export function passAtK(n: number, c: number, k: number): number {
  if (!Number.isInteger(n) || !Number.isInteger(c) || !Number.isInteger(k))
    throw new Error(`pass@k needs integers, got n=${n} c=${c} k=${k}`);
  if (n < 1 || c < 0 || c > n) throw new Error(`pass@k needs 0 ≤ c ≤ n and n ≥ 1, got n=${n} c=${c}`);
  if (k < 1 || k > n) throw new Error(`pass@k needs 1 ≤ k ≤ n, got k=${k} with n=${n}`);
  if (n - c < k) return 1;
  // C(n−c, k)/C(n, k) = Π_{i=n−c+1..n} (1 − k/i)
  let allWrong = 1;
  for (let i = n - c + 1; i <= n; i++) allWrong *= 1 - k / i;
  return 1 - allWrong;
}

/** Mean pass@k over problems, each given as {n, c}; k from 1 to the smallest n. */
export function passAtKCurve(problems: readonly { n: number; c: number }[], maxK?: number): KValue[] {
  if (problems.length === 0) return [];
  const smallest = Math.min(...problems.map((p) => p.n));
  const top = Math.min(smallest, maxK ?? smallest);
  const out: KValue[] = [];
  for (let k = 1; k <= top; k++) {
    const sum = problems.reduce((acc, p) => acc + passAtK(p.n, p.c, k), 0);
    out.push({ k, value: sum / problems.length });
  }
  return out;
}

/**
 * Pass@k at an equal generation budget when each sample may get one fix turn: k generations
 * are spent as k/2 first answers plus k/2 fixes, so the estimate is pass@(k/2) over samples
 * counted correct when either turn is valid. Even k only, up to 2n.
 */
export function passAtKEqualBudget(problems: readonly { n: number; cWithFix: number }[]): KValue[] {
  return passAtKCurve(problems.map((p) => ({ n: p.n, c: p.cWithFix }))).map(({ k, value }) => ({ k: 2 * k, value }));
}
