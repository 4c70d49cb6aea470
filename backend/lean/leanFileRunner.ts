// The zero-setup fallback when no REPL binary exists: one `lake env lean --json <file>` per snippet
// (no header reuse, so slower). The file is header + body + one `#print axioms _root_.NAME` line per
// audited name; Lean's JSON messages are mapped into the REPL's response shape, body-relative; messages
// on the import lines come back apart (`headerMessages`), for the verifier to place on the user's lines.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReplMessage } from '../protocol';
import { MemoryGuard, exeName, osOf, startProcess, stopTree, systemStop, type Os } from './processes';
import { leanNotStarted } from './errors';
import {
  auditAnswers,
  auditCommand,
  type RunRequest,
  type RunResult,
  type RunnerStats,
  type SnippetRunner,
} from './runner';

export interface LeanFileRunnerOptions {
  projectDir: string;
  /** argv prefix that runs Lean with the project's path (default `lake env lean`). */
  leanCommand?: string[];
  /** Environment for Lean: what `lake env` sets, or the base environment the root handed down (Settings.childEnv). */
  env: NodeJS.ProcessEnv;
  /** Wraps the argv (sandbox, memory cap); `scratch` is the only writable folder. */
  wrap?(argv: string[], scratch: string): string[];
  maxParallel: number;
  /** The OS (default: this machine's; processes.ts decides start, guard and stop from it). */
  os?: Os;
  /** The memory guard stops a check whose Lean holds more than this many bytes (0 or absent: no guard). */
  guardBytes?: number;
  guardIntervalMs?: number;
}

interface LeanJsonMessage {
  severity?: string;
  pos?: { line: number; column: number };
  endPos?: { line: number; column: number } | null;
  data?: string;
}

/** Parses `lean --json` output (one JSON message per line) into REPL-style messages. */
export function parseLeanJson(stdout: string): ReplMessage[] {
  const out: ReplMessage[] = [];
  for (const line of stdout.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('{')) continue;
    let m: LeanJsonMessage;
    try {
      m = JSON.parse(t) as LeanJsonMessage;
    } catch {
      continue;
    }
    if (!m.pos || typeof m.data !== 'string') continue;
    const severity = m.severity === 'error' ? 'error' : m.severity === 'warning' ? 'warning' : 'info';
    out.push({ pos: m.pos, endPos: m.endPos ?? null, severity, data: m.data.trim() });
  }
  return out;
}

export class LeanFileRunner implements SnippetRunner {
  readonly mode = 'lean-file' as const;
  private running = 0;
  private readonly queue: (() => void)[] = [];
  private checks = 0;

  constructor(private readonly options: LeanFileRunnerOptions) {}

  stats(): RunnerStats {
    return {
      mode: 'lean-file',
      total: this.options.maxParallel,
      busy: this.running,
      waiting: this.queue.length,
      headerImports: this.checks,
    };
  }
  async close(): Promise<void> {
    /* nothing persistent */
  }

  async run(req: RunRequest): Promise<RunResult> {
    if (this.running >= this.options.maxParallel) await new Promise<void>((r) => this.queue.push(r));
    this.running++;
    this.checks++;
    try {
      return await this.runOne(req);
    } finally {
      this.running--;
      this.queue.shift()?.();
    }
  }

  /**
   * The body's file is header + body + the `_root_`-anchored audit lines (anchored, and each answer must
   * name its declaration, so the scope the body leaves open cannot redirect them). With examples or
   * anonymous instances, the audit copy runs as a second file that feeds only the audit.
   */
  private async runOne(req: RunRequest): Promise<RunResult> {
    const headerLines = req.header === '' ? 0 : req.header.split('\n').length;
    const main = await this.runFile(req, req.body, req.audit);
    if (main.kind !== 'done') return main;
    const bodyMessages: ReplMessage[] = [];
    const headerMessages: ReplMessage[] = [];
    for (const m of main.messages) {
      if (m.pos.line > headerLines) bodyMessages.push(shift(m, -headerLines));
      else headerMessages.push(m);
    }
    const audit = main.audit;
    let copyErrors: ReplMessage[] | undefined;
    if (req.auditCopy) {
      const copy = await this.runFile(req, req.auditCopy.body, req.auditCopy.names);
      if (copy.kind !== 'done') return copy;
      copyErrors = copy.messages.filter((m) => m.severity === 'error');
      for (const [name, ms] of copy.audit) audit.set(name, ms);
    }
    const response = bodyMessages.length ? { messages: bodyMessages } : {};
    return {
      kind: 'ok',
      response,
      audit,
      ...(copyErrors ? { copyErrors } : {}),
      ...(headerMessages.length ? { headerMessages } : {}),
      time: main.time,
    };
  }

  /** Runs Lean on header + body + audit lines; messages before the audit lines and the audit's answers by name. */
  private runFile(
    req: RunRequest,
    body: string,
    names: string[],
  ): Promise<RunResult | { kind: 'done'; messages: ReplMessage[]; audit: Map<string, ReplMessage[]>; time: number }> {
    const scratch = mkdtempSync(join(tmpdir(), 'kimina-lean-'));
    const headerLines = req.header === '' ? 0 : req.header.split('\n').length;
    const bodyLines = body.split('\n').length;
    const file = join(scratch, 'Snippet.lean');
    const text = (req.header ? req.header + '\n' : '') + body + '\n' + auditCommand(names) + '\n';
    writeFileSync(file, text);
    const os = this.options.os ?? osOf();
    const base = [...(this.options.leanCommand ?? [exeName('lake', os), 'env', exeName('lean', os)]), '--json', file];
    const argv = this.options.wrap ? this.options.wrap(base, scratch) : base;
    return new Promise((resolve) => {
      const t0 = performance.now();
      const env = { ...this.options.env, HOME: scratch, TMPDIR: scratch };
      const child = startProcess({ argv, cwd: this.options.projectDir, env, os }, ['ignore', 'pipe', 'pipe']);
      const guardBytes = this.options.guardBytes ?? 0;
      // ps, PowerShell and taskkill run with the base environment, not the check's scratch HOME/TMPDIR
      const toolEnv = this.options.env;
      const guard = new MemoryGuard({
        limitBytes: guardBytes,
        intervalMs: this.options.guardIntervalMs,
        os,
        env: toolEnv,
      });
      const stop = systemStop(toolEnv);
      let stdout = '',
        stderr = '';
      let settled = false;
      const done = (r: Awaited<ReturnType<LeanFileRunner['runFile']>>): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        guard.stop();
        rmSync(scratch, { recursive: true, force: true });
        resolve(r);
      };
      const timer = setTimeout(() => {
        stopTree(child, os, stop);
        done({ kind: 'timeout', message: `Lean command timed out in ${req.timeoutMs / 1000} seconds` });
      }, req.timeoutMs);
      guard.start(child.pid, (bytes) => {
        stopTree(child, os, stop);
        const mib = (b: number): number => Math.round(b / (1024 * 1024));
        done({
          kind: 'server_error',
          message: `Lean stopped by the memory guard: its processes held ${mib(bytes)} MiB, above the limit of ${mib(guardBytes)} MiB (KIMINA_REPL_MEMORY_MB)`,
        });
      });
      child.stdout!.setEncoding('utf8').on('data', (c: string) => {
        stdout += c;
      });
      child.stderr!.setEncoding('utf8').on('data', (c: string) => {
        stderr = (stderr + c).slice(-4000);
      });
      child.on('error', (err) =>
        done({
          kind: 'server_error',
          message: leanNotStarted('Lean', base[0], err.message),
          cannotStart: true,
        }),
      );
      child.on('close', (code) => {
        const time = Math.round((performance.now() - t0) * 1000) / 1e6;
        const messages = parseLeanJson(stdout);
        // Lean exits non-zero on errors; a non-zero exit with no error message means it did not finish
        if (code !== 0 && !messages.some((m) => m.severity === 'error')) {
          // Lean never ran: the shell wrapper's 127/126 (not found / not executable), or the sandbox's execvp error
          const cannotStart =
            code === 127 || code === 126 || /execvp .*(?:No such file|Permission denied)|: not found$/m.test(stderr);
          // a Lean that never ran is named by its program, without the sandbox's or the shell's words
          done(
            cannotStart
              ? {
                  kind: 'server_error',
                  message: leanNotStarted('Lean', base[0], `code ${code}: ${stderr}`),
                  cannotStart,
                }
              : {
                  kind: 'server_error',
                  message: `Lean exited with code ${code}: ${stderr.trim().split('\n').slice(-5).join('\n') || stdout.slice(0, 500)}`,
                },
          );
          return;
        }
        const firstAudit = headerLines + bodyLines + 1;
        done({
          kind: 'done',
          time,
          messages: messages.filter((m) => m.pos.line < firstAudit),
          audit: auditAnswers(
            names,
            messages.filter((m) => m.pos.line >= firstAudit),
            firstAudit,
          ),
        });
      });
    });
  }
}

function shift(m: ReplMessage, delta: number): ReplMessage {
  return {
    ...m,
    pos: { line: m.pos.line + delta, column: m.pos.column },
    endPos: m.endPos ? { line: m.endPos.line + delta, column: m.endPos.column } : null,
  };
}
