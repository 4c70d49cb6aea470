// A Lean file's header as Lean's own parser reads it (`Lean.Parser.Module.header`), without Lean.
//
// Grammar, from leanprover/lean4 `src/Lean/Parser/Module/Syntax.lean` (commit bad83214df3a, the module system;
// the same rules stood in `src/Lean/Parser/Module.lean` before it was split):
//   header := ("module")? ("prelude")? import*
//   import := atomic(("public")? ("meta")? "import") ("all")? ident
// and before the module system (lean4 5ca004a103ab and earlier releases): `header := ("prelude")? import*`,
// `import := "import" ("runtime")? ident`. One module per `import` in every Lean 4 release: `import A B` ends the
// header after `A`, and Lean then fails to parse `B` as a command. Leading whitespace is Lean's `whitespace`
// (src/Lean/Parser/Basic.lean): blanks, `--` line comments and nested `/- … -/` block comments, but NOT the
// doc comments `/-- … -/` and `/-! … -/`, which are tokens: a doc comment ends the header, and an `import`
// after it is Lean's error "invalid 'import' command, it must be used in the beginning of the file".
// `atomic` makes `public section` / `meta def` after the imports the body's first command, not a broken import.
//
// Positions are the finder's (`SourcePos`: UTF-16 offset, 1-based line, 0-based codepoint column), read from the
// one lexer (lexer.ts), so comments and strings are skipped exactly as everywhere else.
import { PositionIndex, type SourcePos } from './positions';
import { lexLeanFull, type Token } from '../lexer';

export interface HeaderImport {
  /** The module name as written (`Mathlib.Tactic`, `«My Lib».Foo`). */
  module: string;
  /** `public import`: re-exported to the importers of a module (module system). */
  public: boolean;
  /** `meta import`: available at compile time (module system). */
  meta: boolean;
  /** `import all M`: M's private declarations too (module system). */
  all: boolean;
  /** From the first keyword (`public`, `meta` or `import`) to the end of the module name. */
  start: SourcePos;
  end: SourcePos;
  /** Where the module name stands. */
  moduleStart: SourcePos;
  moduleEnd: SourcePos;
}

interface HeaderProblem {
  message: string;
  start: SourcePos;
  end: SourcePos;
}

export interface ModuleHeader {
  /** The file starts with `module` (the module system). */
  module: boolean;
  /** `prelude`: no implicit `import Init`. */
  prelude: boolean;
  imports: HeaderImport[];
  /** Just after the header's last token (start of the file when it has none). */
  end: SourcePos;
  /**
   * Where Lean starts parsing commands: the first token or doc comment after the header (after its trailing
   * blanks and plain comments), or the end of the file.
   */
  bodyStart: SourcePos;
  /** What Lean would refuse in or right after the header (never thrown: callers decide). */
  problems: HeaderProblem[];
}

const importAfterHeader = "invalid 'import' command, it must be used in the beginning of the file";

/** Reads the header of `source` as Lean's `parseHeader` does. */
export function readHeader(source: string): ModuleHeader {
  const { tokens, trivia } = lexLeanFull(source);
  const code = tokens.filter((t) => !t.quoted);
  const pos = new PositionIndex(source);
  const at = (t: Token): SourcePos => pos.at(pos.offsetOf(t.line, t.column));
  const endOf = (t: Token): SourcePos => pos.at(pos.offsetOf(t.endLine, t.endColumn));
  // doc comments, strings and char literals are tokens to Lean's header parser (only blanks and plain comments are
  // whitespace): the header stops at the first one
  const isDoc = (t: { kind: string; start: number }): boolean => t.kind === 'doc' || source.startsWith('/-!', t.start);
  const firstDoc = trivia.find((t) => isDoc(t) || t.kind === 'string' || t.kind === 'char');
  const docOffset = firstDoc ? firstDoc.start : Infinity;
  const startOffset = (t: Token | undefined): number => (t ? pos.offsetOf(t.line, t.column) : Infinity);
  const word = (k: number, text: string): boolean =>
    code[k]?.kind === 'ident' && code[k].text === text && startOffset(code[k]) < docOffset;

  let k = 0;
  let lastEnd: SourcePos = pos.at(0);
  const module = word(k, 'module');
  if (module) lastEnd = endOf(code[k++]);
  const prelude = word(k, 'prelude');
  if (prelude) lastEnd = endOf(code[k++]);
  const imports: HeaderImport[] = [];
  const problems: HeaderProblem[] = [];
  for (;;) {
    // atomic(("public")? ("meta")? "import"): all or nothing
    let j = k;
    const isPublic = word(j, 'public');
    if (isPublic) j++;
    const isMeta = word(j, 'meta');
    if (isMeta) j++;
    if (!word(j, 'import')) break;
    const first = code[k];
    j++;
    const isAll = word(j, 'all') && code[j + 1]?.kind === 'ident' && startOffset(code[j + 1]) < docOffset;
    if (isAll) j++;
    const name = code[j];
    if (name?.kind !== 'ident' || startOffset(name) >= docOffset) {
      const e = name ? at(name) : pos.at(source.length);
      problems.push({ message: 'a module name is expected after `import`', start: at(code[j - 1]), end: e });
      lastEnd = endOf(code[j - 1]);
      k = j;
      break;
    }
    imports.push({
      module: name.text,
      public: isPublic,
      meta: isMeta,
      all: isAll,
      start: at(first),
      end: endOf(name),
      moduleStart: at(name),
      moduleEnd: endOf(name),
    });
    lastEnd = endOf(name);
    k = j + 1;
  }
  const next = code[k];
  const bodyOffset = Math.min(startOffset(next), docOffset, source.length);
  const bodyStart = pos.at(bodyOffset);
  // `import A B`: Lean's header ends after A, and B does not parse as a command
  const lastImport = imports[imports.length - 1];
  if (lastImport && next?.kind === 'ident' && next.line === lastImport.end.line && startOffset(next) < docOffset)
    problems.push({
      message: `one module per \`import\`: '${next.text}' after '${lastImport.module}' is not part of the header (write \`import ${next.text}\` on a line of its own)`,
      start: at(next),
      end: endOf(next),
    });
  // an `import` command after the header (after a doc comment, or after any command): one that begins its line, as
  // a command does (inside a syntax quotation, `(Parser.Module.import| import $m)`, it is no command)
  for (let m = k; m < code.length; m++) {
    const t = code[m];
    if (t.kind !== 'ident' || t.text !== 'import') continue;
    let first = m;
    if (code[first - 1]?.kind === 'ident' && code[first - 1].text === 'meta') first--;
    if (code[first - 1]?.kind === 'ident' && code[first - 1].text === 'public') first--;
    const previous = code[first - 1];
    if (previous && previous.endLine === code[first].line) continue;
    const why =
      firstDoc && isDoc(firstDoc) && startOffset(t) > docOffset && imports.every((i) => i.end.offset < docOffset)
        ? ' (a doc comment `/-! … -/` or `/-- … -/` ends the header: use a plain `/- … -/` comment before the imports)'
        : '';
    problems.push({ message: importAfterHeader + why, start: at(t), end: endOf(t) });
  }
  return { module, prelude, imports, end: lastEnd, bodyStart, problems };
}

/** The header's own text as Lean reads it, one line per item: `module`, `prelude`, then each import. */
export function headerText(header: Pick<ModuleHeader, 'module' | 'prelude' | 'imports'>): string {
  const lines: string[] = [];
  if (header.module) lines.push('module');
  if (header.prelude) lines.push('prelude');
  for (const i of header.imports) lines.push(importLine(i));
  return lines.join('\n');
}

/** `public meta import all M`, with only the flags the import has. */
export function importLine(i: Pick<HeaderImport, 'module' | 'public' | 'meta' | 'all'>): string {
  return `${i.public ? 'public ' : ''}${i.meta ? 'meta ' : ''}import ${i.all ? 'all ' : ''}${i.module}`;
}
