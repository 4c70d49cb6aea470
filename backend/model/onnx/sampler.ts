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

/**
 * Samples one token. The nucleus is found exactly without sorting the whole vocabulary: tokens at or
 * above a probability threshold are sorted; if their mass reaches top_p the nucleus lies among them
 * (every excluded token is less likely), otherwise the threshold is lowered.
 */
export function sampleToken(logits: Float32Array, temperature: number, topP: number, random: () => number): number {
  if (temperature <= 0) return argmax(logits);
  const n = logits.length;
  let max = -Infinity;
  for (let i = 0; i < n; i++) if (logits[i] > max) max = logits[i];
  const probs = new Float32Array(n);
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const p = Math.exp((logits[i] - max) / temperature);
    probs[i] = p;
    sum += p;
  }
  for (let i = 0; i < n; i++) probs[i] /= sum;
  const p = Math.min(Math.max(topP, 0), 1);
  let candidates: number[] = [];
  if (p >= 1) {
    for (let i = 0; i < n; i++) candidates.push(i);
  } else {
    for (let threshold = 1e-3; ; threshold /= 100) {
      candidates = [];
      let mass = 0;
      for (let i = 0; i < n; i++) {
        if (probs[i] >= threshold) {
          candidates.push(i);
          mass += probs[i];
        }
      }
      if (mass >= p || threshold < 1e-30) break;
    }
    candidates.sort((a, b) => probs[b] - probs[a] || a - b);
    let mass = 0;
    let keep = 0;
    while (keep < candidates.length) {
      mass += probs[candidates[keep++]];
      if (mass >= p) break;
    }
    candidates = candidates.slice(0, Math.max(1, keep));
  }
  let total = 0;
  for (const i of candidates) total += probs[i];
  let r = random() * total;
  for (const i of candidates) {
    r -= probs[i];
    if (r < 0) return i;
  }
  return candidates[candidates.length - 1];
}
