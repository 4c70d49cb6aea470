// The strict verdict: valid only if Lean reported no error, no sorry (neither in `sorries` nor as the
// "declaration uses 'sorry'" warning, which is how admit and sorryAx show) and every audited
// declaration depends only on allowed axioms.
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

/** Reads the answer to one `#print axioms X` line. Anything unexpected counts as a failed audit. */
export function readAxiomAnswer(messages: ReplMessage[]): AxiomAnswer {
  const error = messages.find((m) => m.severity === 'error');
  if (error) return { ok: false, problem: error.data };
  for (const m of messages) {
    const text = m.data.replace(/\s+/g, ' ').trim();
    if (/^'.*' does not depend on any axioms$/.test(text)) return { ok: true, axioms: [] };
    const list = /^'.*' depends on axioms: \[(.*)\]$/.exec(text);
    if (list) return { ok: true, axioms: list[1].split(',').map((a) => a.trim()).filter(Boolean) };
  }
  return { ok: false, problem: messages.length ? `unexpected answer: ${messages[0].data.slice(0, 200)}` : 'no answer' };
}

export const sorryWarning = "declaration uses 'sorry'";

export interface JudgeInput {
  response: CommandResponse;
  /** Audited name -> messages of its `#print axioms` line. */
  audit: Map<string, ReplMessage[]>;
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
  for (const [name, answerMessages] of input.audit) {
    const answer = readAxiomAnswer(answerMessages);
    if (!answer.ok) { auditProblem ??= `Could not audit the axioms of '${name}': ${firstLine(answer.problem)}`; continue; }
    axiomsByDeclaration[name] = answer.axioms;
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
  const sorryWarnings = messages.filter((m) => m.severity === 'warning' && m.data.includes(sorryWarning));
  if (sorries.length > 0 || sorryWarnings.length > 0) {
    const where = sorries[0]?.pos?.line ?? sorryWarnings[0]?.pos.line;
    const how = sorries.length > 0 ? 'uses sorry' : "uses 'sorry' without a sorry tactic (admit, sorryAx or a sorry-producing macro)";
    return { ...base, status: 'sorry', reason: `The proof ${how}${where ? ` (line ${where})` : ''}.` };
  }
  if (auditProblem) return { ...base, status: 'lean_error', reason: auditProblem };
  if (forbidden.includes('sorryAx')) return { ...base, status: 'sorry', reason: 'The proof depends on sorryAx.' };
  if (forbidden.length > 0) {
    return { ...base, status: 'rejected', reason: `The proof depends on axioms outside the allow-list: ${forbidden.join(', ')}.` };
  }
  const reason = input.audit.size > 0
    ? `Lean accepted; axioms clean (${axioms.length ? axioms.join(', ') : 'none'}).`
    : 'Lean accepted (no theorem to audit for axioms).';
  return { ...base, status: 'valid', reason };
}

function firstLine(s: string): string { return s.split('\n')[0]; }
