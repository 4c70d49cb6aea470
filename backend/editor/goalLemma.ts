// Turns a goal as Lean prints it for a `sorry` ("x : ℝ\nh₀ : 2 * x = 8\n⊢ x = 4") into a standalone lemma
// statement ending in `:= by`, so the prover can prove it on its own and the proof can be spliced back.
// Like Mathlib's `extract_goal` the result may not round-trip for every goal (coercions, let-values):
// the spliced declaration is always re-checked by Lean before it is offered.

interface Hypothesis {
  names: string[];
  type: string;
}

const superscripts: Record<string, string> = {
  '⁰': '0',
  '¹': '1',
  '²': '2',
  '³': '3',
  '⁴': '4',
  '⁵': '5',
  '⁶': '6',
  '⁷': '7',
  '⁸': '8',
  '⁹': '9',
};

/** `x✝¹` (inaccessible names) cannot be written in source: give them accessible, distinct names. */
function accessible(text: string): string {
  return text.replace(
    /([\p{L}_][\p{L}\p{N}_'!?₀-₉]*)✝([⁰¹²³⁴⁵⁶⁷⁸⁹]*)/gu,
    (_m, name: string, sup: string) =>
      `${name}_${
        Array.from(sup)
          .map((c) => superscripts[c])
          .join('') || '0'
      }`,
  );
}

/** Splits a pretty-printed goal into hypotheses and the target. */
export function parseGoal(goal: string): { hypotheses: Hypothesis[]; target: string } {
  const hypotheses: Hypothesis[] = [];
  let target: string[] | null = null;
  for (const raw of accessible(goal).replace(/\r\n/g, '\n').split('\n')) {
    if (target) {
      target.push(raw);
      continue;
    }
    if (raw.startsWith('⊢')) {
      target = [raw.slice(1).trim()];
      continue;
    }
    if (/^case\s/.test(raw) || raw.trim() === '') continue;
    const colon = raw.indexOf(' : ');
    if (!/^\s/.test(raw) && colon > 0) {
      hypotheses.push({ names: raw.slice(0, colon).trim().split(/\s+/), type: raw.slice(colon + 3).trim() });
    } else if (hypotheses.length) {
      hypotheses[hypotheses.length - 1].type += ' ' + raw.trim();
    } else {
      throw new Error(`cannot read the goal line ${JSON.stringify(raw)}`);
    }
  }
  if (!target) throw new Error('the goal has no ⊢ line');
  return {
    hypotheses,
    target: target
      .map((l) => l.trim())
      .join(' ')
      .trim(),
  };
}

/** `theorem <name> (x : ℝ) (h₀ : …) : target := by`; instance hypotheses become `[…]` binders, let-values are dropped. */
export function goalToLemma(goal: string, name: string): string {
  const { hypotheses, target } = parseGoal(goal);
  const binders = hypotheses.map((h) => {
    const type = h.type.replace(/\s:=\s[\s\S]*$/, '');
    if (h.names.every((n) => /^inst(_\d+)?$/.test(n))) return `[${type}]`;
    return `(${h.names.join(' ')} : ${type})`;
  });
  const head = `theorem ${name}` + (binders.length ? ' ' + binders.join(' ') : '');
  return `${head} :\n    ${target} := by`;
}
