// The strict verdict: valid only if Lean reported no error, no sorry (neither in `sorries` nor as the
// sorry warning, which is how admit and sorryAx show), at least one declaration was audited, and every
// audited declaration depends only on allowed axioms. The audit is what cannot be silenced: the warning
// can be (`set_option warn.sorry false`, `#guard_msgs`), so `sorryAx` in an audit answer is a sorry too.
import type { CommandResponse, ReplMessage, ReplSorry, Verdict } from '../protocol';

export const defaultAllowedAxioms = ['propext', 'Classical.choice', 'Quot.sound'];

export interface AxiomPolicy {
  allowed: readonly string[];
  /** Also allow what native_decide/bv_decide depend on: Lean.ofReduceBool, Lean.trustCompiler, `*._native.*`. */
  allowNativeDecide: boolean;
}

export function axiomAllowed(name: string, policy: AxiomPolicy): boolean {
  if (policy.allowed.includes(name)) return true;
  if (!policy.allowNativeDecide) return false;
  return name === 'Lean.ofReduceBool' || name === 'Lean.trustCompiler' || name.split('.').includes('_native');
}

export type AxiomAnswer = { ok: true; axioms: string[] } | { ok: false; problem: string };

/**
 * A declaration name as its components, as Lean reads it: dots inside `«»` do not split, the `«»` are
 * dropped, and a private name's `_private.<module>.0.` prefix is dropped (Lean prints it, the source does
 * not). So `«A.B».t` (two components) and `A.B.t` (three) stay different names.
 */
export function nameComponents(name: string): string[] {
  const parts: string[] = [];
  let current = '',
    quoted = false;
  for (const ch of name) {
    if (ch === '«' && !quoted) {
      quoted = true;
      continue;
    }
    if (ch === '»' && quoted) {
      quoted = false;
      continue;
    }
    if (ch === '.' && !quoted) {
      parts.push(current);
      current = '';
    } else current += ch;
  }
  parts.push(current);
  if (parts[0] === '_private') {
    const zero = parts.indexOf('0');
    if (zero > 0) return parts.slice(zero + 1);
  }
  return parts;
}

/** Whether the name an answer prints is `expected` (a source or caller name, maybe `_root_.`-prefixed). */
export function sameDeclarationName(printed: string, expected: string): boolean {
  const a = nameComponents(printed);
  const b = nameComponents(expected.replace(/^_root_\./, ''));
  return a.length === b.length && a.every((part, i) => part === b[i]);
}

/**
 * Reads the answer to one `#print axioms _root_.NAME` line. It must be exactly one answer and it must name
 * `expected` (so neither an `open`, a `namespace`, an `export` alias nor a second constant can stand in for
 * the checked declaration); anything else counts as a failed audit.
 */
export function readAxiomAnswer(messages: ReplMessage[], expected?: string): AxiomAnswer {
  const error = messages.find((m) => m.severity === 'error');
  if (error) return { ok: false, problem: error.data };
  const answers: { name: string; axioms: string[] }[] = [];
  for (const m of messages) {
    const text = m.data.replace(/\s+/g, ' ').trim();
    const none = /^'(.*)' does not depend on any axioms$/.exec(text);
    const list = none ? null : /^'(.*)' depends on axioms: \[(.*)\]$/.exec(text);
    if (none) answers.push({ name: none[1], axioms: [] });
    else if (list)
      answers.push({
        name: list[1],
        axioms: list[2]
          .split(',')
          .map((a) => a.trim())
          .filter(Boolean),
      });
  }
  if (answers.length === 0)
    return {
      ok: false,
      problem: messages.length ? `unexpected answer: ${messages[0].data.slice(0, 200)}` : 'no answer',
    };
  if (answers.length > 1)
    return {
      ok: false,
      problem: `${answers.length} answers (${answers.map((a) => `'${a.name}'`).join(', ')}) for one name`,
    };
  const [answer] = answers;
  if (expected !== undefined && !sameDeclarationName(answer.name, expected)) {
    return { ok: false, problem: `the answer names '${answer.name}', not '${expected}'` };
  }
  return { ok: true, axioms: answer.axioms };
}

/**
 * Lean's sorry warning, in both spellings: ``declaration uses `sorry` `` since v4.28.0-rc1 and
 * `declaration uses 'sorry'` before (leanprover-community/repl recordings at v4.33.0-rc2 and v4.27.0).
 */
const sorryWarningTexts = ['declaration uses `sorry`', "declaration uses 'sorry'"] as const;

export function isSorryWarning(m: ReplMessage): boolean {
  return m.severity === 'warning' && sorryWarningTexts.some((t) => m.data.includes(t));
}

export interface JudgeInput {
  response: CommandResponse;
  /** Audited full name -> messages of its `#print axioms` line. */
  audit: Map<string, ReplMessage[]>;
  /** Shown name per audited name, where it differs (an example's audit copy: `example (line 5)`). */
  labels?: Map<string, string>;
  /** Errors of the audit copy (examples and anonymous instances named): any of them fails the audit. */
  copyErrors?: ReplMessage[];
  policy: AxiomPolicy;
  time: number;
}

/** The verdict for a body that Lean answered (errors before Lean are judged by the verifier). */
export function judgeResponse(input: JudgeInput): Verdict {
  const messages = input.response.messages ?? [];
  const sorries: ReplSorry[] = input.response.sorries ?? [];
  // the audit is read first, so every verdict carries what it found (per-declaration reports need it)
  const axiomsByDeclaration: Record<string, string[]> = {};
  const all = new Set<string>();
  let auditProblem: string | undefined;
  const copyError = input.copyErrors?.find((m) => m.severity === 'error');
  if (copyError)
    auditProblem = `Could not audit the axioms of the examples: their audit copy failed (${firstLine(copyError.data)})`;
  for (const [name, answerMessages] of input.audit) {
    const label = input.labels?.get(name) ?? name;
    const answer = readAxiomAnswer(answerMessages, name);
    if (!answer.ok) {
      auditProblem ??= `Could not audit the axioms of '${label}': ${firstLine(answer.problem)}`;
      continue;
    }
    axiomsByDeclaration[label] = answer.axioms;
    for (const a of answer.axioms) all.add(a);
  }
  const axioms = [...all].sort();
  const forbidden = axioms.filter((a) => !axiomAllowed(a, input.policy));
  const base = { messages, sorries, time: input.time, axioms, forbiddenAxioms: forbidden, axiomsByDeclaration };

  const errors = messages.filter((m) => m.severity === 'error');
  if (errors.length > 0) {
    const first = errors[0];
    return { ...base, status: 'lean_error', reason: `Lean error at line ${first.pos.line}: ${firstLine(first.data)}` };
  }
  const sorryWarnings = messages.filter(isSorryWarning);
  if (sorries.length > 0 || sorryWarnings.length > 0) {
    const where = sorries[0]?.pos?.line ?? sorryWarnings[0]?.pos.line;
    const how =
      sorries.length > 0
        ? 'uses sorry'
        : "uses 'sorry' without a sorry tactic (admit, sorryAx or a sorry-producing macro)";
    return { ...base, status: 'sorry', reason: `The proof ${how}${where ? ` (line ${where})` : ''}.` };
  }
  if (auditProblem) return { ...base, status: 'lean_error', reason: auditProblem };
  if (input.audit.size === 0) {
    return {
      ...base,
      status: 'rejected',
      reason:
        'Nothing was audited: the snippet declares no theorem, lemma, example, def or instance, so nothing was proved.',
    };
  }
  if (forbidden.includes('sorryAx')) {
    const where = Object.entries(axiomsByDeclaration)
      .filter(([, a]) => a.includes('sorryAx'))
      .map(([n]) => `'${n}'`);
    return { ...base, status: 'sorry', reason: `The proof depends on sorryAx (${where.join(', ')}).` };
  }
  if (forbidden.length > 0) {
    return {
      ...base,
      status: 'rejected',
      reason: `The proof depends on axioms outside the allow-list: ${forbidden.join(', ')}.`,
    };
  }
  return {
    ...base,
    status: 'valid',
    reason: `Lean accepted; axioms clean (${axioms.length ? axioms.join(', ') : 'none'}).`,
  };
}

function firstLine(s: string): string {
  return s.split('\n')[0];
}
