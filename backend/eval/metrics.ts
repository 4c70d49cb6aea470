// Turns a run's stored attempts into its metrics and per-problem outcomes.
import type {
  BenchmarkProblem,
  EvalConfig,
  EvalMetrics,
  ModeMetrics,
  ModeOnlyProof,
  ProblemOutcome,
  VerdictMode,
} from '../protocol';
import type { StoredAttempt } from '../store/eval';
import { VERDICT_MODES } from '../lean/verdictModes';
import { judgementOf, otherModes } from './modes';
import { bestAtKCurve } from './bestk';
import { passAtKCurve, passAtKEqualBudget } from './passk';
import { sourceOrder } from './sources';

interface SampleResult {
  turn1: boolean;
  withFix: boolean;
}

function shares(values: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const v of values) counts[v] = (counts[v] ?? 0) + 1;
  const out: Record<string, number> = {};
  for (const [k, c] of Object.entries(counts).sort((a, b) => b[1] - a[1])) out[k] = c / values.length;
  return out;
}

function mean(xs: number[]): number {
  return xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Validity of one answer under a verdict mode. */
type Judge = (a: StoredAttempt) => boolean;
/** The default mode's verdict (the verifier's own): the record's `valid` flag. */
const strict: Judge = (a) => a.valid;
/** Validity under `mode`; answers the mode cannot judge (Lean never ran them) count as not valid. */
const judgeBy =
  (mode: VerdictMode): Judge =>
  (a) =>
    judgementOf(a, mode)?.valid === true;

/** Per problem: each finished sample's turn-1 validity and validity after the fix turn. */
function sampleResults(
  problems: BenchmarkProblem[],
  attempts: StoredAttempt[],
  valid: Judge = strict,
): Map<string, SampleResult[]> {
  const perSample = new Map<string, Map<number, SampleResult>>();
  for (const p of problems) perSample.set(p.id, new Map());
  for (const a of attempts) {
    const samples = perSample.get(a.problem);
    if (!samples) continue;
    const r = samples.get(a.sample) ?? { turn1: false, withFix: false };
    if (a.turn === 1) r.turn1 = valid(a);
    if (valid(a)) r.withFix = true;
    samples.set(a.sample, r);
  }
  return new Map([...perSample].map(([id, m]) => [id, [...m.entries()].sort((x, y) => x[0] - y[0]).map(([, r]) => r)]));
}

/** Answers `mode` accepts and the default mode's verdict does not, with the reason that verdict differs. */
function modeOnlyProofs(attempts: StoredAttempt[], mode: VerdictMode): ModeOnlyProof[] {
  return attempts
    .filter((a) => judgementOf(a, mode)?.valid === true && !a.valid)
    .map((a) => ({
      problem: a.problem,
      sample: a.sample,
      turn: a.turn,
      status: a.status,
      reason: judgementOf(a, mode)?.reason ?? a.status,
      code: a.code,
    }));
}

/** Per mode other than the default that any answer was judged by: what only it accepts. */
export function onlyAcceptedBy(attempts: StoredAttempt[]): Partial<Record<VerdictMode, ModeOnlyProof[]>> {
  const out: Partial<Record<VerdictMode, ModeOnlyProof[]>> = {};
  for (const mode of otherModes())
    if (attempts.some((a) => judgementOf(a, mode) !== null)) out[mode] = modeOnlyProofs(attempts, mode);
  return out;
}

export function problemOutcomes(
  config: EvalConfig,
  problems: BenchmarkProblem[],
  attempts: StoredAttempt[],
  valid: Judge = strict,
): ProblemOutcome[] {
  const results = sampleResults(problems, attempts, valid);
  const proofs = new Map<string, string>();
  for (const a of attempts) if (valid(a) && a.code && !proofs.has(a.problem)) proofs.set(a.problem, a.code);
  return problems.map((p) => {
    const r = results.get(p.id) ?? [];
    return {
      id: p.id,
      source: p.source,
      split: p.split,
      samples: r.length,
      correct: r.filter((s) => s.turn1).length,
      correctWithFix: config.fixTurns > 0 ? r.filter((s) => s.withFix).length : null,
      proof: proofs.get(p.id) ?? null,
    };
  });
}

export function computeMetrics(
  config: EvalConfig,
  problems: BenchmarkProblem[],
  attempts: StoredAttempt[],
  wallSeconds: number,
): EvalMetrics {
  const withFix = config.fixTurns > 0;
  const results = sampleResults(problems, attempts);
  const measured = problems.filter((p) => (results.get(p.id)?.length ?? 0) > 0);
  const outcomes = problemOutcomes(config, measured, attempts);
  const n = measured.length === 0 ? 0 : Math.min(...measured.map((p) => results.get(p.id)!.length));
  const counted = new Set(measured.map((p) => p.id));
  const used = attempts.filter((a) => counted.has(a.problem));
  const turn1 = used.filter((a) => a.turn === 1);
  const turn2 = used.filter((a) => a.turn === 2);
  const checked = used.filter((a) => a.leanSeconds !== null);
  const timed = used.filter((a) => a.generateMs > 0 && a.tokens > 0);
  const totalTokens = used.reduce((acc, a) => acc + a.tokens, 0);

  const bySource = new Map<string, ProblemOutcome[]>();
  for (const o of outcomes) bySource.set(o.source, [...(bySource.get(o.source) ?? []), o]);
  const sourceRank = (s: string) => {
    const r = sourceOrder.indexOf(s);
    return r < 0 ? sourceOrder.length : r;
  };
  const share = (os: ProblemOutcome[], f: (o: ProblemOutcome) => boolean) =>
    os.length === 0 ? 0 : os.filter(f).length / os.length;
  // Every mode some answer was judged by (runs stored before a mode existed have no figures for it).
  const modes: Partial<Record<VerdictMode, ModeMetrics>> = {};
  for (const mode of VERDICT_MODES) {
    if (!used.some((a) => (judgementOf(a, mode)?.valid ?? null) !== null)) continue;
    const os = problemOutcomes(config, measured, attempts, judgeBy(mode));
    modes[mode] = {
      passAtK: passAtKCurve(os.map((o) => ({ n: o.samples, c: o.correct }))),
      passAtKWithFix: withFix ? passAtKCurve(os.map((o) => ({ n: o.samples, c: o.correctWithFix! }))) : null,
      solved: share(os, (o) => o.correct > 0),
      solvedWithFix: withFix ? share(os, (o) => o.correctWithFix! > 0) : null,
      unknown: used.filter((a) => judgementOf(a, mode)?.valid === null).length,
    };
  }

  return {
    problems: measured.length,
    samples: n,
    passAtK: passAtKCurve(outcomes.map((o) => ({ n: o.samples, c: o.correct }))),
    passAtKWithFix: withFix ? passAtKCurve(outcomes.map((o) => ({ n: o.samples, c: o.correctWithFix! }))) : null,
    passAtKFixEqualBudget: withFix
      ? passAtKEqualBudget(outcomes.map((o) => ({ n: o.samples, cWithFix: o.correctWithFix! })))
      : null,
    bestAtK: bestAtKCurve(measured.map((p) => results.get(p.id)!.map((s) => (s.turn1 ? 1 : 0)))),
    bestAtKWithFix: withFix
      ? bestAtKCurve(measured.map((p) => results.get(p.id)!.map((s) => (s.withFix ? 1 : 0))))
      : null,
    solved: outcomes.length === 0 ? 0 : outcomes.filter((o) => o.correct > 0).length / outcomes.length,
    solvedWithFix: withFix
      ? outcomes.length === 0
        ? 0
        : outcomes.filter((o) => o.correctWithFix! > 0).length / outcomes.length
      : null,
    formatErrors: {
      turn1: shares(turn1.map((a) => a.formatError)),
      turn2: withFix ? shares(turn2.map((a) => a.formatError)) : null,
    },
    verdicts: shares(used.map((a) => a.status)),
    meanResponseTokens: mean(used.map((a) => a.tokens)),
    meanResponseChars: mean(used.map((a) => a.chars)),
    tokensPerSecond: wallSeconds > 0 && totalTokens > 0 ? totalTokens / wallSeconds : null,
    tokensPerSecondPerSequence: timed.length > 0 ? mean(timed.map((a) => a.tokens / (a.generateMs / 1000))) : null,
    leanSecondsPerCheck:
      checked.length > 0
        ? { mean: mean(checked.map((a) => a.leanSeconds!)), median: median(checked.map((a) => a.leanSeconds!)) }
        : null,
    verifySecondsPerCheck: checked.length > 0 ? mean(checked.map((a) => a.verifyMs / 1000)) : null,
    bySource: [...bySource.entries()]
      .sort((a, b) => sourceRank(a[0]) - sourceRank(b[0]) || a[0].localeCompare(b[0]))
      .map(([source, os]) => ({
        source,
        problems: os.length,
        solved: os.filter((o) => o.correct > 0).length,
        solvedWithFix: withFix ? os.filter((o) => o.correctWithFix! > 0).length : null,
      })),
    modes,
  };
}
