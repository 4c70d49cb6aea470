// What `ProveResult.tactics` promises every client of the public API: the body the editor's splice rule would
// write, and nothing after it. A verified answer may carry commands after its proof (`variable (hf : False)`,
// `include hf`, `open …`, `namespace …`): Lean checked them after the theorem, so they did not change its
// verdict, but a client that writes `tactics` into a file would write them too. So the text is taken as an
// editor stores it (lineBreaks.ts), cut to the body (splice.ts cutToBody), and when that changed anything the
// statement with the cut body is checked again: `proved` only when Lean accepts exactly that, else `not_proved`.
import type { ProveResult } from '../protocol';
import type { CheckAnswer } from './service';
import { storedProofText } from './lineBreaks';
import { cutToBody } from './splice';

type Check = (code: string, signal?: AbortSignal) => Promise<CheckAnswer>;

/** `result` with `tactics` (and `proof`) as the splice rule would write them, or no longer `proved`, with why. */
export async function publishedResult(result: ProveResult, check: Check, signal?: AbortSignal): Promise<ProveResult> {
  if (result.status !== 'proved' || result.proof === null || result.tactics == null) return result;
  const { proof, tactics } = result;
  const refuse = (problem: string): ProveResult => ({
    ...result,
    status: 'not_proved',
    proof: null,
    tactics: null,
    problem,
  });
  const stored = storedProofText(tactics);
  if ('problem' in stored) return refuse(`The verified proof cannot be published: ${stored.problem}.`);
  const { body } = cutToBody(stored.text);
  if (body.trim() === '') return refuse('The verified answer holds no proof before its first command.');
  if (body === tactics) return result;
  const statement = proof.slice(0, proof.length - tactics.length);
  const code = statement + body;
  const { verdict } = await check(code, signal);
  if (verdict.status !== 'valid')
    return refuse(
      `Lean does not accept the proof without the commands that followed it in the answer: ${verdict.reason}`,
    );
  return { ...result, proof: code, tactics: body };
}
