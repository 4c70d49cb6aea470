// verl's best@n: a bootstrap over one prompt's N sample values (1000 resamples of size n drawn
// with replacement, seed 42, reseeded per call), the mean over resamples of the max, then the
// mean over prompts. The n values verl reports are 2, 4, 8, … below N, and N itself.
import type { KValue } from '../protocol';
import { MT19937 } from './mt19937';

const VERL_BOOTSTRAP = { resamples: 1000, seed: 42 } as const;

/** Mean and population std of max over bootstrap resamples, drawn like numpy's legacy `choice`. */
export function bootstrapBest(
  values: readonly number[],
  n: number,
  resamples: number = VERL_BOOTSTRAP.resamples,
  seed: number = VERL_BOOTSTRAP.seed,
): { mean: number; std: number } {
  if (values.length === 0) throw new Error('best@n needs at least one sample');
  if (!Number.isInteger(n) || n < 1) throw new Error(`best@n needs n ≥ 1, got ${n}`);
  const rng = new MT19937(seed);
  const maxima = new Float64Array(resamples);
  for (let r = 0; r < resamples; r++) {
    let best = -Infinity;
    for (let j = 0; j < n; j++) best = Math.max(best, values[rng.randint(values.length)]);
    maxima[r] = best;
  }
  let sum = 0;
  for (const m of maxima) sum += m;
  const mean = sum / resamples;
  let sq = 0;
  for (const m of maxima) sq += (m - mean) ** 2;
  return { mean, std: Math.sqrt(sq / resamples) };
}

/** The expectation the bootstrap estimates, for 0/1 values: 1 − (1 − c/N)^n. */
export function expectedBest(samples: number, correct: number, n: number): number {
  return 1 - (1 - correct / samples) ** n;
}

/** The n values verl reports for N samples: powers of two below N, then N. */
export function verlBestNs(samples: number): number[] {
  if (samples < 2) return [];
  const ns: number[] = [];
  for (let n = 2; n < samples; n *= 2) ns.push(n);
  ns.push(samples);
  return ns;
}

/** best@n over prompts (each a list of per-sample values), averaged like verl's `process_validation_metrics`. */
export function bestAtKCurve(prompts: readonly (readonly number[])[]): KValue[] {
  if (prompts.length === 0) return [];
  const samples = Math.min(...prompts.map((p) => p.length));
  return verlBestNs(samples).map((n) => ({
    k: n,
    value: prompts.reduce((acc, values) => acc + bootstrapBest(values, n).mean, 0) / prompts.length,
  }));
}
