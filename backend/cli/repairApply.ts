// `kimina repair --apply` writes only over what it read: the file is read again just before writing, and each
// repair goes in only where its declaration still reads exactly as when it was checked (found by its text, so
// lines the user added above it meanwhile do not matter); a repair whose declaration changed is skipped, with
// why. The file is written atomically (a temporary file in the same folder, then a rename) with its bytes
// kept as they were: UTF-8 only (any other encoding is left alone), byte-order mark and line breaks as read
// (the repairs carry the file's own line break, editor/lineBreaks.ts). When the file changes between the
// second read and the rename, the whole step is done again, at most a few times.
import { chmodSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomUUID } from 'node:crypto';
import type { ProofEdit } from '../protocol';
import { offsetAt } from '../editor/leanSource';

/** One verified repair: the edit against the text read at the start, and its declaration's span in that text. */
export interface PlannedRepair {
  declaration: string;
  edit: ProofEdit;
  /** The declaration's [start, end) offsets in the text read at the start. */
  span: { start: number; end: number };
}

export interface ApplyOutcome {
  /** The text written, or null when nothing was (no repair applies, or the file cannot be written safely). */
  written: string | null;
  applied: string[];
  skipped: { declaration: string; reason: string }[];
  /** Why the file was not written at all, when so. */
  problem?: string;
}

// ignoreBOM: the mark stays in the text as U+FEFF (as readFileSync's 'utf8' keeps it), so it is written back
const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** The file's text as read (BOM kept as U+FEFF, so offsets match a `readFileSync(file, 'utf8')`), or why not. */
function readLeanText(file: string): { text: string } | { problem: string } {
  const bytes = readFileSync(file);
  try {
    return { text: decoder.decode(bytes) };
  } catch {
    return { problem: 'the file is not valid UTF-8 now, so it is left as it is' };
  }
}

/** Where `lines` stands in `text` as whole lines (starting a line, ending at a line break or the end). */
function wholeLineMatches(text: string, lines: string): number[] {
  const out: number[] = [];
  for (let at = text.indexOf(lines); at >= 0; at = text.indexOf(lines, at + 1)) {
    const after = text.slice(at + lines.length, at + lines.length + 2);
    if ((at === 0 || text[at - 1] === '\n') && (after === '' || after[0] === '\n' || after === '\r\n')) out.push(at);
  }
  return out;
}

/** `current` with each repair applied where its declaration still reads as in `original`. */
function repairsOnto(
  original: string,
  current: string,
  repairs: PlannedRepair[],
): { text: string; applied: string[]; skipped: { declaration: string; reason: string }[] } {
  const applied: string[] = [];
  const skipped: { declaration: string; reason: string }[] = [];
  const placed: { from: number; to: number; newText: string; declaration: string }[] = [];
  for (const r of repairs) {
    // whole lines: from the declaration's first line to the end of its last, so typing after its end counts too
    const lineStart = original.lastIndexOf('\n', r.span.start - 1) + 1;
    const lineEnd = original.indexOf('\n', r.span.end);
    const end = lineEnd < 0 ? original.length : original[lineEnd - 1] === '\r' ? lineEnd - 1 : lineEnd;
    const declText = original.slice(lineStart, end);
    const found = wholeLineMatches(current, declText);
    if (found.length !== 1 || declText.trim() === '') {
      skipped.push({
        declaration: r.declaration,
        reason:
          found.length > 1
            ? 'its declaration now stands twice in the file: nothing written there'
            : 'its declaration was changed after it was checked: nothing written there',
      });
      continue;
    }
    const at = found[0] + (r.span.start - lineStart);
    const from = offsetAt(original, r.edit.range.start.line, r.edit.range.start.character);
    const to = offsetAt(original, r.edit.range.end.line, r.edit.range.end.character);
    if (from < r.span.start || to > r.span.end) {
      skipped.push({ declaration: r.declaration, reason: 'the repair reaches outside its declaration' });
      continue;
    }
    placed.push({
      from: at + from - r.span.start,
      to: at + to - r.span.start,
      newText: r.edit.newText,
      declaration: r.declaration,
    });
  }
  placed.sort((a, b) => b.from - a.from);
  let text = current;
  for (const p of placed) {
    text = text.slice(0, p.from) + p.newText + text.slice(p.to);
    applied.unshift(p.declaration);
  }
  return { text, applied, skipped };
}

/** Writes `text` over `file` through a temporary file in the same folder and a rename, keeping its mode. */
function writeAtomically(file: string, text: string, mode: number): void {
  const temp = join(dirname(file), `.${basename(file)}.kimina-${randomUUID().slice(0, 8)}.tmp`);
  try {
    writeFileSync(temp, text, { encoding: 'utf8', flag: 'wx', mode });
    chmodSync(temp, mode);
    renameSync(temp, file);
  } catch (err) {
    rmSync(temp, { force: true });
    throw err;
  }
}

/**
 * Applies the verified repairs to `file`, whose text was `original` when they were checked. `beforeRename` is
 * for tests: it runs between computing the new text and the rename (where a user's save may land).
 */
export function applyRepairs(
  file: string,
  original: string,
  repairs: PlannedRepair[],
  beforeRename?: () => void,
): ApplyOutcome {
  for (let attempt = 0; attempt < 5; attempt++) {
    const read = readLeanText(file);
    if ('problem' in read) return { written: null, applied: [], skipped: [], problem: read.problem };
    const { text, applied, skipped } = repairsOnto(original, read.text, repairs);
    if (applied.length === 0) return { written: null, applied, skipped };
    const mode = statSync(file).mode & 0o7777;
    beforeRename?.();
    const again = readLeanText(file);
    if ('problem' in again || again.text !== read.text) continue; // changed meanwhile: start over from it
    writeAtomically(file, text, mode);
    return { written: text, applied, skipped };
  }
  return {
    written: null,
    applied: [],
    skipped: [],
    problem: 'the file kept changing while the repairs were being written: nothing written',
  };
}
