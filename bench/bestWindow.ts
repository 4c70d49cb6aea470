// On a shared machine other processes steal CPU in bursts; every engine is therefore scored the same
// way: tokens/s of its fastest run of `window` consecutive decode steps.
export function bestWindowRate(stepMs: number[], window = 4, rowsPerStep = 1): number {
  const w = Math.min(window, stepMs.length);
  if (w === 0) return NaN;
  let best = Infinity;
  for (let i = 0; i + w <= stepMs.length; i++) {
    let sum = 0;
    for (let j = i; j < i + w; j++) sum += stepMs[j];
    best = Math.min(best, sum / w);
  }
  return (1000 / best) * rowsPerStep;
}
