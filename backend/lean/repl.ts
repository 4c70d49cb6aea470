// One Lean REPL process (leanprover-community/repl JSON protocol): a request is JSON followed by one
// blank line; the answer is JSON (possibly over several lines) read until a blank line.
// The process runs in its own process group, so a kill takes lake, the REPL and any children.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { ReplFailure } from './errors';
import type { LaunchSpec } from './launch';

const stderrKeep = 4000;

interface Waiting {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
}

export class ReplProcess {
  readonly id = randomUUID();
  private readonly child: ChildProcess;
  private lines: string[] = [];
  private partial = '';
  private stderrTail = '';
  private waiting: Waiting | undefined;
  private exitInfo: string | undefined;

  constructor(spec: LaunchSpec) {
    this.child = spawn(spec.argv[0], spec.argv.slice(1), {
      cwd: spec.cwd,
      env: spec.env,
      stdio: ['pipe', 'pipe', 'pipe'],
      detached: true,
    });
    this.child.stdout?.setEncoding('utf8');
    this.child.stderr?.setEncoding('utf8');
    this.child.stdout?.on('data', (chunk: string) => this.onStdout(chunk));
    this.child.stderr?.on('data', (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-stderrKeep);
    });
    this.child.stdin?.on('error', () => {
      /* reported through 'exit' */
    });
    this.child.on('error', (err) =>
      this.fail(new ReplFailure('spawn', `could not start the Lean REPL (${spec.argv.join(' ')}): ${err.message}`)),
    );
    this.child.on('exit', (code, signal) => {
      this.exitInfo = signal ? `signal ${signal}` : `code ${code}`;
      // let stdout/stderr drain first, so the error carries the process's last words
      // A shell's 127 (command not found) or 126 (not executable): the REPL never started, as with ENOENT.
      const neverStarted = !signal && (code === 127 || code === 126);
      setImmediate(() =>
        this.fail(
          new ReplFailure(
            neverStarted ? 'spawn' : 'exited',
            `Lean REPL process exited (${this.exitInfo})${this.stderrSuffix()}`,
          ),
        ),
      );
    });
  }

  get pid(): number | undefined {
    return this.child.pid;
  }
  get alive(): boolean {
    return this.exitInfo === undefined && this.child.exitCode === null && !this.child.killed;
  }

  private stderrSuffix(): string {
    const tail = this.stderrTail.trim();
    return tail ? `: ${tail.split('\n').slice(-5).join('\n')}` : '';
  }

  private onStdout(chunk: string): void {
    this.partial += chunk;
    let nl: number;
    while ((nl = this.partial.indexOf('\n')) >= 0) {
      const line = this.partial.slice(0, nl);
      this.partial = this.partial.slice(nl + 1);
      if (line.trim() === '') {
        if (this.lines.length === 0) continue;
        const text = this.lines.join('\n');
        this.lines = [];
        this.answer(text);
      } else this.lines.push(line);
    }
  }

  private answer(text: string): void {
    const w = this.waiting;
    if (!w) return; // output nobody asked for: ignore
    this.waiting = undefined;
    clearTimeout(w.timer);
    const parsed = parseAnswer(text);
    if (parsed !== undefined) {
      w.resolve(parsed);
      return;
    }
    this.kill();
    w.reject(new ReplFailure('garbage', `Lean REPL answered with unparsable output: ${text.slice(0, 200)}`));
  }

  private fail(err: ReplFailure): void {
    const w = this.waiting;
    if (!w) return;
    this.waiting = undefined;
    clearTimeout(w.timer);
    w.reject(err);
  }

  /** Sends one request and waits for its answer; on timeout the process is killed. */
  send(
    request: Record<string, unknown>,
    timeoutMs: number,
    timeoutMessage = `Lean REPL command timed out in ${timeoutMs / 1000} seconds`,
  ): Promise<unknown> {
    if (this.waiting) return Promise.reject(new Error('ReplProcess.send: a request is already in flight'));
    if (!this.alive)
      return Promise.reject(
        new ReplFailure(
          'exited',
          `Lean REPL process is not running${this.exitInfo ? ` (${this.exitInfo})` : ''}${this.stderrSuffix()}`,
        ),
      );
    return new Promise((resolve, reject) => {
      const w: Waiting = { resolve, reject };
      this.waiting = w;
      w.timer = setTimeout(
        () => {
          if (this.waiting !== w) return;
          this.waiting = undefined;
          this.kill();
          reject(new ReplFailure('timeout', timeoutMessage));
        },
        Math.max(0, timeoutMs),
      );
      this.child.stdin?.write(JSON.stringify(request) + '\n\n');
    });
  }

  /** Kills the whole process group (lake, the REPL, anything they started). */
  kill(): void {
    const pid = this.child.pid;
    if (pid === undefined) return;
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      try {
        this.child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
    this.fail(new ReplFailure('closed', 'Lean REPL was stopped'));
  }

  /** Resident memory of the process tree in bytes (Linux /proc; 0 elsewhere). */
  rssBytes(): number {
    const pid = this.child.pid;
    return pid === undefined ? 0 : treeRss(pid, 0);
  }
}

/** The answer's JSON; lines before a line starting with `{` (e.g. lake's build chatter) are skipped. */
function parseAnswer(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    /* try without a prefix */
  }
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l.startsWith('{'));
  if (start <= 0) return undefined;
  try {
    return JSON.parse(lines.slice(start).join('\n'));
  } catch {
    return undefined;
  }
}

function treeRss(pid: number, depth: number): number {
  let total = 0;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const m = /VmRSS:\s+(\d+)\s+kB/.exec(status);
    if (m) total += Number(m[1]) * 1024;
  } catch {
    return 0;
  }
  if (depth > 8) return total;
  try {
    const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    for (const c of children ? children.split(/\s+/) : []) total += treeRss(Number(c), depth + 1);
  } catch {
    /* no children file on this kernel */
  }
  return total;
}
