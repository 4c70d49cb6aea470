// A prove or repair request on the user's file checks every candidate in one file session (lean/fileSession.ts):
// the formal statement's prefix (the user's header, scope commands and earlier declarations: the user's code) is
// elaborated once, on first use, and each candidate (the target declaration only: model text, filtered, audited)
// runs on that environment. The prove loop keeps seeing whole snippets (statement + proof): this verifier cuts the
// candidate off the snippet and moves Lean's positions back to snippet lines, so feedback and goals read as before.
import type { CommandResponse, Verdict } from '../protocol';
import { modelText, userSource, type UserSource } from '../lean/authorship';
import type { FileSession } from '../lean/fileSession';
import { rebaseResponse } from '../lean/header';
import { findDeclarations } from '../lean/declarations';
import type { CheckOptions, CheckOutcome, LeanVerifier } from '../lean/types';
import { normalizeStatement } from './extract';

/** Opens a file session on `file` for the declaration starting at 1-based `line` (App / editor wiring). */
export type OpenFileSession = (file: UserSource, line: number) => Promise<FileSession>;

/**
 * A verifier for one request's snippets: each `code` that starts with the request's statement prefix is checked
 * as its target declaration in the session; anything else (none expected) goes to `fallback` as a whole snippet.
 * Null when the statement has no prefix to pay for once (a lone theorem: the miniF2F case) or the target does not
 * start a line.
 */
export function sessionVerifier(
  open: OpenFileSession,
  statement: string,
  fallback: LeanVerifier,
): (LeanVerifier & { sessionOpened(): boolean }) | null {
  const normalized = normalizeStatement(statement);
  const target = findDeclarations(normalized).at(-1);
  if (!target) return null;
  const prefixLength = target.start.offset;
  if (prefixLength === 0 || normalized[prefixLength - 1] !== '\n') return null;
  const prefix = normalized.slice(0, prefixLength);
  const prefixLines = prefix.split('\n').length - 1;
  let session: Promise<FileSession> | null = null;
  const opened = (): Promise<FileSession> => (session ??= open(userSource(normalized), prefixLines + 1));
  return {
    sessionOpened: () => session !== null,
    async check(code: string, options?: CheckOptions): Promise<CheckOutcome> {
      if (!code.startsWith(prefix)) return fallback.check(code, options);
      const outcome = await (await opened()).check(modelText(code.slice(prefixLength)), options);
      return inSnippetLines(outcome, prefixLines);
    },
    async close(): Promise<void> {
      const s = session;
      session = null;
      if (s)
        await s.then(
          (opened) => opened.close(),
          () => undefined,
        );
    },
  };
}

/** Candidate-line positions moved to the snippet's lines (the prefix above them); the infotree stays candidate-relative. */
export function inSnippetLines(outcome: CheckOutcome, prefixLines: number): CheckOutcome {
  if (prefixLines === 0) return outcome;
  const moved = rebaseResponse({ messages: outcome.verdict.messages, sorries: outcome.verdict.sorries }, prefixLines);
  const verdict: Verdict = {
    ...outcome.verdict,
    // the reason's line ("Lean error at line N", "Rejected before Lean (line N)") read in the snippet too
    reason: outcome.verdict.reason.replace(
      /^(Lean error at line |Rejected before Lean \(line )(\d+)/,
      (_, words: string, line: string) => `${words}${Number(line) + prefixLines}`,
    ),
    messages: moved.messages ?? outcome.verdict.messages,
    sorries: moved.sorries ?? outcome.verdict.sorries,
  };
  const response: CommandResponse | undefined = outcome.response
    ? rebaseResponse(outcome.response, prefixLines)
    : undefined;
  return {
    ...outcome,
    verdict,
    ...(response ? { response } : {}),
    ...(outcome.sorryAt ? { sorryAt: { ...outcome.sorryAt, line: outcome.sorryAt.line + prefixLines } } : {}),
    infotreeLineOffset: prefixLines,
  };
}
