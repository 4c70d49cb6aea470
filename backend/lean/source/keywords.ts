// The Lean words and brackets more than one reader needs, written once.

/** Every keyword that starts a declaration (Lean's `declaration` parser, src/Lean/Parser/Command.lean). */
export const DECL_KINDS: ReadonlySet<string> = new Set<string>([
  'theorem',
  'lemma',
  'example',
  'def',
  'abbrev',
  'instance',
  'structure',
  'inductive',
  'class',
  'axiom',
  'opaque',
]);

/** Brackets a term nests in; a `:=` or `|` inside them is not the declaration's own. */
export const OPENING_BRACKETS: ReadonlySet<string> = new Set(['(', '[', '{', '⦃', '⟨', '⟦', '⟪', '@[', '‹']);
export const CLOSING_BRACKETS: ReadonlySet<string> = new Set([')', ']', '}', '⦄', '⟩', '⟧', '⟫', '›']);

/** The commands that define notation (Lean's `Lean.Parser.Command.mixfix` and `notation`/`notation3`). */
export const NOTATION_COMMANDS = ['notation', 'notation3', 'infix', 'infixl', 'infixr', 'prefix', 'postfix'] as const;
