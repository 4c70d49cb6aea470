// One Lean REPL process (leanprover-community/repl JSON protocol): a request is JSON followed by one
// blank line; the answer is JSON (possibly over several lines) read until a blank line.
// How it starts, is watched and is stopped is decided per OS in processes.ts: a stop takes the whole tree
// (lake, the REPL and any children), and the memory guard samples the tree while a command runs.
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import { ReplFailure, leanNotStarted } from './errors';
import type { LaunchSpec } from './launch';
import {
  MemoryGuard,
  osOf,
  procTreeRss,
  startProcess,
  stopTree,
  systemStop,
  type Os,
  type StopDeps,
} from './processes';

const stderrKeep = 4000;

/** The largest answer one command may print by default (KIMINA_REPL_ANSWER_MB): 64 MiB. */
const DEFAULT_ANSWER_LIMIT_BYTES = 64 * 1024 * 1024;

interface Waiting {
  resolve(value: unknown): void;
  reject(err: Error): void;
  timer?: NodeJS.Timeout;
}

export class ReplProcess {
  readonly id = randomUUID();
  private readonly child: ChildProcess;
  /** The current answer's complete lines, and the pieces of its unfinished line (each chunk scanned once). */
  private lines: string[] = [];
  private linePieces: string[] = [];
  private lineBlank = true;
  /** Bytes read since the last complete answer; past `answerLimit` the process is stopped. */
  private answerBytes = 0;
  private readonly answerLimit: number;
  private overflowed = false;
  private readonly decoder = new StringDecoder('utf8');
  private stderrTail = '';
  private waiting: Waiting | undefined;
  private exitInfo: string | undefined;
  private readonly os: Os;
  private readonly guard: MemoryGuard;
  private readonly guardBytes: number;
  private readonly stopDeps: StopDeps;

  constructor(spec: LaunchSpec) {
    this.os = spec.os ?? osOf();
    this.guardBytes = spec.guardBytes ?? 0;
    this.answerLimit =
      spec.answerLimitBytes && spec.answerLimitBytes > 0 ? spec.answerLimitBytes : DEFAULT_ANSWER_LIMIT_BYTES;
    this.guard = new MemoryGuard({
      limitBytes: this.guardBytes,
      intervalMs: spec.guardIntervalMs,
      os: this.os,
      env: spec.toolEnv,
    });
    this.stopDeps = systemStop(spec.toolEnv);
    this.child = startProcess(spec, ['pipe', 'pipe', 'pipe']);
    this.child.stderr?.setEncoding('utf8');
    // a listener that throws would take the whole server down: every error here fails the command instead
    this.child.stdout?.on('data', (chunk: Buffer) => {
      try {
        this.onStdout(chunk);
      } catch (err) {
        this.stopWith(new ReplFailure('garbage', `could not read the Lean REPL's answer: ${(err as Error).message}`));
      }
    });
    this.child.stderr?.on('data', (chunk: string) => {
      // bounded: the last few KB only, and never more than one chunk (at most the pipe's buffer) past them
      this.stderrTail = (this.stderrTail.slice(-stderrKeep) + chunk.slice(-stderrKeep)).slice(-stderrKeep);
    });
    this.child.stdin?.on('error', () => {
      /* reported through 'exit' */
    });
    this.child.on('error', (err) =>
      this.fail(
        new ReplFailure(
          'spawn',
          spec.program
            ? leanNotStarted('the Lean REPL', spec.program, err.message)
            : `could not start the Lean REPL (${spec.argv.join(' ')}): ${err.message}`,
        ),
      ),
    );
    this.child.on('exit', (code, signal) => {
      this.guard.stop();
      this.exitInfo = signal ? `signal ${signal}` : `code ${code}`;
      // A shell's 127 (command not found) or 126 (not executable): the REPL never started, as with ENOENT.
      const neverStarted = !signal && (code === 127 || code === 126);
      // let stdout/stderr drain first ('close' comes once both pipes are done), so the error carries the
      // process's last words; a grandchild holding a pipe open must not hold the report back
      let reported = false;
      const report = (): void => {
        if (reported) return;
        reported = true;
        clearTimeout(drained);
        this.fail(
          new ReplFailure(
            neverStarted ? 'spawn' : 'exited',
            neverStarted && spec.program
              ? leanNotStarted('the Lean REPL', spec.program, `${this.exitInfo}: ${this.stderrTail}`)
              : `Lean REPL process exited (${this.exitInfo})${this.stderrSuffix()}`,
          ),
        );
      };
      const drained = setTimeout(report, 1000);
      this.child.once('close', report);
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

  /**
   * Reads stdout in linear time: each chunk is scanned once for line feeds, an unfinished line is kept as pieces
   * (joined once, when its line feed comes), and the bytes since the last answer are counted: past the limit
   * the command fails with a `too-large` error and the process is stopped (the pool starts another).
   */
  private onStdout(chunk: Buffer): void {
    if (this.overflowed) return;
    this.answerBytes += chunk.length;
    if (this.answerBytes > this.answerLimit) {
      this.overflowed = true;
      this.lines = [];
      this.linePieces = [];
      this.stopWith(
        new ReplFailure(
          'too-large',
          `Lean REPL answer refused: it passed ${mib(this.answerLimit)} MiB (KIMINA_REPL_ANSWER_MB), so the REPL was stopped and will be replaced`,
        ),
      );
      return;
    }
    const text = this.decoder.write(chunk);
    let from = 0;
    for (let nl = text.indexOf('\n'); nl >= 0; nl = text.indexOf('\n', from)) {
      this.addPiece(text.slice(from, nl));
      from = nl + 1;
      const blank = this.lineBlank;
      const line = this.linePieces.length === 1 ? this.linePieces[0] : this.linePieces.join('');
      this.linePieces = [];
      this.lineBlank = true;
      if (blank) {
        if (this.lines.length === 0) continue;
        const answer = this.lines.join('\n');
        this.lines = [];
        this.answerBytes = 0;
        this.answer(answer);
      } else this.lines.push(line);
    }
    if (from < text.length) this.addPiece(text.slice(from));
  }

  private addPiece(piece: string): void {
    if (piece === '') return;
    this.linePieces.push(piece);
    if (this.lineBlank && /\S/.test(piece)) this.lineBlank = false;
  }

  /** Fails the command in flight with `err` and stops the process tree. */
  private stopWith(err: ReplFailure): void {
    const w = this.waiting;
    this.waiting = undefined;
    if (w) {
      clearTimeout(w.timer);
      w.reject(err);
    }
    this.kill();
  }

  private answer(text: string): void {
    const w = this.waiting;
    if (!w) return; // output nobody asked for: ignore
    this.waiting = undefined;
    clearTimeout(w.timer);
    this.guard.stop();
    const parsed = parseAnswer(text);
    if (parsed !== undefined) {
      w.resolve(parsed);
      return;
    }
    this.kill();
    w.reject(new ReplFailure('garbage', `Lean REPL answered with unparsable output: ${text.slice(0, 200)}`));
  }

  private fail(err: ReplFailure): void {
    this.guard.stop();
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
      // a runaway command is stopped while it runs, before it takes the machine
      this.guard.start(this.child.pid, (bytes) => {
        if (this.waiting !== w) return;
        this.waiting = undefined;
        clearTimeout(w.timer);
        this.kill();
        reject(
          new ReplFailure(
            'memory',
            `Lean REPL stopped by the memory guard: its processes held ${mib(bytes)} MiB, above the limit of ${mib(this.guardBytes)} MiB (KIMINA_REPL_MEMORY_MB)`,
          ),
        );
      });
      this.child.stdin?.write(JSON.stringify(request) + '\n\n');
    });
  }

  /** Stops the whole process tree (lake, the REPL, anything they started): process group or taskkill /T. */
  kill(): void {
    this.guard.stop();
    if (this.child.pid === undefined) return;
    stopTree(this.child, this.os, this.stopDeps);
    this.fail(new ReplFailure('closed', 'Lean REPL was stopped'));
  }

  /**
   * Resident memory of the process tree in bytes: read now from /proc on Linux; elsewhere the memory guard's
   * last sample (taken while the last command ran; 0 before any).
   */
  rssBytes(): number {
    const pid = this.child.pid;
    if (pid === undefined) return 0;
    return this.os === 'linux' ? procTreeRss(pid) : this.guard.last;
  }
}

function mib(bytes: number): number {
  return Math.round(bytes / (1024 * 1024));
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
