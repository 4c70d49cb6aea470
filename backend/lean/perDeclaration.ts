// Splits one file's verdict into a verdict per declaration (for `kimina check`): messages and sorries
// are attributed by line to the declaration that contains them; axioms come from the audit.
import type { ReplMessage, Verdict, VerdictStatus } from '../protocol';
import { splitHeader } from './header';
import { type AuditedKind, findDeclarationHeads } from './declarations';
import type { CheckOutcome } from './types';
import { axiomAllowed, type AxiomPolicy, isSorryWarning } from './verdict';
import { DEFAULT_VERDICT_MODE, verdictModeRules, type VerdictMode } from './verdictModes';

export interface DeclarationVerdict {
  kind: AuditedKind;
  /** Full name; `example` declarations are shown as `example` (audited as `example (line N)`, see auditPlan.ts). */
  name: string;
  line: number;
  status: VerdictStatus;
  reason: string;
  axioms?: string[];
}

/** `mode` recipe: kimina-client's rule per declaration (no error inside, no REPL-listed sorry inside; no audit, no warnings). */
export function verdictsPerDeclaration(
  code: string,
  outcome: CheckOutcome,
  policy: AxiomPolicy,
  mode: VerdictMode = DEFAULT_VERDICT_MODE,
): { declarations: DeclarationVerdict[]; fileProblems: ReplMessage[] } {
  const v: Verdict = outcome.verdict;
  const { headerLines } = splitHeader(code);
  const decls = findDeclarationHeads(code).filter((d) => d.line > headerLines);
  const named = decls.map((d) => ({ ...d, auditName: d.name || `${d.kind} (line ${d.line})` }));
  const lineEnd = (i: number): number => (i + 1 < named.length ? named[i + 1].line - 1 : Number.MAX_SAFE_INTEGER);
  const firstLine = named[0]?.line ?? Number.MAX_SAFE_INTEGER;
  const fileProblems = v.messages.filter((m) => m.severity === 'error' && m.pos.line < firstLine);
  const ranOk =
    outcome.response !== undefined &&
    ['valid', 'sorry', 'lean_error', 'rejected'].includes(v.status) &&
    outcome.verdict.messages.every((m) => !m.data.startsWith('kimina: rejected before Lean'));

  const declarations = named.map((d, i): DeclarationVerdict => {
    const base = { kind: d.kind, name: d.kind === 'example' ? 'example' : d.name, line: d.line };
    const inside = (line: number): boolean => line >= d.line && line <= lineEnd(i);
    if (!ranOk) {
      const own = v.messages.find((m) => m.severity === 'error' && inside(m.pos.line));
      return { ...base, status: v.status, reason: own ? own.data.replace(/^kimina: /, '') : v.reason };
    }
    const error = v.messages.find((m) => m.severity === 'error' && inside(m.pos.line));
    if (error) return { ...base, status: 'lean_error', reason: `line ${error.pos.line}: ${error.data.split('\n')[0]}` };
    const listedSorry = v.sorries.some((s) => s.pos && inside(s.pos.line));
    if (!verdictModeRules[mode].auditsDeclarations) {
      return listedSorry
        ? { ...base, status: 'sorry', reason: "the REPL lists a sorry (kimina-client's rule)" }
        : { ...base, status: 'valid', reason: "no error, no sorry listed (kimina-client's rule; axioms not audited)" };
    }
    const sorryHere = listedSorry || v.messages.some((m) => isSorryWarning(m) && inside(m.pos.line));
    const axioms = v.axiomsByDeclaration?.[d.auditName];
    if (sorryHere || axioms?.includes('sorryAx'))
      return { ...base, status: 'sorry', reason: 'uses sorry (or admit/sorryAx)', ...(axioms ? { axioms } : {}) };
    if (axioms) {
      const forbidden = axioms.filter((a) => !axiomAllowed(a, policy));
      if (forbidden.length)
        return {
          ...base,
          status: 'rejected',
          reason: `depends on axioms outside the allow-list: ${forbidden.join(', ')}`,
          axioms,
        };
      return {
        ...base,
        status: 'valid',
        reason: `axioms clean (${axioms.length ? axioms.join(', ') : 'none'})`,
        axioms,
      };
    }
    // every kind listed here is audited (auditPlan.ts): no answer under its name is a failed audit, never a pass
    return { ...base, status: 'lean_error', reason: 'axioms were not audited' };
  });
  return { declarations, fileProblems };
}
