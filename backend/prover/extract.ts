// Proof extraction as the recipe does it (`extract_proof_from_text`, kimina-format.md §3): the trusted
// statement plus the model's text after the matching `:= by`; the model's copy of the statement is never used.
// Beyond the recipe: an answer restating the target differently (another header, namespace, line breaks) is
// read by the target's name.
import { components, plain } from '../lean/auditPlan';
import { type Declaration, findDeclarations, maskLean } from '../lean/declarations';
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
  const target = decls[decls.length - 1];
  const own = decls.length > 1 ? statement.slice(target.head.offset) : statement;
  const recipe = recipeSignature(own);
  // A statement that itself holds `:=` (`theorem foo : let x := 5; x = 6 := by`): the recipe's first `:=` would cut
  // it, so the signature runs to the `:=` where the one reader (lean/source/statementEnd.ts) says the proof starts.
  if (recipe === null || target?.proof?.kind !== ':=') return recipe;
  const keyword = new RegExp(`${target.command}[${PY_SPACE}]*`, 'u').exec(statement.slice(target.head.offset));
  if (!keyword) return recipe;
  const from = target.head.offset + keyword.index + keyword[0].length;
  const whole = pyStrip(statement.slice(from, target.proof.start.offset));
  return whole.length > recipe.length && whole.startsWith(recipe) ? whole : recipe;
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

/**
 * Whether `statement` is shaped as the recipe's (miniF2F): one declaration after `import` / `open` /
 * `set_option` lines. Anything else is a prefix of the user's file (module headers, scopes, earlier declarations).
 */
export function isRecipeStatement(statement: string): boolean {
  const decls = findDeclarations(statement);
  if (decls.length !== 1) return false;
  const before = maskLean(statement).text.slice(0, decls[0].start.offset);
  return before.split('\n').every((l) => /^\s*$|^(import|open|set_option)\s/u.test(l));
}

/** The last declaration of `statement` (the target) with its name, or null for an `example` or none. */
function targetOf(statement: string): Declaration | null {
  const decl = findDeclarations(statement).at(-1);
  return decl && decl.name !== '' ? decl : null;
}

/** The name's last component: what a model's copy keeps whatever namespace it writes around it. */
function shortName(name: string): string {
  return plain(components(name).pop() ?? name);
}

/** Where the answer's declaration holding `at` ends, so a file's proof stops at its own declaration. */
function declarationEnd(block: string, at: number): number {
  const decl = findDeclarations(block).find((d) => d.start.offset <= at && at < d.end.offset);
  return decl ? decl.end.offset : block.length;
}

/**
 * The proof in the answer for the trusted statement: the recipe's rule (the statement's signature, then the
 * first `:= by` after it), else, for a statement from a user's file, the answer's declaration of the target's name with a `:= by` body, whatever
 * header, namespace or context the answer writes around it. The result is always the trusted statement plus
 * the answer's proof; for a statement taken from a user's file the proof stops at the end of its declaration
 * (the answer's `end Foo` or later commands are not the proof).
 */
export function extractProof(response: string, formalStatement: string): Extraction {
  const statement = normalizeStatement(formalStatement);
  const signature = signatureOf(statement);
  if (signature === null) return { ok: false, reason: NO_STATEMENT };
  const recipe = isRecipeStatement(statement);
  const found = (block: string, at: number, proofStart: number): Extraction => {
    const proof = block.slice(proofStart, recipe ? block.length : Math.max(proofStart, declarationEnd(block, at)));
    return { ok: true, code: statement + proof, statement, proof };
  };
  const blocks = strictBlocks(response, 'lean4');
  for (let k = blocks.length - 1; k >= 0; k--) {
    const block = blocks[k];
    const at = block.indexOf(signature);
    if (at < 0 || isIndexCommented(block, at)) continue;
    const by = assignBy.exec(block.slice(at));
    if (!by) continue;
    return found(block, at, at + by.index + by[0].length);
  }
  // The recipe's statements keep the recipe's rule alone (the reward must match the trained one byte for byte).
  const target = recipe ? null : targetOf(statement);
  if (!target) return { ok: false, reason: NO_PROOF };
  const wanted = shortName(target.name);
  for (let k = blocks.length - 1; k >= 0; k--) {
    const block = blocks[k];
    const decl = findDeclarations(block)
      .filter((d) => d.name !== '' && shortName(d.name) === wanted && d.tactic && d.body)
      .at(-1);
    if (decl) return found(block, decl.start.offset, decl.body!.start.offset);
  }
  return { ok: false, reason: NO_PROOF };
}
