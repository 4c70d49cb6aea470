// Accept after the file changed: the pending proposal's edit is checked again on the document as it is now
// before it is written (extension/proposal.ts asks through `kimina/recheck`). The same rule as the splice
// (splice.ts) on the same edit: it stays inside its declaration, Lean's lexer reads the text around it as
// before, the declaration keeps its name and statement (statementGuard.ts, Lean comparing where the text
// cannot decide), and Lean accepts the declaration in place: valid, or exactly its remaining sorries.
import type { RecheckParams, RecheckResult } from '../protocol';
import { declarationAt, findDeclarations, offsetAt, standaloneSnippet } from './leanSource';
import { sameStatementInLean, spliceProblem } from './splice';
import { statementTextProblem } from './statementGuard';
import type { CheckAnswer } from './service';

/** Lean on a snippet of the file; `userLength`: its prefix that is the user's own code (the rest is checked strictly). */
type Check = (code: string, signal?: AbortSignal, userLength?: number) => Promise<CheckAnswer>;

export async function recheckProposal(
  params: RecheckParams,
  check: Check,
  signal?: AbortSignal,
): Promise<RecheckResult> {
  const text = params.code;
  const refuse = (problem: string): RecheckResult => ({ ok: false, problem });
  const decl = declarationAt(findDeclarations(text), params.declarationLine);
  if (!decl || decl.startLine !== params.declarationLine)
    return refuse('its declaration is no longer where the proposal stands');
  const from = offsetAt(text, params.edit.range.start.line, params.edit.range.start.character);
  const to = offsetAt(text, params.edit.range.end.line, params.edit.range.end.character);
  if (from < decl.start || to > decl.end || from > to) return refuse('the edit no longer lies inside its declaration');
  const newText = text.slice(0, from) + params.edit.newText + text.slice(to);
  const structural = spliceProblem(text, from, to, newText);
  if (structural) return refuse(structural);
  const newDecl = findDeclarations(newText).find((d) => d.start === decl.start);
  if (!newDecl) return refuse('the declaration is not found with the edit applied');
  const renamed = statementTextProblem(text, decl, newText, newDecl);
  if (renamed) return refuse(renamed);
  const { code, declOffset } = standaloneSnippet(newText, newDecl);
  const { verdict } = await check(code, signal, declOffset);
  const errors = verdict.messages.some((m) => m.severity === 'error');
  const sorriesLeft = newDecl.sorries.length;
  const accepted =
    sorriesLeft === 0
      ? verdict.status === 'valid'
      : verdict.status === 'sorry' && !errors && verdict.sorries.length === sorriesLeft;
  if (!accepted) return refuse(`Lean does not accept the declaration as it would be written now: ${verdict.reason}`);
  const compared = await sameStatementInLean({ text, decl, newText, newDecl }, check, { signal });
  if (compared) return refuse(compared);
  return { ok: true };
}
