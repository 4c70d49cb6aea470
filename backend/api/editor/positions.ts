// Lean/REPL positions (1-based line, 0-based column in Unicode codepoints) to and from LSP positions
// (0-based line, 0-based character in UTF-16 code units). They differ on lines with characters outside
// the BMP such as 𝔽 or 𝕜 (two UTF-16 units, one codepoint).
import type { LspRange, ReplPos } from '../../protocol';

type LspPosition = LspRange['start'];

function lineText(text: string, line0: number): string {
  return text.split('\n')[line0] ?? '';
}

export function replToLsp(text: string, pos: ReplPos): LspPosition {
  const line = Math.max(0, pos.line - 1);
  const prefix = Array.from(lineText(text, line)).slice(0, Math.max(0, pos.column)).join('');
  return { line, character: prefix.length };
}

export function lspToRepl(text: string, pos: LspPosition): ReplPos {
  const prefix = lineText(text, pos.line).slice(0, Math.max(0, pos.character));
  return { line: pos.line + 1, column: Array.from(prefix).length };
}
