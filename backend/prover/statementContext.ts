// The formal statement the model is shown: what the target's statement needs, bounded by a token budget,
// instead of the whole file before it. It holds the file's header lines (comments dropped), the scope in
// force at the target (`namespace`/`section` still open with their `open`s, `variable`s, `universe`s,
// options), the earlier definitions the statement mentions (and those they mention, nearest first) and the
// file's own notations and macros whose tokens they use, in file order, then the target ending in `:= by`.
// It is only what the model reads: the check always uses the real prefix of the user's file (docs/prover.md).
import { components, plain } from '../lean/auditPlan';
import { type Declaration, formalStatementOf } from '../lean/declarations';
import { commandsOf, findDeclarations, headerText, readHeader } from '../lean/source/reader';
import { lexLean } from '../lean/lexer';
import { NOTATION_COMMANDS } from '../lean/source/keywords';

/**
 * Tokens the shown statement may take. Measured with the Qwen3 tokenizer on the 1,831-line
 * Analysis/MeasureTheory/Section_1_2_2.lean of teorth/analysis: the whole prefix is about 15,000 tokens there,
 * past the recipe's 8,192-token prompt limit (kimina-format.md §6.3); 2,048 leaves room for a fix turn.
 */
export const STATEMENT_TOKEN_BUDGET = 2048;

/**
 * A token count without the model's tokenizer, on the safe side: Lean source averages 2.7 characters per Qwen3
 * token on real files, but symbol-heavy declarations go down to 1.6 (Unicode symbols are one to three tokens), so
 * two characters count as one token. Measured as above: on the vendored corpus (568 targets) and the two teorth
 * files, no shown statement passed 2,048 Qwen3 tokens under this count.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 2);
}

export interface ShownStatement {
  /** What the prompt's `# Formal Statement` block holds. */
  text: string;
  /** Tokens by the estimate used for the budget. */
  tokens: number;
  /** Earlier declarations (by name) shown, and those the statement mentions but the budget left out. */
  shown: string[];
  omitted: string[];
  /** The whole prefix was small enough (or there was nothing to choose from): the statement is the file's own. */
  whole: boolean;
}

export interface ShownOptions {
  budget?: number;
  countTokens?: (text: string) => number;
}

const SCOPE_WORDS = new Set(['open', 'variable', 'universe', 'set_option', 'include', 'omit']);
const NOTATION_WORDS = new Set([...NOTATION_COMMANDS, 'macro', 'macro_rules', 'syntax']);
/** Kinds whose text explains a name the statement uses (theorems prove things; the statement uses none). */
const EXPLAINING = new Set(['def', 'abbrev', 'structure', 'inductive', 'class', 'opaque', 'instance']);

interface Frame {
  /** The `namespace X` / `section X` line ('' for the file level and for `mutual`). */
  open: string;
  /** Still open at the target: its scope commands are in force. */
  items: (Item | Frame)[];
}
interface Item {
  kind: 'scope' | 'notation' | 'decl';
  text: string;
  /** For declarations: their index among the file's declarations. */
  decl?: number;
  /** For notations: the literal tokens they define. */
  literals?: string[];
}

/** Identifier components used in `text`, without «» quotes: what "mentions a name" compares. */
function mentions(text: string): Set<string> {
  const out = new Set<string>();
  for (const t of lexLean(text)) if (t.kind === 'ident') for (const c of components(t.text)) out.add(plain(c));
  return out;
}

/** String literals of a notation or macro command: the tokens it makes (`"∣"`, `" ⊕ "`), trimmed. */
function literalsOf(text: string): string[] {
  return [...text.matchAll(/"((?:[^"\\]|\\.)*)"/gu)].map((m) => m[1].trim()).filter((l) => l !== '');
}

/** The statement shown to the model for `decl` of `source`, within `options.budget` tokens where it can be. */
export function shownStatement(source: string, decl: Declaration, options: ShownOptions = {}): ShownStatement {
  const budget = options.budget ?? STATEMENT_TOKEN_BUDGET;
  const count = options.countTokens ?? estimateTokens;
  const decls = findDeclarations(source);
  const at = decls.findIndex((d) => d.start.offset === decl.start.offset);
  const target = decl.statement.trim();
  const earlier = at < 0 ? [] : decls.slice(0, at);
  const whole = formalStatementOf(source, decl).text;
  if (earlier.length === 0 || count(whole) <= budget)
    return { text: whole, tokens: count(whole), shown: [], omitted: [], whole: true };

  // One walk over the file's commands before the target (the one reader's): scopes, scope commands, notations,
  // declarations; the header comes back one `module`/`import` per line, comments dropped.
  const header = [headerText(readHeader(source))].filter((h) => h !== '');
  const root: Frame = { open: '', items: [] };
  const stack: Frame[] = [root];
  const declAt = new Map(earlier.map((d, k) => [d.start.offset, k]));
  for (const cmd of commandsOf(source)) {
    if (cmd.start.offset >= decl.start.offset) break;
    const k = declAt.get(cmd.start.offset);
    const top = stack[stack.length - 1];
    const text = source.slice(cmd.start.offset, cmd.end.offset).trim();
    const word = cmd.word;
    if (k !== undefined) top.items.push({ kind: 'decl', text, decl: k });
    else if (word === 'namespace' || word === 'section' || word === 'mutual') {
      const frame: Frame = { open: word === 'mutual' ? '' : text, items: [] };
      top.items.push(frame);
      stack.push(frame);
    } else if (word === 'end') {
      const names = text
        .split('\n')[0]
        .replace(/^end\b/u, '')
        .trim();
      for (let n = names === '' ? 1 : components(names).length; n > 0 && stack.length > 1; n--) {
        const closed = stack.pop()!;
        if (closed.open) closed.items.push({ kind: 'scope', text: text.split('\n')[0] });
      }
    } else if (cmd.kind === 'scope' && SCOPE_WORDS.has(word)) top.items.push({ kind: 'scope', text });
    else if (NOTATION_WORDS.has(word)) top.items.push({ kind: 'notation', text, literals: literalsOf(text) });
  }
  const open = new Set<Frame>(stack);

  // The declarations and notations the target needs, nearest mention first, while they fit.
  const chosen = new Set<number>();
  const notations: Item[] = [];
  const collect = (frame: Frame) => {
    for (const it of frame.items) {
      if ('open' in it) collect(it);
      else if (it.kind === 'notation') notations.push(it);
    }
  };
  collect(root);
  const chosenNotations = new Set<Item>();
  const fixed = [...header, target].join('\n\n');
  let used = count(fixed) + count(renderScopes(root, open, chosen, chosenNotations));
  const omitted: string[] = [];
  let frontier: string[] = [target];
  const seen = new Set<string>();
  while (frontier.length > 0) {
    const next: string[] = [];
    for (const text of frontier) {
      const names = mentions(text);
      for (const n of notations)
        if (!chosenNotations.has(n) && n.literals!.some((l) => text.includes(l))) {
          const cost = count(n.text) + 1;
          if (used + cost <= budget) {
            chosenNotations.add(n);
            used += cost;
            next.push(n.text);
          }
        }
      for (let k = earlier.length - 1; k >= 0; k--) {
        const d = earlier[k];
        if (chosen.has(k) || !EXPLAINING.has(d.kind) || d.sorries.length > 0 || d.name === '') continue;
        const short = plain(components(d.name).pop() ?? d.name);
        if (!names.has(short) || seen.has(d.name)) continue;
        seen.add(d.name);
        const body = source.slice(d.start.offset, d.end.offset).trim();
        const cost = count(body) + 1;
        if (used + cost > budget) {
          omitted.push(d.name);
          continue;
        }
        chosen.add(k);
        used += cost;
        next.push(body);
      }
    }
    frontier = next;
  }
  const context = renderScopes(root, open, chosen, chosenNotations);
  const text = [...header, context, target].filter((p) => p !== '').join('\n\n');
  const shown = [...chosen].sort((a, b) => a - b).map((k) => earlier[k].name);
  return { text, tokens: count(text), shown, omitted, whole: false };
}

/**
 * The scopes as the target sees them: frames still open with every scope command, closed frames only when
 * they hold something chosen (with their own scope commands, so the chosen text reads as in the file).
 */
function renderScopes(frame: Frame, open: Set<Frame>, chosen: Set<number>, notations: Set<Item>): string {
  const render = (f: Frame): { parts: string[]; holds: boolean } => {
    const parts: string[] = [];
    let holds = false;
    for (const it of f.items) {
      if ('open' in it) {
        const inner = render(it);
        if (!inner.holds && !open.has(it)) continue;
        parts.push([it.open, ...inner.parts].filter((p) => p !== '').join('\n\n'));
        holds ||= inner.holds;
      } else if (it.kind === 'scope') parts.push(it.text);
      else if ((it.kind === 'notation' && notations.has(it)) || (it.kind === 'decl' && chosen.has(it.decl!))) {
        parts.push(it.text);
        holds = true;
      }
    }
    return { parts, holds };
  };
  return render(frame).parts.join('\n\n');
}
