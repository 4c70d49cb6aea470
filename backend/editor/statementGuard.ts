// The guard that a splice leaves the user's statement alone, whatever the source reader says about where the
// statement ends. The text comparison: the spliced declaration must have the same name and, up to its
// statement's end, the same text as before. That only holds if the reader found the statement's real end:
// when the statement holds a word that can carry a `:=` of its own inside a type (`let x := 5; x = 6`) or a
// term the reader might take for the proof, the text cannot decide, and Lean compares the elaborated types:
// the declaration as it was and as it will be, both renamed and checked in the same context, then
// `example : type_of% @before = type_of% @after := by with_reducible rfl`. The old declaration's body may
// hold `sorry` or errors: Lean still adds it (error recovery), and only its type is compared. A different
// statement gives a different type (up to reducible unfolding, which cannot turn `x = 5` into `x = 6`), and
// a renamed binder is caught by the text comparison whenever the reader is right.
import { lexLean, tokenSpans } from '../lean/lexer';
import type { Declaration } from './leanSource';

/** Words after which a `:=` (or a term that holds one) may stand inside a statement's type. */
const TERM_WORDS: ReadonlySet<string> = new Set([
  'let',
  'letI',
  'have',
  'haveI',
  'fun',
  'λ',
  'match',
  'do',
  'show',
  'from',
  'suffices',
  'by',
  'calc',
]);

/**
 * The statement's text as the reader cut it: from the declaration's first modifier to its `:=`, or, with none (a
 * pattern-matching definition), to where Lean reads the statement as ending (its first `| pat =>` alternative).
 */
export function statementText(text: string, decl: Declaration): string | null {
  const end = decl.statementEnd ?? decl.statementStop ?? null;
  return end === null ? null : text.slice(decl.start, end);
}

/** Why the text comparison refuses the splice, or null when name and statement read the same. */
export function statementTextProblem(
  oldText: string,
  oldDecl: Declaration,
  newText: string,
  newDecl: Declaration,
): string | null {
  if (newDecl.name !== oldDecl.name || newDecl.kind !== oldDecl.kind)
    return `the declaration would become ${newDecl.kind} ${newDecl.name}, not ${oldDecl.kind} ${oldDecl.name}`;
  const before = statementText(oldText, oldDecl);
  const after = statementText(newText, newDecl);
  if (before === null || after === null || before !== after)
    return `the statement of ${oldDecl.name} would not read as before`;
  return null;
}

/** Whether the statement holds a word that can hide where it ends: then Lean compares the types. */
export function statementNeedsLean(statement: string): boolean {
  const tokens = lexLean(statement);
  const assigns = tokens.filter((t) => t.kind === 'symbol' && (t.text === ':=' || t.text === '=>')).length;
  return assigns > 1 || tokens.some((t) => t.kind === 'ident' && TERM_WORDS.has(t.text));
}

/**
 * The declaration's text with its name replaced by `fresh` (the last component only, so a dotted name keeps
 * its namespace: `Nat.foo` becomes `Nat.<fresh>`); an `example` becomes `theorem <fresh>`. Null when the
 * name cannot be found in the text (an anonymous instance, a «quoted» name).
 */
export function renamedDeclaration(declText: string, decl: Declaration, fresh: string): string | null {
  const tokens = lexLean(declText);
  const spans = tokenSpans(declText, tokens);
  const k = tokens.findIndex((t) => t.kind === 'ident' && t.text === decl.kind);
  if (k < 0) return null;
  if (decl.kind === 'example')
    return declText.slice(0, spans[k].start) + `theorem ${fresh}` + declText.slice(spans[k].end);
  const name = tokens[k + 1];
  if (name?.kind !== 'ident' || name.text !== decl.name || name.text.includes('«')) return null;
  const dot = name.text.lastIndexOf('.');
  const renamed = dot < 0 ? fresh : name.text.slice(0, dot + 1) + fresh;
  return declText.slice(0, spans[k + 1].start) + renamed + declText.slice(spans[k + 1].end);
}

/** The name a renamed declaration is referred to by from the same scope. */
function referenceOf(decl: Declaration, fresh: string): string {
  const dot = decl.kind === 'example' ? -1 : decl.name.lastIndexOf('.');
  return dot < 0 ? fresh : decl.name.slice(0, dot + 1) + fresh;
}

export const BEFORE_NAME = 'kimina_statement_before';
export const AFTER_NAME = 'kimina_statement_after';

/**
 * The snippet in which Lean compares the statement before and after the splice: the context `prefix` (header,
 * scope commands, earlier declarations), the old declaration renamed, the new one renamed, and the `example`
 * whose only possible error is that the two types differ. Null when a declaration cannot be renamed.
 */
export function comparisonSnippet(
  prefix: string,
  oldDeclText: string,
  oldDecl: Declaration,
  newDeclText: string,
  newDecl: Declaration,
): { code: string; afterLine: number } | null {
  const before = renamedDeclaration(oldDeclText, oldDecl, BEFORE_NAME);
  const after = renamedDeclaration(newDeclText, newDecl, AFTER_NAME);
  if (before === null || after === null) return null;
  const upToAfter = `${prefix}${before}\n\n`;
  const compare = `example : type_of% @${referenceOf(oldDecl, BEFORE_NAME)} = type_of% @${referenceOf(newDecl, AFTER_NAME)} := by\n  with_reducible rfl\n`;
  // errors in the old declaration's body (a repair's broken proof, a sorry) do not count; from `after` on all do
  return { code: `${upToAfter}${after}\n\n${compare}`, afterLine: upToAfter.split('\n').length };
}
