// Shared helpers for the evaluation tests: where the miniF2F copy lives, temp folders, and a
// TEST DOUBLE attempter whose outcomes are scripted from the problem name.
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchmarkProblem } from '../../backend/protocol';
import type { AttemptOutcome, AttemptProblem } from '../../backend/eval/runner';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The miniF2F Lean 4 copy: $KIMINA_MINIF2F_DIR, else the one the repository carries (data/minif2f-lean4). */
export function minif2fDir(): string {
  return process.env.KIMINA_MINIF2F_DIR || join(repoRoot, 'data', 'minif2f-lean4');
}

export type MiniF2FSplit = 'Test' | 'Valid';
export const MINIF2F_SPLITS: MiniF2FSplit[] = ['Test', 'Valid'];

/** Every file of one miniF2F split (MiniF2F/Test or MiniF2F/Valid), sorted by name; throws when the copy is absent. */
export function minif2fFiles(split: MiniF2FSplit): { name: string; path: string }[] {
  const dir = join(minif2fDir(), 'MiniF2F', split);
  return readdirSync(dir)
    .sort()
    .map((name) => ({ name, path: join(dir, name) }));
}

export function tempDir(t: { after(fn: () => void): void }, prefix = 'kimina-eval-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function hash(s: string): number {
  let h = 2166136261;
  for (const ch of s) h = Math.imul(h ^ ch.codePointAt(0)!, 16777619) >>> 0;
  return h;
}

/**
 * How the TEST DOUBLE attempter treats a problem, from a hash of its id:
 * 'easy' every first answer is valid; 'fixable' first answers fail in Lean, fixes are valid;
 * 'half' even samples valid, odd ones fail twice; 'hopeless' no lean4 block, nothing reaches Lean.
 */
export type ScriptedKind = 'easy' | 'fixable' | 'half' | 'hopeless';
export function scriptedKind(id: string): ScriptedKind {
  return (['easy', 'fixable', 'half', 'hopeless'] as const)[hash(id) % 4];
}

function outcome(sample: number, turn: number, valid: boolean, filtered = false): AttemptOutcome {
  return {
    sample,
    turn,
    valid,
    formatError: filtered ? 'NO_VALID_LEAN4_CODE_BLOCK' : valid ? 'NONE' : 'TACTICS_LEAN4_NOT_MATCH',
    status: filtered ? 'filtered' : valid ? 'valid' : 'lean_error',
    tokens: 100 + turn * 10,
    chars: 400 + turn * 40,
    generateMs: 50,
    verifyMs: filtered ? 0 : 20,
    leanSeconds: filtered ? null : 0.5,
    code: filtered ? null : `-- proof of sample ${sample}`,
    response: `answer ${sample}/${turn}`,
  };
}

/** TEST DOUBLE for the prove loop: scripted outcomes, optional delay, records every call. */
export function scriptedAttempter(
  options: {
    delayMs?: number;
    calls?: { id: string; samples: number[] }[];
    inFlight?: { now: number; max: number };
  } = {},
): AttemptProblem {
  return async (problem: BenchmarkProblem, request, signal) => {
    options.calls?.push({ id: problem.id, samples: request.samples });
    const flight = options.inFlight;
    if (flight) {
      flight.now++;
      flight.max = Math.max(flight.max, flight.now);
    }
    try {
      if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
      if (signal.aborted) return [];
      const kind = scriptedKind(problem.id);
      const out: AttemptOutcome[] = [];
      for (const s of request.samples) {
        if (kind === 'hopeless') {
          out.push(outcome(s, 1, false, true));
          continue;
        }
        const first = kind === 'easy' || (kind === 'half' && s % 2 === 0);
        out.push(outcome(s, 1, first));
        if (!first && request.fixTurns > 0) out.push(outcome(s, 2, kind === 'fixable'));
      }
      return out;
    } finally {
      if (flight) flight.now--;
    }
  };
}
