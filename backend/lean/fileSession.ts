// A candidate is checked in its file, paying for the file once. A session elaborates the user's file up to the
// target (its header as the REPL's first command, then everything above the target as one command on it) once,
// and runs each candidate on that environment with the REPL's `env` (environment reuse): n samples and their fix
// turns pay for the file once. The prefix is the user's code (never filtered); each candidate is model text
// (filtered, audited: every declaration it adds, every axiom). Without a REPL (the `lake env lean` fallback) a
// session sends header, prefix and candidate as one file per check, as before.
import type { CommandResponse, ReplMessage } from '../protocol';
import { modelText, type ModelText, type UserSource } from './authorship';
import { namespaceAtEnd } from './auditPlan';
import { userHeader } from './checkedHeader';
import { clampTimeoutS } from './checkTimeout';
import { PoolRunner, type ReplSession } from './poolRunner';
import { rebaseResponse } from './header';
import { weakeningOptionsOf } from './weakening';
import type { RunResult } from './runner';
import type { CheckOutcome, LeanVerifier } from './types';
import type { BatchCheckOptions, SessionRun, Verifier } from './verifier';

export interface FileSessionTarget {
  /** The user's whole file. */
  file: UserSource;
  /** 1-based line where the target declaration starts (doc comment and attributes included): the prefix is above it. */
  line: number;
}

/** How the file's prefix went: Lean's messages on it (the user's own code, shown, never judged as the candidate). */
export interface PrefixReport {
  status: 'ok' | 'failed';
  /** Lean's messages on the prefix, in file lines. */
  messages: ReplMessage[];
  /** Why the session could not be opened (status `failed`): the outcome every check then gets. */
  failure?: CheckOutcome;
  /** Options the prefix sets for the rest of the file that weaken checking (`debug.*`): no candidate is then valid. */
  weakeningOptions?: string[];
}

export class FileSession {
  private closed = false;
  constructor(
    private readonly verifier: Verifier,
    private readonly run: SessionRun,
    readonly prefix: PrefixReport,
    private readonly replSession?: ReplSession,
  ) {}

  /** Checks one candidate declaration (model text) where the target stands; positions are the candidate's own. */
  async check(candidate: ModelText, options: BatchCheckOptions = {}): Promise<CheckOutcome> {
    if (this.prefix.failure) return this.prefix.failure;
    if (this.closed) throw new Error('the file session is closed');
    const outcome = await this.verifier.checkOnSession(candidate, this.run, options);
    const weakening = this.prefix.weakeningOptions ?? [];
    if (outcome.verdict.status !== 'valid' || weakening.length === 0) return outcome;
    // the user may switch the kernel off in their own file; a candidate checked there was not checked by the kernel
    return {
      ...outcome,
      verdict: {
        ...outcome.verdict,
        status: 'rejected',
        reason: `Lean accepted the candidate, but the file sets ${weakening.map((o) => `'${o}'`).join(', ')} above it, which weakens checking`,
      },
    };
  }

  /**
   * The session as the prover's and editor's `LeanVerifier`: each `code` is a candidate for the target (model text:
   * the target declaration, any header it repeats ignored), never the whole file again.
   */
  asVerifier(): LeanVerifier {
    return {
      check: (code, options) => this.check(modelText(code), options),
      close: () => this.close(),
    };
  }

  /** Gives the REPL back (after the checks already asked for). */
  async close(): Promise<void> {
    this.closed = true;
    await this.replSession?.close();
  }
}

/** Opens a session on `target`: the file's header and prefix are elaborated here, once. */
export async function openFileSession(
  verifier: Verifier,
  target: FileSessionTarget,
  options: { timeout?: number; signal?: AbortSignal } = {},
): Promise<FileSession> {
  const split = userHeader(target.file);
  const bodyLines = split.body.split('\n');
  const above = Math.max(0, target.line - 1 - split.headerLines);
  const prefix = bodyLines.slice(0, above).join('\n');
  const namespace = namespaceAtEnd(prefix);
  // a candidate's declarations are audited by the names Lean gives them, which depend on the namespaces open above
  // it: where the scopes cannot be followed, auditing root names could miss what Lean added, so no check runs
  if (namespace === undefined) return unfollowableScopes(verifier, split.isModule);
  const timeoutMs = clampTimeoutS(options.timeout, verifier.defaultTimeoutS) * 1000;
  const runner = verifier.runner;
  if (runner instanceof PoolRunner) {
    const opened = await runner.openSession(split.command, prefix, { timeoutMs, signal: options.signal });
    if (opened.kind !== 'ok') {
      const failure = await verifier.outcomeOfFailure(opened, target.file, split);
      return new FileSession(verifier, failing(split.isModule, namespace), {
        status: 'failed',
        messages: failure.verdict.messages,
        failure,
      });
    }
    const messages = rebaseResponse(opened.prefix, split.headerLines).messages ?? [];
    const run: SessionRun = {
      isModule: split.isModule,
      namespace,
      run: (request) => opened.session.run(request),
    };
    return new FileSession(
      verifier,
      run,
      { status: 'ok', messages, weakeningOptions: weakeningOptionsOf(prefix) },
      opened.session,
    );
  }
  // the lean-file fallback: the whole file above the target plus the candidate, one file per check
  const prefixLines = above;
  const run: SessionRun = {
    isModule: split.isModule,
    namespace,
    run: async (request) => {
      const result = await runner.run({
        ...request,
        header: split.command,
        body: `${prefix}\n${request.body}`,
        ...(request.auditCopy
          ? { auditCopy: { ...request.auditCopy, body: `${prefix}\n${request.auditCopy.body}` } }
          : {}),
      });
      return result.kind === 'ok' ? candidateOnly(result, prefixLines) : result;
    },
  };
  return new FileSession(verifier, run, { status: 'ok', messages: [], weakeningOptions: weakeningOptionsOf(prefix) });
}

/** The candidate's part of a whole-file answer: messages and sorries below the prefix, moved to candidate lines. */
function candidateOnly(result: Extract<RunResult, { kind: 'ok' }>, prefixLines: number): RunResult {
  const below = (line: number | undefined): boolean => line === undefined || line > prefixLines;
  const response: CommandResponse = {
    ...result.response,
    ...(result.response.messages ? { messages: result.response.messages.filter((m) => below(m.pos.line)) } : {}),
    ...(result.response.sorries ? { sorries: result.response.sorries.filter((s) => below(s.pos?.line)) } : {}),
  };
  return { ...result, response: rebaseResponse(response, -prefixLines) };
}

/** The session refused before Lean: the scopes above the target (`namespace`/`section`/`end`) could not be followed. */
function unfollowableScopes(verifier: Verifier, isModule: boolean): FileSession {
  const reason =
    'Cannot check a candidate here: the namespaces and sections above the target could not be followed ' +
    "(an 'end' that does not close what was opened, or its name on another line), so its declarations' names are unknown; check the whole file instead";
  const failure: CheckOutcome = { verdict: { status: 'rejected', reason, messages: [], sorries: [], time: 0 } };
  return new FileSession(verifier, failing(isModule, []), { status: 'failed', messages: [], failure });
}

function failing(isModule: boolean, namespace: string[]): SessionRun {
  return {
    isModule,
    namespace,
    run: async (): Promise<RunResult> => ({ kind: 'server_error', message: 'the file session failed to open' }),
  };
}
