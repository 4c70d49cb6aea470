// Scheduling for the first verified proof (issue 32): a cost model of the device and the choice of how many
// samples decode at once.
//
// Cost model: one decode step of `rows` rows holding `cached` tokens in all costs
//   stepMs = a + m·(rows − 1) + b·cached
// (a: the weights read once per step; m: each further row's own compute; b: the KV cache read per cached
// token). A short calibration measures it on the device (`calibrate`), once, stored beside the model.
//
// What it is for: a sample succeeds (Lean accepts its proof) with probability p; samples decode in waves of
// `rows` (one generate call), each row leaving when its answer ends, and each answer is checked by Lean while
// the others still decode. The expected time to the first verified proof is estimated over a stated
// synthetic length distribution (the recipe's answer lengths) with a fixed seed, for each row count; the
// count with the least expected time is chosen. On a CPU at Kimina's lengths that is few rows (every row
// reads its own cache); on a GPU, where a step costs little more for more rows, several.

/** Per-step cost, milliseconds: a + m·(rows − 1) + b·cached (cached: tokens held by all rows together). */
export interface StepCost {
  a: number;
  m: number;
  b: number;
}

export function stepMs(cost: StepCost, rows: number, cached: number): number {
  return cost.a + cost.m * Math.max(0, rows - 1) + cost.b * cached;
}

/** A device the calibration can time: one decode step of `rows` rows at `cached` tokens per row, in ms. */
export type TimeStep = (rows: number, cachedPerRow: number) => Promise<number>;

/** The calibration's points: one row short and long, several rows short. */
const CALIBRATION_POINTS = { shortCached: 32, longCached: 4096, rows: 4 };

/**
 * Fits the cost model from three timed points (each the fastest of `repeats`, as the machine may be
 * shared): one row at 32 and 4,096 cached tokens gives a and b (fewer for a model with a shorter context);
 * four rows at 32 gives m.
 */
export async function calibrate(
  time: TimeStep,
  repeats = 3,
  longCached = CALIBRATION_POINTS.longCached,
): Promise<StepCost> {
  const { shortCached, rows } = CALIBRATION_POINTS;
  const best = async (r: number, c: number) => {
    let m = Infinity;
    for (let i = 0; i < repeats; i++) m = Math.min(m, await time(r, c));
    return m;
  };
  const short1 = await best(1, shortCached);
  const long1 = await best(1, longCached);
  const shortR = await best(rows, shortCached);
  const b = Math.max(0, (long1 - short1) / (longCached - shortCached));
  const a = Math.max(0, short1 - b * shortCached);
  const m = Math.max(0, (shortR - a - b * shortCached * rows) / (rows - 1));
  return { a, m, b };
}

/** The synthetic answers the estimate assumes, stated so every figure built on it says what it assumed. */
export interface AnswerModel {
  /** Answer length distribution: Gamma(shape, mean/shape), capped at maxTokens (a capped answer fails). */
  meanTokens: number;
  shape: number;
  maxTokens: number;
  promptTokens: number;
  /** Probability that a complete answer's proof verifies. */
  success: number;
  /** Seconds Lean takes to check one answer (runs while decoding goes on). */
  checkSeconds: number;
}

/**
 * The recipe's answers (project-numina/kimina-prover-rl): up to 24,576 tokens, mean grown to about 12,300
 * by the end of RL; a Gamma of shape 3 puts about 4% of answers at the cap. Success 0.4 per sample (the
 * figure engines.md uses), Lean 10 s per check.
 */
export const RECIPE_ANSWERS: AnswerModel = {
  meanTokens: 12_300,
  shape: 3,
  maxTokens: 24_576,
  promptTokens: 500,
  success: 0.4,
  checkSeconds: 10,
};

/** A seeded generator (mulberry32): the estimate is the same number on every run. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Gamma(k, θ) for integer-ish k ≥ 1 by Marsaglia–Tsang. */
function gamma(next: () => number, k: number, theta: number): number {
  const d = k - 1 / 3;
  const c = 1 / Math.sqrt(9 * d);
  for (;;) {
    let x: number;
    let v: number;
    do {
      const u1 = next() || 1e-12;
      const u2 = next();
      x = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
      v = 1 + c * x;
    } while (v <= 0);
    v = v * v * v;
    const u = next();
    if (Math.log(u || 1e-12) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v * theta;
  }
}

/** Decode seconds of one wave: when each row's answer ends, rows leaving as they finish. */
export function waveFinishTimes(cost: StepCost, promptTokens: number, lengths: number[]): number[] {
  const order = lengths.map((l, i) => ({ l, i })).sort((x, y) => x.l - y.l);
  const finish = new Array<number>(lengths.length);
  let t = 0;
  let done = 0; // tokens decoded by every running row so far
  let running = lengths.length;
  for (const { l, i } of order) {
    const steps = l - done;
    if (steps > 0) {
      // Per row cached grows from promptTokens + done to promptTokens + l: the mean over the steps.
      const meanCachedPerRow = promptTokens + (done + l) / 2;
      t += (steps * stepMs(cost, running, running * meanCachedPerRow)) / 1000;
      done = l;
    }
    finish[i] = t;
    running--;
  }
  return finish;
}

export interface Estimate {
  rows: number;
  /** Expected seconds to the first verified proof (Monte Carlo mean, seeded). */
  expectedSeconds: number;
  /** Seconds one answer of the mean length takes alone. */
  meanAnswerSeconds: number;
}

/** Expected time to the first verified proof when samples decode `rows` at a time, in waves. */
export function expectedFirstProof(cost: StepCost, rows: number, answers = RECIPE_ANSWERS, trials = 2000): Estimate {
  const next = random(0x5eed + rows);
  let total = 0;
  for (let trial = 0; trial < trials; trial++) {
    let start = 0;
    for (let wave = 0; ; wave++) {
      const lengths = Array.from({ length: rows }, () =>
        Math.min(Math.round(gamma(next, answers.shape, answers.meanTokens / answers.shape)), answers.maxTokens),
      );
      const finish = waveFinishTimes(cost, answers.promptTokens, lengths);
      // Lean checks each answer as it ends (while the others decode); the first that verifies wins.
      let first = Infinity;
      lengths.forEach((l, i) => {
        const ok = l < answers.maxTokens && next() < answers.success;
        if (ok) first = Math.min(first, finish[i] + answers.checkSeconds);
      });
      const waveEnd = Math.max(...finish);
      if (first < Infinity) {
        total += start + first;
        break;
      }
      start += waveEnd;
      if (wave > 10_000) throw new Error('internal: no proof in 10,000 waves (success probability 0?)');
    }
  }
  const meanAnswerSeconds = waveFinishTimes(cost, answers.promptTokens, [answers.meanTokens])[0];
  return { rows, expectedSeconds: total / trials, meanAnswerSeconds };
}

/** The row count (of `candidates`) with the least expected time to the first verified proof, and every estimate. */
export function chooseRows(
  cost: StepCost,
  answers = RECIPE_ANSWERS,
  candidates = [1, 2, 4, 8],
): { rows: number; estimates: Estimate[] } {
  const estimates = candidates.map((r) => expectedFirstProof(cost, r, answers));
  const best = estimates.reduce((x, y) => (y.expectedSeconds < x.expectedSeconds ? y : x));
  return { rows: best.rows, estimates };
}

/**
 * The most rows whose caches at `tokens` tokens each fit `share` of the memory beside the weights (a 16 GB
 * laptop: 0.5 of 16 GiB, leaving the rest to the editor, Lean and the OS).
 */
export function rowsThatFit(
  bytesPerToken: number,
  tokens: number,
  totalMemory: number,
  weightBytes: number,
  share = 0.5,
): number {
  const room = share * totalMemory - weightBytes;
  return Math.max(0, Math.floor(room / (bytesPerToken * tokens)));
}

/** The row count an engine decodes at once and its grounds (Engine.schedule). */
export interface Schedule {
  /** Samples decoded at once: one wave. */
  rows: number;
  /** Where `rows` comes from: the calibrated cost model, or the kimina.rowsAtOnce setting (KIMINA_ROWS_AT_ONCE). */
  from: 'calibration' | 'setting';
  /** The device's cost model; absent where nothing could be calibrated (a path without a step probe). */
  cost?: StepCost;
  /** The expected time to the first verified proof of each candidate row count (empty without a cost). */
  estimates: Estimate[];
  /** The calibration ran in this process (first run on this device), rather than being read back. */
  calibratedNow: boolean;
  /** Expected seconds to the first verified proof at `rows` over the recipe's answers; absent without a cost. */
  expectedFirstProofSeconds?: number;
  /** kimina.rowsAtOnce as set, where it was lowered to `rows`: more rows' caches would not fit the memory. */
  loweredFrom?: number;
}

/**
 * The schedule from a cost model (or none) and an override: the override's rows when it is above 0, else the
 * candidate with the least expected time to the first verified proof; undefined when neither is there. `fit`:
 * the most rows whose caches fit the memory (memoryPlan.ts); an override above it is lowered to it (one row at
 * the least), and the schedule says so.
 */
export function scheduleOf(
  cost: StepCost | undefined,
  options: {
    candidates?: number[];
    override?: number;
    fit?: number;
    calibratedNow?: boolean;
    answers?: AnswerModel;
  } = {},
): Schedule | undefined {
  const asked = Math.floor(options.override ?? 0);
  const override = options.fit === undefined ? asked : Math.min(asked, Math.max(1, Math.floor(options.fit)));
  const answers = options.answers ?? RECIPE_ANSWERS;
  if (!cost && override < 1) return undefined;
  const choice = cost ? chooseRows(cost, answers, options.candidates) : { rows: override, estimates: [] };
  const rows = override >= 1 ? override : choice.rows;
  const expected = cost
    ? (choice.estimates.find((e) => e.rows === rows) ?? expectedFirstProof(cost, rows, answers)).expectedSeconds
    : undefined;
  return {
    rows,
    from: override >= 1 ? 'setting' : 'calibration',
    cost,
    estimates: choice.estimates,
    calibratedNow: options.calibratedNow ?? false,
    ...(expected === undefined ? {} : { expectedFirstProofSeconds: expected }),
    ...(override < asked ? { loweredFrom: asked } : {}),
  };
}

/** Where the rows came from, in words: "kimina.rowsAtOnce", "kimina.rowsAtOnce 16 lowered to 2 by memory". */
export function settingWords(s: Schedule): string {
  return s.loweredFrom === undefined
    ? 'kimina.rowsAtOnce'
    : `kimina.rowsAtOnce ${s.loweredFrom} lowered to ${s.rows}: more rows' caches at ${RECIPE_ANSWERS.maxTokens.toLocaleString('en-US')}-token answers would not fit half the memory`;
}

/** The cost model in words: "25.0 ms + 20.0 ms per further row + 8.00 µs per cached token a step". */
export function costWords(cost: StepCost): string {
  return `${cost.a.toFixed(1)} ms + ${cost.m.toFixed(1)} ms per further row + ${(cost.b * 1000).toFixed(2)} µs per cached token a step`;
}

/**
 * The longest decoding can take under the cost model: `samples` in waves of `rows`, every answer at `maxTokens`,
 * each of `turns` turns alike (Lean's checks overlap the decoding and are left out).
 */
export function worstCaseSeconds(
  cost: StepCost,
  budget: { rows: number; samples: number; maxTokens: number; turns: number; promptTokens?: number },
): number {
  const prompt = budget.promptTokens ?? RECIPE_ANSWERS.promptTokens;
  let seconds = 0;
  for (let left = budget.samples; left > 0; left -= budget.rows) {
    const wave = Math.min(budget.rows, left);
    seconds += Math.max(...waveFinishTimes(cost, prompt, Array(wave).fill(budget.maxTokens)));
  }
  return seconds * budget.turns;
}

/** Seconds as the status lines say them: "~40 s", "~12 min". */
export function aboutTime(seconds: number): string {
  return seconds < 90 ? `~${Math.round(seconds)} s` : `~${Math.round(seconds / 60)} min`;
}

/**
 * A schedule in words, for status lines: "calibrated 25.0 ms + … a step: 1 row at once (expected first proof ~58
 * min over the recipe's answers)", with "(kimina.rowsAtOnce)" after the rows when the setting chose them.
 */
export function scheduleWords(s: Schedule): string {
  const rows = `${s.rows} row${s.rows === 1 ? '' : 's'} at once${s.from === 'setting' ? ` (${settingWords(s)})` : ''}`;
  const expected =
    s.expectedFirstProofSeconds === undefined
      ? ''
      : ` (expected first proof ${aboutTime(s.expectedFirstProofSeconds)} over the recipe's answers)`;
  return s.cost ? `calibrated ${costWords(s.cost)}: ${rows}${expected}` : `${rows}${expected}`;
}
