// Finds declarations and `sorry`s in Lean 4 source for the editor face: which declaration the cursor is in,
// where its statement ends, where each `sorry` is and whether it stands in tactic or term position.
// Offsets are JavaScript string indices (UTF-16 code units), which is what LSP positions count.
// Unlike lean/declarations.ts (column-0 commands, used for statements), it also finds indented declarations
// and tells tactic from term `sorry`s, which splicing needs.
import { findDeclarations as findLeanDeclarations, formalStatementOf, maskLean } from '../../lean/declarations';

export type DeclKind = 'theorem' | 'lemma' | 'example' | 'def' | 'abbrev' | 'instance';
export type SorryPosition = 'tactic' | 'term';

export interface SorrySite {
  offset: number;
  /** 0-based line and UTF-16 character. */
  line: number;
  character: number;
  /** Tactic position (`by sorry`, a line of its own, after `·`) or term position (`:= sorry`, `exact sorry`). */
  position: SorryPosition;
}

export interface Declaration {
  kind: DeclKind;
  /** The declared name; "example" for examples. */
  name: string;
  /** From the first modifier/attribute (doc comment excluded) to the end of the last code line. */
  start: number;
  end: number;
  startLine: number;
  endLine: number;
  /** Offset just after the top-level `:=` that ends the statement; null when there is none (pattern matching). */
  statementEnd: number | null;
  /** Column (UTF-16) of the declaration's first line, for re-indenting its proof. */
  indent: number;
  sorries: SorrySite[];
}

const declKinds = new Set<string>(['theorem', 'lemma', 'example', 'def', 'abbrev', 'instance']);
const modifiers = new Set(['private', 'protected', 'noncomputable', 'nonrec', 'partial', 'unsafe', 'scoped', 'local']);
/** Words that start a new command at the left margin: a declaration ends before the next one. */
const commandStarts = new Set([...declKinds, ...modifiers, 'namespace', 'end', 'section', 'open', 'variable',
  'universe', 'set_option', 'import', 'attribute', 'structure', 'class', 'inductive', 'axiom', 'opaque', 'mutual',
  'macro', 'syntax', 'notation', 'infix', 'infixl', 'infixr', 'prefix', 'postfix', 'elab', 'macro_rules',
  'elab_rules', 'deriving', 'initialize', 'export', 'omit', 'include']);
const termBefore = new Set([':=', '(', '⟨', '[', '{', ',', 'exact', 'refine', 'apply', 'from', 'show', 'use',
  'exacts', 'using', '←', '→', '=', '<|', '$', 'fun', '↦', 'then', 'else']);
const tacticBefore = new Set(['by', '·', '.', ';', '<;>', '=>']);

/** A copy of `text` with comments, string and char literals blanked out (newlines kept), so offsets stay valid. */
export function codeOnly(text: string): string {
  return maskLean(text).text;
}

function isIdentChar(ch: string | undefined): boolean {
  return ch !== undefined && /[\p{L}\p{N}_'!?₀-₉ₐ-ₜᵢ-ᵪ.]/u.test(ch);
}

/** Line starts: lineStarts[n] is the offset of line n. */
export function lineStarts(text: string): number[] {
  const starts = [0];
  for (let i = 0; i < text.length; i++) if (text[i] === '\n') starts.push(i + 1);
  return starts;
}

export function offsetAt(text: string, line: number, character: number): number {
  const starts = lineStarts(text);
  if (line < 0) return 0;
  if (line >= starts.length) return text.length;
  const lineEnd = line + 1 < starts.length ? starts[line + 1] - 1 : text.length;
  return Math.min(starts[line] + Math.max(0, character), lineEnd);
}

export function positionAt(text: string, offset: number): { line: number; character: number } {
  const starts = lineStarts(text);
  let lo = 0; let hi = starts.length - 1;
  while (lo < hi) { const mid = (lo + hi + 1) >> 1; if (starts[mid] <= offset) lo = mid; else hi = mid - 1; }
  return { line: lo, character: offset - starts[lo] };
}

/** The token just before `offset` in the code text (skipping whitespace): a word or a run of symbols. */
function previousToken(code: string, offset: number): { token: string; onSameLine: boolean } {
  let k = offset - 1; let sameLine = true;
  while (k >= 0 && /\s/.test(code[k])) { if (code[k] === '\n') sameLine = false; k--; }
  if (k < 0) return { token: '', onSameLine: sameLine };
  const end = k + 1;
  if (isIdentChar(code[k]) && code[k] !== '.') { while (k >= 0 && isIdentChar(code[k])) k--; return { token: code.slice(k + 1, end), onSameLine: sameLine }; }
  for (const sym of ['<;>', ':=', '=>', '<|', '←', '→', '↦', '·', '.', ';', '(', '⟨', '[', '{', ',', '=', '$']) {
    if (code.slice(0, end).endsWith(sym)) return { token: sym, onSameLine: sameLine };
  }
  return { token: code[k], onSameLine: sameLine };
}

function classifySorry(code: string, offset: number): SorryPosition {
  const { token, onSameLine } = previousToken(code, offset);
  if (tacticBefore.has(token)) return 'tactic';
  if (termBefore.has(token)) return 'term';
  return onSameLine ? 'term' : 'tactic';
}

function findSorries(text: string, code: string, from: number, to: number): SorrySite[] {
  const sites: SorrySite[] = [];
  let k = code.indexOf('sorry', from);
  while (k >= 0 && k + 5 <= to) {
    if (!isIdentChar(code[k - 1]) && !isIdentChar(code[k + 5])) {
      const pos = positionAt(text, k);
      sites.push({ offset: k, line: pos.line, character: pos.character, position: classifySorry(code, k) });
    }
    k = code.indexOf('sorry', k + 5);
  }
  return sites;
}

/** Offset just after the first `:=` at bracket depth 0 between `from` and `to`. */
function statementEndIn(code: string, from: number, to: number): number | null {
  let depth = 0;
  for (let i = from; i < to; i++) {
    const ch = code[i];
    if ('([{⟨⦃'.includes(ch)) depth++;
    else if (')]}⟩⦄'.includes(ch)) depth = Math.max(0, depth - 1);
    else if (depth === 0 && ch === ':' && code[i + 1] === '=') return i + 2;
  }
  return null;
}

interface LineInfo { start: number; indent: number; firstWord: string; blank: boolean }

function describeLines(code: string): LineInfo[] {
  const starts = lineStarts(code);
  return starts.map((start, n) => {
    const end = n + 1 < starts.length ? starts[n + 1] - 1 : code.length;
    const line = code.slice(start, end);
    const indent = line.length - line.trimStart().length;
    const trimmed = line.trim();
    const firstWord = trimmed.startsWith('@[') ? '@[' : trimmed.startsWith('#') ? '#' : (/^[^\s(:[{⟨]+/.exec(trimmed)?.[0] ?? '');
    return { start, indent, firstWord, blank: trimmed === '' };
  });
}

/** Every declaration in the file, in order. */
export function findDeclarations(text: string): Declaration[] {
  const code = codeOnly(text);
  const lines = describeLines(code);
  const decls: Declaration[] = [];
  const startsCommand = (info: LineInfo) => info.firstWord === '@[' || info.firstWord === '#' || commandStarts.has(info.firstWord);
  for (let n = 0; n < lines.length; n++) {
    const info = lines[n];
    if (info.blank || !startsCommand(info)) continue;
    // Skip attributes and modifiers to the keyword, possibly on the following lines.
    const lookahead = n + 3 < lines.length ? lines[n + 3].start : code.length;
    const words = code.slice(info.start, lookahead).replace(/@\[[^\]]*\]/g, ' ').split(/\s+/).filter(Boolean);
    let w = 0;
    while (w < words.length && modifiers.has(words[w])) w++;
    const kind = words[w];
    if (!declKinds.has(kind)) continue;
    // The declaration runs until the next line at or left of its indent that starts a command.
    let last = n;
    let m = n + 1;
    for (; m < lines.length; m++) {
      const next = lines[m];
      if (next.blank) continue;
      if (next.indent <= info.indent && startsCommand(next)) break;
      last = m;
    }
    const lineEnd = last + 1 < lines.length ? lines[last + 1].start - 1 : code.length;
    const end = info.start + code.slice(info.start, lineEnd).trimEnd().length;
    const start = info.start + info.indent;
    const nameMatch = kind === 'example' ? null : new RegExp(`\\b${kind}\\s+([^\\s(:[{⟨]+)`, 'u').exec(code.slice(start, end));
    decls.push({
      kind: kind as DeclKind,
      name: kind === 'example' ? 'example' : (nameMatch?.[1] ?? kind),
      start, end,
      startLine: n, endLine: last,
      statementEnd: statementEndIn(code, start, end),
      indent: info.indent,
      sorries: findSorries(text, code, start, end),
    });
    n = last;
  }
  return decls;
}

/** The theorem/lemma/example containing `line`, or else the nearest one starting above it. */
export function declarationAt(decls: Declaration[], line: number): Declaration | null {
  const provable = decls.filter((d) => d.kind === 'theorem' || d.kind === 'lemma' || d.kind === 'example');
  const inside = provable.find((d) => d.startLine <= line && line <= d.endLine);
  if (inside) return inside;
  const above = provable.filter((d) => d.startLine <= line);
  return above.length ? above[above.length - 1] : null;
}

/** The `sorry` at the cursor: the one under it, else the nearest in the declaration on the same line, else the only one. */
export function sorryAt(decl: Declaration, line: number, character: number): SorrySite | null {
  const under = decl.sorries.find((s) => s.line === line && s.character <= character && character <= s.character + 5);
  if (under) return under;
  const sameLine = decl.sorries.filter((s) => s.line === line);
  if (sameLine.length) return sameLine.reduce((a, b) => (Math.abs(a.character - character) <= Math.abs(b.character - character) ? a : b));
  return decl.sorries.length === 1 ? decl.sorries[0] : null;
}

/** Imports, options and opens before the first declaration: what a standalone snippet needs. */
export function headerOf(text: string, decls = findDeclarations(text)): string {
  const first = decls[0];
  const cut = first ? lineStarts(text)[first.startLine] : text.length;
  // Stop after the last line of code, leaving out the first declaration's doc comment.
  const codeEnd = codeOnly(text.slice(0, cut)).trimEnd().length;
  return text.slice(0, codeEnd) + '\n\n';
}

/**
 * What must precede the declaration in a standalone snippet: the header plus the scope commands in force
 * (`namespace`, `open`, `variable`, …), as the prover's own statement builder (lean/declarations.ts) finds them.
 */
export function scopePrefix(text: string, decl: Declaration, decls?: Declaration[]): string {
  const theirs = findLeanDeclarations(text).find((d) => d.start.offset <= decl.start && decl.start < Math.max(d.end.offset, d.start.offset + 1));
  if (!theirs) return headerOf(text, decls);
  const formal = formalStatementOf(text, theirs).text;
  const statement = theirs.statement.trim();
  if (!formal.endsWith(statement)) return headerOf(text, decls);
  const prefix = formal.slice(0, formal.length - statement.length).trimEnd();
  return prefix ? prefix + '\n\n' : '';
}

/** Header, scope commands and the declaration's own text (doc comment excluded): what is sent to the prover or Lean. */
export function standaloneSnippet(text: string, decl: Declaration, decls?: Declaration[]): { code: string; declOffset: number } {
  const prefix = scopePrefix(text, decl, decls);
  return { code: prefix + text.slice(decl.start, decl.end) + '\n', declOffset: prefix.length };
}
