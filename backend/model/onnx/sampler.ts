// Next-token choice from logits: greedy at temperature 0, otherwise temperature + nucleus (top_p)
// sampling with a seeded generator, so a given seed always gives the same tokens.

/** mulberry32: a small, fast, seedable 32-bit generator returning floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One generator per batch row, derived from the request seed and the row index. */
export function rowRandom(seed: number, row: number): () => number {
  return seededRandom(Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(row + 1, 0xc2b2ae35));
}

export function argmax(logits: Float32Array): number {
  let best = 0;
  let bestValue = -Infinity;
  for (let i = 0; i < logits.length; i++) {
    if (logits[i] > bestValue) {
      bestValue = logits[i];
      best = i;
    }
  }
  return best;
}

/** The distribution a token is sampled from: the nucleus, in draw order, with unnormalised mass. */
export interface Nucleus {
  /** Candidate ids in the order draws walk them. */
  ids: number[];
  /** exp((logit - max) / temperature) of every id of the vocabulary (softmax numerators). */
  probs: Float32Array;
  /** Mass of the candidates (the nucleus); a candidate's sampling probability is probs[id] / total. */
  total: number;
  /** Whether every id is a candidate (top_p >= 1). */
  all: boolean;
}

/**
 * The nucleus at a temperature > 0, found exactly without sorting the whole vocabulary: tokens at or
 * above a probability threshold are sorted; if their mass reaches top_p the nucleus lies among them
 * (every excluded token is less likely), otherwise the threshold is lowered. Three passes over the
 * logits (max, exponentials, threshold), no normalisation pass, no allocation per token.
 */
export function nucleus(logits: Float32Array, temperature: number, topP: number): Nucleus {
  const n = logits.length;
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (logits[i] > max) max = logits[i];
  const probs = new Float32Array(n);
  const inv = 1 / temperature;
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const p = Math.exp((logits[i] - max) * inv);
    probs[i] = p;
    sum += p;
  }
  return nucleusOfWeights(probs, sum, topP);
}

/** The nucleus from probabilities the graph already computed (softmax at the temperature). */
function nucleusOfProbs(probs: Float32Array, topP: number): Nucleus {
  let sum = 0;
  for (let i = 0; i < probs.length; i++) sum += probs[i];
  return nucleusOfWeights(probs, sum, topP);
}

/** Scores as the decoder has them: logits, or the graph's softmax at the temperature. */
export type ScoreKind = 'logits' | 'probs';

function nucleusOf(scores: Float32Array, kind: ScoreKind, temperature: number, topP: number): Nucleus {
  return kind === 'probs' ? nucleusOfProbs(scores, topP) : nucleus(scores, temperature, topP);
}

function nucleusOfWeights(probs: Float32Array, sum: number, topP: number): Nucleus {
  const n = probs.length;
  const p = Math.min(Math.max(topP, 0), 1);
  let candidates: number[] = [];
  if (p >= 1) {
    for (let i = 0; i < n; i++) candidates.push(i);
  } else {
    const target = p * sum;
    for (let threshold = 1e-3; ; threshold /= 100) {
      candidates = [];
      let mass = 0;
      const cut = threshold * sum;
      for (let i = 0; i < n; i++) {
        if (probs[i] >= cut) {
          candidates.push(i);
          mass += probs[i];
        }
      }
      if (mass >= target || threshold < 1e-30) break;
    }
    candidates.sort((a, b) => probs[b] - probs[a] || a - b);
    let mass = 0;
    let keep = 0;
    while (keep < candidates.length) {
      mass += probs[candidates[keep++]];
      if (mass >= target) break;
    }
    candidates = candidates.slice(0, Math.max(1, keep));
  }
  let total = 0;
  for (const i of candidates) total += probs[i];
  return { ids: candidates, probs, total, all: p >= 1 };
}

/** Draws from the nucleus with one random number; `without` (a rejected draft) is left out and the rest renormalised. */
function draw(d: Nucleus, random: () => number, without = -1): number {
  const total = without >= 0 && inNucleus(d, without) ? d.total - d.probs[without] : d.total;
  let r = random() * total;
  let last = -1;
  for (const i of d.ids) {
    if (i === without) continue;
    last = i;
    r -= d.probs[i];
    if (r < 0) return i;
  }
  return last;
}

function inNucleus(d: Nucleus, id: number): boolean {
  return d.all ? id >= 0 && id < d.probs.length : d.ids.includes(id);
}

/** Sampling probability of `id` (0 outside the nucleus). */
export function nucleusProbability(d: Nucleus, id: number): number {
  return inNucleus(d, id) ? d.probs[id] / d.total : 0;
}

/** Samples one token: greedy (first maximum) at temperature 0, otherwise from the nucleus. */
export function sampleToken(
  logits: Float32Array,
  temperature: number,
  topP: number,
  random: () => number,
  kind: ScoreKind = 'logits',
): number {
  if (temperature <= 0) return argmax(logits);
  return draw(nucleusOf(logits, kind, temperature, topP), random);
}

/**
 * Speculative sampling with a deterministic draft (q is a point mass on `draft`): accept it with
 * probability p(draft), otherwise draw from p with the draft removed and renormalised. The token
 * returned is distributed exactly as `sampleToken` would draw it: P(x) = p(d)[x = d] + (1 - p(d)) p(x) / (1 - p(d)) [x != d] = p(x).
 * Greedy: the draft is accepted when it is the first maximum, else the maximum is returned.
 */
export function verifyDraft(
  logits: Float32Array,
  draft: number,
  temperature: number,
  topP: number,
  random: () => number,
  kind: ScoreKind = 'logits',
): { token: number; accepted: boolean } {
  if (temperature <= 0) {
    const best = argmax(logits);
    return { token: best, accepted: best === draft };
  }
  const d = nucleusOf(logits, kind, temperature, topP);
  const p = nucleusProbability(d, draft);
  if (p > 0 && random() < p) return { token: draft, accepted: true };
  return { token: draw(d, random, p > 0 ? draft : -1), accepted: false };
}
