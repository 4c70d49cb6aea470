// Runs snippets on the REPL pool: header via the pool, body on the header's env, then the axiom
// audit on the body's env. Every failure becomes this snippet's own result; a REPL that timed out,
// crashed or spoke garbage is discarded (the pool starts a new one when needed).
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { CommandResponse, ReplErrorResponse, ReplMessage } from '../protocol';
import { ReplFailure } from './errors';
import { HeaderFailed, type Lease, type ReplPool } from './pool';
import {
  auditAnswers,
  auditCommand,
  type RunRequest,
  type RunResult,
  type RunnerStats,
  type SnippetRunner,
} from './runner';

export class PoolRunner implements SnippetRunner {
  readonly mode = 'repl' as const;
  constructor(readonly pool: ReplPool) {}

  stats(): RunnerStats {
    return { mode: 'repl', ...this.pool.stats() };
  }
  close(): Promise<void> {
    return this.pool.close();
  }

  async run(req: RunRequest): Promise<RunResult> {
    let lease: Lease;
    try {
      lease = await this.pool.acquire(req.header, {
        reuse: req.reuse,
        headerTimeoutMs: req.timeoutMs,
        signal: req.signal,
      });
    } catch (err) {
      if (err instanceof HeaderFailed) {
        const r = err.response;
        if ('message' in r && typeof r.message === 'string') return { kind: 'repl_error', message: r.message, time: 0 };
        return { kind: 'header_error', response: r as CommandResponse };
      }
      return failure(err);
    }
    try {
      const result = await runOnEnv(lease, lease.headerEnv, req);
      lease.release();
      return result;
    } catch (err) {
      lease.discard();
      return { ...failure(err), replId: lease.repl.id };
    }
  }

  /**
   * Environment reuse for a file (fileSession.ts): one REPL with `header` imported and `prefix` elaborated on it as
   * one command, kept for every body run on it (`env`), until `close()`. Runs on one REPL take turns.
   */
  async openSession(
    header: string,
    prefix: string,
    options: { timeoutMs: number; signal?: AbortSignal },
  ): Promise<{ kind: 'ok'; session: ReplSession; prefix: CommandResponse } | Exclude<RunResult, { kind: 'ok' }>> {
    let lease: Lease;
    try {
      lease = await this.pool.acquire(header, {
        reuse: true,
        headerTimeoutMs: options.timeoutMs,
        signal: options.signal,
      });
    } catch (err) {
      if (err instanceof HeaderFailed) {
        const r = err.response;
        if ('message' in r && typeof r.message === 'string') return { kind: 'repl_error', message: r.message, time: 0 };
        return { kind: 'header_error', response: r as CommandResponse };
      }
      return failure(err) as Exclude<RunResult, { kind: 'ok' }>;
    }
    try {
      const answer = (await lease.repl.send(
        { cmd: prefix, env: lease.headerEnv },
        options.timeoutMs,
      )) as CommandResponse & Partial<ReplErrorResponse>;
      if (typeof answer.message === 'string' || typeof answer.env !== 'number') {
        lease.release();
        return { kind: 'repl_error', message: answer.message ?? 'the REPL gave the file no environment', time: 0 };
      }
      return { kind: 'ok', session: new ReplSession(lease, answer.env), prefix: answer };
    } catch (err) {
      lease.discard();
      return { ...failure(err), replId: lease.repl.id } as Exclude<RunResult, { kind: 'ok' }>;
    }
  }
}

/** One REPL holding a file's prefix env: bodies run on it in turn (fileSession.ts). */
export class ReplSession {
  private queue: Promise<unknown> = Promise.resolve();
  private broken = false;
  private closed = false;
  constructor(
    private readonly lease: Lease,
    readonly env: number,
  ) {}

  run(req: Omit<RunRequest, 'header' | 'reuse'>): Promise<RunResult> {
    const turn = this.queue.then(async (): Promise<RunResult> => {
      if (this.closed || this.broken)
        return { kind: 'server_error', message: 'the file session is closed', replId: this.lease.repl.id };
      try {
        return await runOnEnv(this.lease, this.env, req);
      } catch (err) {
        this.broken = true; // a REPL that timed out, crashed or spoke garbage is not used again
        return { ...failure(err), replId: this.lease.repl.id };
      }
    });
    this.queue = turn.catch(() => undefined);
    return turn;
  }

  /** Gives the REPL back to the pool (after the runs already asked for). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.queue;
    if (this.broken) this.lease.discard();
    else this.lease.release();
  }
}

/** The body on env `base`, then its audit (and the audit copy's): the answers, or a throw for a failed REPL. */
async function runOnEnv(
  lease: Pick<Lease, 'repl' | 'scratch' | 'headerEnv'>,
  base: number,
  req: Omit<RunRequest, 'header' | 'reuse'>,
): Promise<RunResult> {
  const replId = lease.repl.id;
  const cmd: Record<string, unknown> = { cmd: req.body, env: base };
  if (req.infotree) cmd.infotree = req.infotree;
  const t0 = performance.now();
  const answer = (await lease.repl.send(cmd, req.timeoutMs)) as CommandResponse & Partial<ReplErrorResponse>;
  const time = round6((performance.now() - t0) / 1000);
  if (typeof answer.message === 'string') return { kind: 'repl_error', message: answer.message, time, replId };
  // every name gets an entry: one without an answer fails the verdict (never passes it)
  const audit: Map<string, ReplMessage[]> = auditAnswers([...req.audit, ...(req.auditCopy?.names ?? [])], []);
  if (req.audit.length > 0 && typeof answer.env === 'number') {
    for (const [name, ms] of await auditOn(lease, req.audit, answer.env, req)) audit.set(name, ms);
  }
  let copyErrors: ReplMessage[] | undefined;
  if (req.auditCopy && typeof answer.env === 'number') {
    // the copy feeds only the audit: its own command on the base env, never the verdict's messages
    const copy = (await lease.repl.send({ cmd: req.auditCopy.body, env: base }, req.timeoutMs)) as CommandResponse &
      Partial<ReplErrorResponse>;
    copyErrors =
      typeof copy.message === 'string'
        ? [{ pos: { line: 1, column: 0 }, endPos: null, severity: 'error', data: copy.message }]
        : (copy.messages ?? []).filter((m) => m.severity === 'error');
    if (typeof copy.env === 'number') {
      for (const [name, ms] of await auditOn(lease, req.auditCopy.names, copy.env, req)) audit.set(name, ms);
    }
  }
  const memoryBytes = lease.repl.rssBytes();
  return { kind: 'ok', response: answer, audit, ...(copyErrors ? { copyErrors } : {}), time, replId, memoryBytes };
}

let pickles = 0;

/**
 * `#print axioms` for `names` on env `env`; with `auditOutsideModule`, on that env pickled into the REPL's scratch
 * folder and unpickled (a non-module env with the same constants: moduleAudit.ts). A step the REPL refuses leaves
 * the names without answers, which fails the verdict (never passes it).
 */
async function auditOn(
  lease: Pick<Lease, 'repl' | 'scratch'>,
  names: string[],
  env: number,
  req: Pick<RunRequest, 'timeoutMs' | 'auditOutsideModule'>,
): Promise<Map<string, ReplMessage[]>> {
  let on = env;
  if (req.auditOutsideModule) {
    const path = join(lease.scratch, `kimina-audit-${process.pid}-${++pickles}.olean`);
    try {
      const pickled = (await lease.repl.send({ pickleTo: path, env }, req.timeoutMs)) as Partial<CommandResponse>;
      if (typeof pickled.env !== 'number') return auditAnswers(names, []);
      const unpickled = (await lease.repl.send({ unpickleEnvFrom: path }, req.timeoutMs)) as Partial<CommandResponse>;
      if (typeof unpickled.env !== 'number') return auditAnswers(names, []);
      on = unpickled.env;
    } finally {
      rmSync(path, { force: true });
    }
  }
  const answer = (await lease.repl.send({ cmd: auditCommand(names), env: on }, req.timeoutMs)) as CommandResponse &
    Partial<ReplErrorResponse>;
  return auditAnswers(names, answer.messages ?? []);
}

function failure(err: unknown): RunResult {
  if (err instanceof ReplFailure && err.kind === 'timeout') return { kind: 'timeout', message: err.message };
  if (err instanceof ReplFailure && err.kind === 'spawn')
    return { kind: 'server_error', message: err.message, cannotStart: true };
  return { kind: 'server_error', message: err instanceof Error ? err.message : String(err) };
}

function round6(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
