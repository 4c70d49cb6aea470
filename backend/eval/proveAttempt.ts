// The real attempter: a problem's samples are one call of the prove loop (samples = k, decoded together),
// exhaustive so that a verified proof cancels no other sample and each failed one gets its fix turn.
// A shared gate bounds the samples in flight (engine streams and Lean checks) across problems; a problem
// with more samples than that is split into calls of at most `parallel` samples.
import type { Attempt, BenchmarkProblem } from '../protocol';
import { prove, type ProveDeps } from '../prover/prove';
import { Gate } from './gate';
import { judgeInEveryMode } from './modes';
import type { AttemptOutcome, AttemptProblem } from './runner';

export interface ProveAttempterOptions {
  /** Engine and verifier; never an attempt store, so benchmark proofs stay out of training data. */
  deps: Omit<ProveDeps, 'store'>;
  temperature: number;
  topP: number;
  maxTokens: number;
  /** Samples proved at once, over all problems. */
  parallel: number;
  /**
   * Base seed; each call (problem and its batch of samples) gets its own derived seed, and the engine draws
   * each row from it. Absent: the engine's randomness.
   */
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
    modes: judgeInEveryMode(a.verdict ?? null),
  };
}

/** `samples` in batches of at most `size`, in order. */
function batches(samples: number[], size: number): number[][] {
  const out: number[][] = [];
  for (let i = 0; i < samples.length; i += size) out.push(samples.slice(i, i + size));
  return out;
}

export function proveAttempter(options: ProveAttempterOptions): AttemptProblem {
  const gate = new Gate(options.parallel);
  return async (problem: BenchmarkProblem, request, signal) => {
    const parts = await Promise.all(
      batches(request.samples, options.parallel).map(async (batch): Promise<AttemptOutcome[] | null> => {
        try {
          await gate.acquire(signal, batch.length);
        } catch {
          return null;
        }
        // A signal per call, unlinked afterwards, so listeners the loop leaves on it go with it.
        const own = new AbortController();
        const relay = () => own.abort(signal.reason);
        signal.addEventListener('abort', relay, { once: true });
        try {
          if (signal.aborted) return null;
          const seed =
            options.seed === undefined ? undefined : (options.seed + hash(`${problem.id}#${batch.join(',')}`)) >>> 0;
          const deps: ProveDeps = { ...options.deps, options: { ...options.deps.options, seed, exhaustive: true } };
          const result = await prove(
            {
              code: problem.code,
              theorem: problem.theorem,
              ...(problem.informal ? { informal: problem.informal } : {}),
              samples: batch.length,
              fixTurns: request.fixTurns,
              temperature: options.temperature,
              topP: options.topP,
              maxTokens: options.maxTokens,
            },
            deps,
            undefined,
            own.signal,
          );
          // Exhaustive, an uninterrupted call ran every sample to its end; an interrupted one is partial.
          if (result.status === 'cancelled' || own.signal.aborted) return null;
          return result.attempts.map((a) => outcomeOf(a, batch[a.sample]));
        } finally {
          signal.removeEventListener('abort', relay);
          gate.release(batch.length);
        }
      }),
    );
    // An interrupted problem gives nothing: the runner redoes it whole.
    if (parts.some((p) => p === null)) return [];
    return parts.flat() as AttemptOutcome[];
  };
}
