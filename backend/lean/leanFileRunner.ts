// The zero-setup fallback when no REPL binary exists: one `lake env lean --json <file>` per snippet
// (no header reuse, so slower). The file is header + body + one `#print axioms` line per audited
// name; Lean's JSON messages are mapped into the REPL's response shape, body-relative.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ReplMessage } from '../protocol';
import { auditAnswers, auditCommand, type RunRequest, type RunResult, type RunnerStats, type SnippetRunner } from './runner';

export interface LeanFileRunnerOptions {
  projectDir: string;
  /** argv prefix that runs Lean with the project's path (default `lake env lean`). */
  leanCommand?: string[];
  /** Environment for Lean (e.g. what `lake env` sets); default: this process's. */
  env?: NodeJS.ProcessEnv;
  /** Wraps the argv (sandbox, memory cap); `scratch` is the only writable folder. */
  wrap?(argv: string[], scratch: string): string[];
  maxParallel: number;
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
    try { m = JSON.parse(t) as LeanJsonMessage; } catch { continue; }
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

  stats(): RunnerStats { return { mode: 'lean-file', total: this.options.maxParallel, busy: this.running, waiting: this.queue.length, headerImports: this.checks }; }
  async close(): Promise<void> { /* nothing persistent */ }

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

  private runOne(req: RunRequest): Promise<RunResult> {
    const scratch = mkdtempSync(join(tmpdir(), 'kimina-lean-'));
    const headerLines = req.header === '' ? 0 : req.header.split('\n').length;
    const bodyLines = req.body.split('\n').length;
    const file = join(scratch, 'Snippet.lean');
    const text = (req.header ? req.header + '\n' : '') + req.body + '\n' + auditCommand(req.audit) + '\n';
    writeFileSync(file, text);
    const base = [...(this.options.leanCommand ?? ['lake', 'env', 'lean']), '--json', file];
    const argv = this.options.wrap ? this.options.wrap(base, scratch) : base;
    return new Promise<RunResult>((resolve) => {
      const t0 = performance.now();
      const env = { ...(this.options.env ?? process.env), HOME: scratch, TMPDIR: scratch };
      const child = spawn(argv[0], argv.slice(1), { cwd: this.options.projectDir, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '', stderr = '';
      let settled = false;
      const done = (r: RunResult): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        rmSync(scratch, { recursive: true, force: true });
        resolve(r);
      };
      const timer = setTimeout(() => {
        try { process.kill(-(child.pid ?? 0), 'SIGKILL'); } catch { /* gone */ }
        done({ kind: 'timeout', message: `Lean command timed out in ${req.timeoutMs / 1000} seconds` });
      }, req.timeoutMs);
      child.stdout.setEncoding('utf8').on('data', (c: string) => { stdout += c; });
      child.stderr.setEncoding('utf8').on('data', (c: string) => { stderr = (stderr + c).slice(-4000); });
      child.on('error', (err) => done({ kind: 'server_error', message: `could not run Lean (${argv.join(' ')}): ${err.message}. Install Lean with elan: https://github.com/leanprover/elan` }));
      child.on('close', (code) => {
        const time = Math.round((performance.now() - t0) * 1000) / 1e6;
        const messages = parseLeanJson(stdout);
        // Lean exits non-zero on errors; a non-zero exit with no error message means it did not finish
        if (code !== 0 && !messages.some((m) => m.severity === 'error')) {
          done({ kind: 'server_error', message: `Lean exited with code ${code}: ${stderr.trim().split('\n').slice(-5).join('\n') || stdout.slice(0, 500)}` });
          return;
        }
        const firstAudit = headerLines + bodyLines + 1;
        const bodyMessages: ReplMessage[] = [];
        const auditMessages: ReplMessage[] = [];
        for (const m of messages) {
          if (m.pos.line >= firstAudit) auditMessages.push(m);
          else if (m.pos.line > headerLines) bodyMessages.push(shift(m, -headerLines));
          else bodyMessages.push({ ...m, pos: { line: 1, column: 0 }, endPos: null, data: `(in the imports) ${m.data}` });
        }
        const response = bodyMessages.length ? { messages: bodyMessages } : {};
        done({ kind: 'ok', response, audit: auditAnswers(req.audit, auditMessages, firstAudit), time });
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
