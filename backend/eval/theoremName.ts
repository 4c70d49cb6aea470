// Finds the theorem to prove in a benchmark file: the first `theorem`/`lemma` outside comments.
// Only what loading a benchmark needs; the prover parses the statement itself.

/** Replaces comments (nested `/- -/` and `--` to end of line) with spaces, keeping offsets. */
function blankComments(source: string): string {
  const out = source.split('');
  let depth = 0;
  let inString = false;
  for (let i = 0; i < source.length; i++) {
    const two = source.slice(i, i + 2);
    if (depth === 0 && !inString && two === '--') {
      while (i < source.length && source[i] !== '\n') out[i++] = ' ';
      i--;
      continue;
    }
    if (!inString && two === '/-') {
      depth++;
      out[i] = out[i + 1] = ' ';
      i++;
      continue;
    }
    if (depth > 0 && two === '-/') {
      depth--;
      out[i] = out[i + 1] = ' ';
      i++;
      continue;
    }
    if (depth > 0) {
      if (source[i] !== '\n') out[i] = ' ';
      continue;
    }
    if (source[i] === '"' && source[i - 1] !== '\\') inString = !inString;
  }
  return out.join('');
}

const declaration =
  /^[ \t]*(?:@\[[^\]]*\][ \t\n]*)?(?:(?:private|protected|nonrec)[ \t]+)*(?:theorem|lemma)[ \t\n]+(«[^»]+»|[^\s:({[⦃]+)/mu;

/** The first theorem or lemma name, or null when the text declares none. */
export function firstTheoremName(source: string): string | null {
  const m = declaration.exec(blankComments(source));
  return m ? m[1] : null;
}
