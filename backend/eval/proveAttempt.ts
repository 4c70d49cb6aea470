// The real attempter: each sample is one call of the prove loop with samples = 1, so the loop's
// "first proof wins" rule never cancels another sample, and the fix turn runs for each failed one.
// A shared gate bounds the samples in flight (engine streams and Lean checks) across problems.
import type { Attempt, BenchmarkProblem } from '../protocol';
import { prove, type ProveDeps } from '../prover/prove';
import { Gate } from './gate';
import type { AttemptOutcome, AttemptProblem } from './runner';

export interface ProveAttempterOptions {
  /** Engine and verifier; never an attempt store, so benchmark proofs stay out of training data. */
  deps: Omit<ProveDeps, 'store'>;
  temperature: number;
  topP: number;
  maxTokens: number;
  /** Samples proved at once, over all problems. */
  parallel: number;
  /** Base seed; each (problem, sample) gets its own derived seed. Absent: the engine's randomness. */
  seed?: number;
}

function hash(s: string): number {
  let h = 2166136261;
  for (const ch of s) h = Math.imul(h ^ ch.codePointAt(0)!, 16777619) >>> 0;
  return h;
}

/** A stored outcome from one of the prove loop's attempts, under the run's sample index. */
export function outcomeOf(a: Attempt, sample: number): AttemptOutcome {
  return {
    sample,
    turn: a.turn,
    formatError: a.format.error,
    status: a.verdict?.status ?? 'filtered',
    valid: a.verdict?.status === 'valid',
    tokens: a.tokens ?? 0,
    chars: a.response.length,
    generateMs: a.timings?.generateMs ?? 0,
    verifyMs: a.timings?.verifyMs ?? 0,
    leanSeconds: a.verdict ? a.verdict.time : null,
    code: a.code,
    response: a.response,
  };
}

export function proveAttempter(options: ProveAttempterOptions): AttemptProblem {
  const gate = new Gate(options.parallel);
  return async (problem: BenchmarkProblem, request, signal) => {
    const perSample = await Promise.all(request.samples.map(async (sample): Promise<AttemptOutcome[]> => {
      try { await gate.acquire(signal); } catch { return []; }
      // A signal per sample, unlinked afterwards, so listeners the loop leaves on it go with it.
      const own = new AbortController();
      const relay = () => own.abort(signal.reason);
      signal.addEventListener('abort', relay, { once: true });
      try {
        if (signal.aborted) return [];
        const seed = options.seed === undefined ? undefined : (options.seed + hash(`${problem.id}#${sample}`)) >>> 0;
        const deps: ProveDeps = { ...options.deps, options: { ...options.deps.options, seed } };
        const result = await prove({
          code: problem.code, theorem: problem.theorem, ...(problem.informal ? { informal: problem.informal } : {}),
          samples: 1, fixTurns: request.fixTurns,
          temperature: options.temperature, topP: options.topP, maxTokens: options.maxTokens,
        }, deps, undefined, own.signal);
        if (result.status === 'cancelled') return [];
        // With one sample the loop only stops early after a valid answer, which needs no fix.
        return result.attempts.map((a) => outcomeOf(a, sample));
      } finally {
        signal.removeEventListener('abort', relay);
        gate.release();
      }
    }));
    return perSample.flat();
  };
}
