// A proof's budget: how long an answer may be, how many samples, how many fix turns. Presets (kimina.budget):
// quick (one short answer, no fix turn) and thorough (the recipe's full budget, 8 samples); custom uses
// kimina.maxTokens, kimina.samples and kimina.fixTurns. With the engine's measured speed it gives an estimate
// of the longest the proof can take. No VS Code API here.

export type BudgetPreset = 'quick' | 'thorough' | 'custom';

export interface Budget {
  preset: BudgetPreset;
  /** Tokens one answer may use (the engine cuts it to what the context leaves). */
  maxTokens: number;
  samples: number;
  fixTurns: number;
}

const budgetPresets: Record<Exclude<BudgetPreset, 'custom'>, Omit<Budget, 'preset'>> = {
  // one answer of up to 4,096 tokens: a few minutes at a laptop CPU's 10-30 tokens/s
  quick: { maxTokens: 4096, samples: 1, fixTurns: 0 },
  // the recipe's budget: answers up to 24,576 tokens (32,768 context − 8,192 prompt), pass@8 with one fix turn
  thorough: { maxTokens: 24576, samples: 8, fixTurns: 1 },
};

export function budgetOf(s: { budget: BudgetPreset; maxTokens: number; samples: number; fixTurns: number }): Budget {
  if (s.budget === 'quick' || s.budget === 'thorough') return { preset: s.budget, ...budgetPresets[s.budget] };
  return { preset: 'custom', maxTokens: s.maxTokens, samples: s.samples, fixTurns: s.fixTurns };
}

/** The most tokens the budget lets the engine write: every sample, every turn, each answer at its limit. */
function worstCaseTokens(b: Omit<Budget, 'preset'>): number {
  return b.maxTokens * b.samples * (1 + b.fixTurns);
}

function duration(seconds: number): string {
  const s = Math.max(0, Math.round(seconds));
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  return m < 60 ? `${m} min` : `${Math.floor(m / 60)} h ${m % 60} min`;
}

/** The budget in words, with the longest it can take at the measured speed (tokens/s, all samples together). */
export function budgetText(b: Budget, tokensPerSecond?: number): string {
  const limits = `answers up to ${b.maxTokens.toLocaleString('en-US')} tokens · ${b.samples} sample${b.samples === 1 ? '' : 's'} · ${b.fixTurns === 0 ? 'no fix turn' : `${b.fixTurns} fix turn${b.fixTurns === 1 ? '' : 's'}`}`;
  if (!tokensPerSecond || tokensPerSecond <= 0) return limits;
  return `${limits} · at most about ${duration(worstCaseTokens(b) / tokensPerSecond)} at ${tokensPerSecond.toFixed(1)} tok/s (measured)`;
}
