// The verifier: untrusted-code filter, header split, the audit plan, a runner (REPL pool or lean-file
// fallback) that sends the user's text to Lean unchanged, the axiom audit and the strict verdict. Admission is bounded: a batch that does not fit the queue
// is refused as a whole (QueueFull) before any work starts; an admitted snippet always gets a result.
import type { CommandResponse, ReplPos, Verdict } from '../protocol';
import { clampTimeoutS } from './checkTimeout';
import { QueueFull } from './errors';
import { planAudit } from './auditPlan';
import { findDeclarationHeads } from './declarations';
import type { ModelText, UserSource } from './authorship';
import { placeCheckedHeaderMessages, snippetHeader, userHeader, type CheckedHeader } from './checkedHeader';
import { rebaseResponse } from './header';
import type { RunRequest, RunResult, RunnerStats, SnippetRunner } from './runner';
import type { CheckOptions, CheckOutcome, LeanVerifier } from './types';
import { findUntrustedCode } from './untrusted';
import { weakeningOptionsOf } from './weakening';
import { isSorryWarning, judgeResponse, type AxiomPolicy } from './verdict';

export interface VerifierOptions {
  runner: SnippetRunner;
  policy: AxiomPolicy;
  /** Checks admitted at once (running + queued); beyond it, QueueFull. */
  maxInFlight: number;
  /** Seconds, when a check names none. */
  defaultTimeoutS: number;
  /**
   * `#print axioms` answers inside a `module` (Lean v4.30 and later); otherwise a module file's audit runs on its
   * env pickled outside module mode (moduleAudit.ts). Default false: sound on every release.
   */
  printAxiomsInModules?: boolean;
}

/** Where a file session runs a candidate: on its prefix env (PoolRunner's ReplSession, or the fallback's whole file). */
export interface SessionRun {
  /** The file's header is a `module`. */
  isModule: boolean;
  /** The namespaces open where the candidate stands (its declarations' names start with them). */
  namespace: string[];
  run(request: Omit<RunRequest, 'header' | 'reuse'>): Promise<RunResult>;
}

/** Who wrote the text a check reads: the user's own file, or text nobody vouches for (authorship.ts). */
export type Author = 'user' | 'model';

export interface BatchCheckOptions extends CheckOptions {
  /** Take a warm REPL with the same header (default true). */
  reuse?: boolean;
  /** Per snippet, by index: its own trusted declarations, audited besides the batch-wide `theorems`. */
  theoremsEach?: readonly (readonly string[] | undefined)[];
}

/** The options of snippet `index` of a batch alone: the batch-wide names plus its own, no per-snippet list. */
export function optionsForSnippet(options: BatchCheckOptions, index: number): BatchCheckOptions {
  const { theoremsEach, ...rest } = options;
  const own = theoremsEach?.[index];
  if (!own || own.length === 0) return rest;
  return { ...rest, theorems: [...(options.theorems ?? []), ...own] };
}

export interface VerifierStats extends RunnerStats {
  inFlight: number;
  maxInFlight: number;
}

/** A LeanVerifier that also takes batches and reports its load (the HTTP layer needs both). */
export interface BatchVerifier extends LeanVerifier {
  checkBatch(codes: string[], options?: BatchCheckOptions): Promise<CheckOutcome[]>;
  stats(): VerifierStats;
  readonly policy: AxiomPolicy;
}

export class Verifier implements BatchVerifier {
  private inFlight = 0;
  private recentSeconds = 1;
  readonly policy: AxiomPolicy;
  readonly runner: SnippetRunner;

  constructor(private readonly options: VerifierOptions) {
    this.policy = options.policy;
    this.runner = options.runner;
  }

  stats(): VerifierStats {
    return { ...this.options.runner.stats(), inFlight: this.inFlight, maxInFlight: this.options.maxInFlight };
  }

  /** Checks text nobody vouches for (a plain string counts as such): filtered, then checked and audited. */
  async check(code: string | ModelText, options: BatchCheckOptions = {}): Promise<CheckOutcome> {
    return (await this.checkBatch([code], options))[0];
  }

  /**
   * Checks the user's own file as Lean elaborates it: its header exactly, its own commands unfiltered; every
   * declaration it adds is still audited.
   */
  async checkUserFile(source: UserSource, options: BatchCheckOptions = {}): Promise<CheckOutcome> {
    return (await this.checkBatch([source], options, 'user'))[0];
  }

  /** Rejects with QueueFull, before any work starts, when the batch does not fit. */
  async checkBatch(
    codes: readonly (string | ModelText)[] | readonly UserSource[],
    options: BatchCheckOptions = {},
    author: Author = 'model',
  ): Promise<CheckOutcome[]> {
    if (this.inFlight + codes.length > this.options.maxInFlight) {
      const stats = this.options.runner.stats();
      const lanes = Math.max(1, stats.total ?? 1);
      throw new QueueFull(Math.max(1, Math.ceil((this.recentSeconds * (this.inFlight + codes.length)) / lanes)));
    }
    this.inFlight += codes.length;
    return Promise.all(
      codes.map(async (code, index) => {
        const t0 = performance.now();
        try {
          return await this.checkOne(code, optionsForSnippet(options, index), author);
        } catch (err) {
          // an unexpected failure is this snippet's own result, never the batch's
          const reason = `Internal error while checking: ${err instanceof Error ? err.message : String(err)}`;
          return { verdict: { status: 'server_error' as const, reason, messages: [], sorries: [], time: 0 } };
        } finally {
          this.inFlight--;
          this.recentSeconds = 0.8 * this.recentSeconds + 0.2 * ((performance.now() - t0) / 1000);
        }
      }),
    );
  }

  /**
   * A candidate (model text) on a file session's env (fileSession.ts): filtered, run on the file's prefix env,
   * audited, judged. A header the candidate repeats is left out: the check uses the file's real header and prefix.
   * Positions are the candidate's own.
   */
  async checkOnSession(
    candidate: ModelText,
    session: SessionRun,
    options: BatchCheckOptions = {},
  ): Promise<CheckOutcome> {
    if (this.inFlight + 1 > this.options.maxInFlight) throw new QueueFull(Math.max(1, Math.ceil(this.recentSeconds)));
    this.inFlight++;
    try {
      return await this.checkOne(candidate, options, 'model', session);
    } finally {
      this.inFlight--;
    }
  }

  private async checkOne(
    code: string,
    options: BatchCheckOptions,
    author: Author,
    session?: SessionRun,
  ): Promise<CheckOutcome> {
    const split = author === 'user' ? userHeader(code) : snippetHeader(code);
    const { command: header, body, headerLines } = split;
    const isModule = session ? session.isModule : split.isModule;
    // the untrusted-code filter reads text nobody vouches for, never the user's own file (docs/security.md)
    const rejections =
      author === 'user'
        ? []
        : findUntrustedCode(code, { allowNativeDecide: this.policy.allowNativeDecide }, headerLines);
    if (rejections.length > 0) {
      const messages = rejections.map((r) => ({
        pos: { line: r.line, column: r.column },
        endPos: { line: r.endLine, column: r.endColumn },
        severity: 'error' as const,
        data: `kimina: rejected before Lean: ${r.message}`,
      }));
      const first = rejections[0];
      return {
        verdict: {
          status: 'rejected',
          reason: `Rejected before Lean (line ${first.line}): ${first.message}`,
          messages,
          sorries: [],
          time: 0,
        },
      };
    }
    const badName = options.theorems?.find((n) => !/^[^\s]+$/.test(n));
    if (badName !== undefined) {
      return {
        verdict: {
          status: 'server_error',
          reason: `Invalid declaration name to audit: ${JSON.stringify(badName)}`,
          messages: [],
          sorries: [],
          time: 0,
        },
      };
    }
    // the caller's names are always audited, whatever the source reading finds
    let planned = planAudit(
      body,
      options.theorems ?? [],
      headerLines,
      undefined,
      session?.namespace ?? [],
      author === 'user',
    );
    // the user's file goes to Lean even where the source reading cannot name every declaration: Lean judges it,
    // the caller's names are audited, and the file's verdict can then never be valid (below)
    let unaudited: string | undefined;
    if (!planned.ok && author === 'user') {
      unaudited = planned.problem;
      planned = { ok: true, plan: { names: (options.theorems ?? []).map((n) => n.replace(/^_root_\./, '')) } };
    }
    if (!planned.ok) {
      return {
        verdict: {
          status: 'rejected',
          reason: `Rejected before Lean: ${planned.problem}.`,
          messages: [],
          sorries: [],
          time: 0,
        },
      };
    }
    const { plan } = planned;
    if (plan.uncertain?.length) unaudited ??= `cannot audit with certainty (${plan.uncertain.join('; ')})`;
    const timeoutS = clampTimeoutS(options.timeout, this.options.defaultTimeoutS); // ≤ 3600 s, never overflowing a timer
    const request = {
      body,
      audit: plan.names,
      ...(plan.copy ? { auditCopy: { body: plan.copy.body, names: plan.copy.names } } : {}),
      timeoutMs: timeoutS * 1000,
      ...(isModule && !this.options.printAxiomsInModules ? { auditOutsideModule: true } : {}),
      infotree: options.infotree,
      signal: options.signal,
    };
    const result = session
      ? await session.run(request)
      : await this.options.runner.run({ ...request, header, reuse: options.reuse });
    if (result.kind !== 'ok') return this.outcomeOfFailure(result, code, split, timeoutS);
    switch (result.kind) {
      case 'ok': {
        const rebased = rebaseResponse(result.response, headerLines);
        const headerMessages = placeCheckedHeaderMessages(result.headerMessages ?? [], code, split);
        const response = headerMessages.length
          ? { ...rebased, messages: [...headerMessages, ...(rebased.messages ?? [])] }
          : rebased;
        const judged = judgeResponse({
          response,
          audit: result.audit,
          labels: plan.copy?.labels,
          copyErrors: result.copyErrors,
          policy: this.policy,
          time: result.time,
        });
        const weakening = author === 'user' && judged.status === 'valid' ? weakeningOptionsOf(body) : [];
        const verdict: Verdict =
          unaudited !== undefined && judged.status === 'valid'
            ? {
                ...judged,
                status: 'rejected',
                reason: `Lean accepted the file, but not every declaration could be audited: ${unaudited}`,
              }
            : weakening.length > 0
              ? {
                  ...judged,
                  status: 'rejected',
                  reason: `Lean accepted the file, but it sets ${weakening.map((o) => `'${o}'`).join(', ')}, which weakens checking`,
                }
              : judged;
        const sorryAt = sorryPosition(code, verdict);
        return {
          verdict,
          response,
          ...(sorryAt ? { sorryAt } : {}),
          run: { replId: result.replId, memoryBytes: result.memoryBytes },
        };
      }
    }
  }

  /** The outcome of a run that did not reach Lean's answer (timeout, REPL failure, a header Lean refused). */
  outcomeOfFailure(
    result: Exclude<RunResult, { kind: 'ok' }>,
    code: string,
    split: CheckedHeader,
    timeoutS = this.options.defaultTimeoutS,
  ): CheckOutcome {
    const outcome = (verdict: Verdict, response?: CommandResponse): CheckOutcome => ({
      verdict,
      ...(response ? { response } : {}),
      run: { replId: 'replId' in result ? result.replId : undefined },
    });
    switch (result.kind) {
      case 'timeout':
        return outcome({ status: 'timeout_error', reason: result.message, messages: [], sorries: [], time: timeoutS });
      case 'server_error':
        return outcome({
          status: 'server_error',
          reason: result.message,
          messages: [],
          sorries: [],
          time: 0,
          ...(result.cannotStart ? { leanMissing: true } : {}),
        });
      case 'repl_error':
        return {
          ...outcome({
            status: 'repl_error',
            reason: `The Lean REPL refused the command: ${result.message}`,
            messages: [],
            sorries: [],
            time: result.time,
          }),
          replMessage: result.message,
        };
      case 'header_error': {
        const messages = placeCheckedHeaderMessages(result.response.messages ?? [], code, split);
        const first = messages.find((m) => m.severity === 'error');
        return outcome(
          {
            status: 'lean_error',
            reason: `The imports failed${first ? ` (line ${first.pos.line})` : ''}: ${first?.data.split('\n')[0] ?? 'unknown error'}`,
            messages,
            sorries: [],
            time: 0,
          },
          { ...result.response, ...(result.response.messages ? { messages } : {}) },
        );
      }
    }
  }

  /** Seconds, when a check names none. */
  get defaultTimeoutS(): number {
    return this.options.defaultTimeoutS;
  }

  close(): Promise<void> {
    return this.options.runner.close();
  }
}

/** For a sorry found only by the audit: where the declaration whose axioms hold `sorryAx` stands. */
function sorryPosition(code: string, verdict: Verdict): ReplPos | undefined {
  if (verdict.status !== 'sorry' || verdict.messages.some(isSorryWarning)) return undefined;
  const name = Object.entries(verdict.axiomsByDeclaration ?? {}).find(([, axioms]) => axioms.includes('sorryAx'))?.[0];
  if (name === undefined) return undefined;
  const nameless = /^(?:example|instance) \(line (\d+)\)$/.exec(name);
  if (nameless) return { line: Number(nameless[1]), column: 0 };
  const head = findDeclarationHeads(code).find((d) => d.name === name);
  return head ? { line: head.line, column: head.column } : undefined;
}
