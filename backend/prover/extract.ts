// Proof extraction as the recipe does it (`extract_proof_from_text`, kimina-format.md §3): the trusted
// statement plus the model's text after the matching `:= by`; the model's copy of the statement is never used.
import { findDeclarations } from '../lean/declarations';
import { PY_SPACE, pyStrip } from '../model/pythonStrings';
import { pySplitlines, strictBlocks } from './pyText';

export const NO_STATEMENT = "Theorem statement couldn't be parsed from statement.";
export const NO_PROOF = 'No proof found in the output.';

export type Extraction =
  | { ok: true; code: string; statement: string; proof: string }
  | { ok: false; reason: typeof NO_STATEMENT | typeof NO_PROOF };

/** Trailing `sorry` dropped, and ` by` appended when the statement does not end in `by`. */
export function normalizeStatement(formalStatement: string): string {
  let s = pyStrip(formalStatement, null, 'right');
  if (s.endsWith('sorry')) s = pyStrip(s.slice(0, -5));
  if (!s.endsWith('by')) s += ' by';
  return s;
}

/**
 * The target theorem's signature. A statement holding one declaration (the recipe's case, miniF2F) gets the
 * recipe's rule byte for byte: the text between the first `theorem` (else `lemma`, else `example`) and the
 * first `:=` after it, trimmed. A statement that also holds earlier declarations of the user's file (see
 * formalStatementOf) ends with its target, so the same rule is applied from the last declaration on.
 */
export function signatureOf(statement: string): string | null {
  const decls = findDeclarations(statement);
  return recipeSignature(decls.length > 1 ? statement.slice(decls[decls.length - 1].head.offset) : statement);
}

function recipeSignature(statement: string): string | null {
  for (const keyword of ['theorem', 'lemma', 'example']) {
    const m = new RegExp(`${keyword}[${PY_SPACE}]*([\\s\\S]*?)[${PY_SPACE}]*:=`, 'u').exec(statement);
    if (m) return pyStrip(m[1]);
  }
  return null;
}

/** The recipe's `is_index_commented`: inside `/- … -/` (non-greedy) or after `--` on its line. */
export function isIndexCommented(code: string, index: number): boolean {
  if (index < 0 || index >= code.length) return false;
  for (const m of code.matchAll(/\/-[\s\S]*?-\//g)) {
    if (m.index <= index && index < m.index + m[0].length) return true;
  }
  let lineStart = 0;
  for (const line of pySplitlines(code)) {
    const dash = line.indexOf('--');
    if (dash >= 0 && lineStart <= index && index < lineStart + line.length && index >= lineStart + dash) return true;
    lineStart += line.length + 1;
  }
  return false;
}

const assignBy = new RegExp(`:=[${PY_SPACE}]*by`, 'u');

export function extractProof(response: string, formalStatement: string): Extraction {
  const statement = normalizeStatement(formalStatement);
  const signature = signatureOf(statement);
  if (signature === null) return { ok: false, reason: NO_STATEMENT };
  const blocks = strictBlocks(response, 'lean4');
  for (let k = blocks.length - 1; k >= 0; k--) {
    const block = blocks[k];
    const at = block.indexOf(signature);
    if (at < 0 || isIndexCommented(block, at)) continue;
    const by = assignBy.exec(block.slice(at));
    if (!by) continue;
    const proof = block.slice(at + by.index + by[0].length);
    return { ok: true, code: statement + proof, statement, proof };
  }
  return { ok: false, reason: NO_PROOF };
}
