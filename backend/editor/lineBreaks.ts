// Line breaks as an editor will store them. Lean and our lexer end a line (and a `--` comment) at LF only,
// but VS Code's text buffer also breaks lines at a lone CR and at CRLF (src/vs/editor/common/model/
// pieceTreeTextBuffer/pieceTreeBase.ts, createLineStarts), both in text an edit inserts and in a file it
// opens, and it offers to delete LS (U+2028) and PS (U+2029), its "unusual line terminators"
// (src/vs/base/common/strings.ts, UNUSUAL_LINE_TERMINATORS; setting editor.unusualLineTerminators). Other
// editors and tools also break at NEL (U+0085), VT, FF and U+001C–U+001E (Unicode's mandatory breaks,
// Python's str.splitlines). So the model's text is judged as stored: CR and CRLF become LF before it is cut
// and checked, and the other breaks are refused, never silently read as spaces.

/** Characters some editor or tool takes for a line break and Lean does not: refused in a model's proof. */
const FOREIGN_BREAKS = /[\u000B\u000C\u001C\u001D\u001E\u0085\u2028\u2029]/u;

const NAMES: Record<string, string> = {
  '\u000B': 'a vertical tab (U+000B)',
  '\u000C': 'a form feed (U+000C)',
  '\u001C': 'a file separator (U+001C)',
  '\u001D': 'a group separator (U+001D)',
  '\u001E': 'a record separator (U+001E)',
  '\u0085': 'a next-line character (NEL, U+0085)',
  '\u2028': 'a line separator (U+2028)',
  '\u2029': 'a paragraph separator (U+2029)',
};

/**
 * The model's text with every CR and CRLF turned into LF (what an editor's buffer makes of them), or why it
 * is refused: it holds a character that some editor reads as a line break and Lean reads as part of a line.
 */
export function storedProofText(text: string): { text: string } | { problem: string } {
  const foreign = FOREIGN_BREAKS.exec(text);
  if (foreign) {
    const line = text.slice(0, foreign.index).split(/\r\n|\r|\n/).length;
    return {
      problem: `the proof holds ${NAMES[foreign[0]]} on its line ${line}: an editor may read it as a line break where Lean reads none, so what is checked would not be what the file holds`,
    };
  }
  return { text: text.replace(/\r\n?/g, '\n') };
}

/**
 * The line break a document's edits are stored with, as VS Code picks it for a file it opens: CRLF when
 * more than half the line breaks hold a CR, else LF (pieceTreeTextBufferBuilder.ts, _getEOL).
 */
export function documentEol(text: string): '\n' | '\r\n' {
  let cr = 0;
  let all = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 13) {
      cr++;
      all++;
      if (text.charCodeAt(i + 1) === 10) i++;
    } else if (c === 10) all++;
  }
  return all > 0 && cr > all / 2 ? '\r\n' : '\n';
}

/** Text built with LF line breaks, as a document with line break `eol` will hold it. */
export function withEol(text: string, eol: '\n' | '\r\n'): string {
  return eol === '\n' ? text : text.replace(/\r?\n/g, '\r\n');
}
