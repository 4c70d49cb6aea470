// Compares two runs on the problems both measured: pass@k side by side and every problem whose
// chance of being solved changed.
import type { EvalComparison, EvalReport, ProblemDifference } from '../protocol';
import { passAtK } from './passk';

export function compareReports(a: EvalReport, b: EvalReport): EvalComparison {
  const inB = new Map(b.problems.filter((p) => p.samples > 0).map((p) => [p.id, p]));
  const pairs = a.problems.filter((p) => p.samples > 0 && inB.has(p.id)).map((p) => ({ a: p, b: inB.get(p.id)! }));
  if (pairs.length === 0)
    throw new Error(`runs '${a.run.name}' and '${b.run.name}' have no measured problem in common`);
  const k = Math.min(...pairs.flatMap((p) => [p.a.samples, p.b.samples]));
  const curve = [];
  for (let j = 1; j <= k; j++) {
    curve.push({
      k: j,
      a: pairs.reduce((s, p) => s + passAtK(p.a.samples, p.a.correct, j), 0) / pairs.length,
      b: pairs.reduce((s, p) => s + passAtK(p.b.samples, p.b.correct, j), 0) / pairs.length,
    });
  }
  const changed: ProblemDifference[] = [];
  const onlyA: string[] = [];
  const onlyB: string[] = [];
  let both = 0;
  let neither = 0;
  for (const { a: pa, b: pb } of pairs) {
    const sa = pa.correct > 0;
    const sb = pb.correct > 0;
    if (sa && sb) both++;
    else if (sa) onlyA.push(pa.id);
    else if (sb) onlyB.push(pa.id);
    else neither++;
    const delta = passAtK(pb.samples, pb.correct, k) - passAtK(pa.samples, pa.correct, k);
    if (Math.abs(delta) > 1e-12 || pa.correct / pa.samples !== pb.correct / pb.samples) {
      changed.push({
        id: pa.id,
        source: pa.source,
        a: { correct: pa.correct, samples: pa.samples },
        b: { correct: pb.correct, samples: pb.samples },
        delta,
      });
    }
  }
  changed.sort((x, y) => Math.abs(y.delta) - Math.abs(x.delta) || x.id.localeCompare(y.id));
  return { a: a.run, b: b.run, k, common: pairs.length, passAtK: curve, onlyA, onlyB, both, neither, changed };
}
