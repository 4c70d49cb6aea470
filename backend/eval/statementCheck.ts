// Whether the prover accepts a benchmark statement: the declaration parser finds the theorem, the
// formal statement keeps its header and ends in `:= by`, the prompt carries it, and proof
// extraction finds it again in an answer that repeats it with a proof.
import { formalStatementOf, selectDeclaration } from '../lean/declarations';
import { extractProof, normalizeStatement, signatureOf } from '../prover/extract';
import { buildPrompt } from '../prover/prompt';

const sampleProof = '\n  nlinarith [sq_nonneg (1 : ℝ)]';
const squash = (s: string) => s.replace(/\s+/g, ' ').trim();

/** Problems found with `theorem` in `code`; empty when the prover accepts it. */
export function statementProblems(code: string, theorem: string): string[] {
  let decl;
  try {
    decl = selectDeclaration(code, { name: theorem });
  } catch (e) {
    return [`not found by the declaration parser: ${(e as Error).message}`];
  }
  const issues: string[] = [];
  if (decl.kind !== 'theorem' && decl.kind !== 'lemma') issues.push(`parsed as a ${decl.kind}`);
  if (!decl.tactic) issues.push('body not recognised as `:= by`');
  const formal = formalStatementOf(code, decl).text;
  if (!formal.trimEnd().endsWith(':= by')) issues.push('statement does not end in `:= by`');
  if (/^\s*import\s/m.test(code) && !/^\s*import\s/m.test(formal)) issues.push('the header (imports) was lost');
  const signature = signatureOf(normalizeStatement(formal));
  if (signature === null) issues.push('proof extraction finds no signature in the statement');
  else if (!signature.includes(theorem.replace(/^.*\./, '')))
    issues.push(`the extraction signature does not name the theorem: ${signature.slice(0, 60)}`);
  const answer = `<think>\n</think>\n\`\`\`lean4\n${formal}${sampleProof}\n\`\`\`\n`;
  const extracted = extractProof(answer, formal);
  if (!extracted.ok) issues.push(`proof extraction failed: ${extracted.reason}`);
  else if (extracted.proof !== sampleProof)
    issues.push(`the extracted proof differs: ${JSON.stringify(extracted.proof.slice(0, 80))}`);
  if (!buildPrompt(formal)[1].content.includes(formal)) issues.push('the prompt lacks the statement');
  return issues;
}

/**
 * For one-theorem files (miniF2F): the statement Lean checks must be the file itself less its
 * final `sorry`, nothing dropped or added (whitespace aside).
 */
export function statementMatchesFile(code: string, theorem: string): boolean {
  const formal = formalStatementOf(code, selectDeclaration(code, { name: theorem })).text;
  return squash(`${formal} sorry`) === squash(code);
}
