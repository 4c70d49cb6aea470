// One vLLM server process the backend starts and stops itself: the trainer environment's Python runs
// `-m vllm.entrypoints.openai.api_server` (the module `vllm serve` runs too; it takes the model as --model) on a
// Unix socket (--uds) in a private folder (mode 0700, removed when the server ends), never a TCP port: every web
// page the user opens can reach 127.0.0.1 ports, vLLM checks its API key only under /v1 (/invocations, /tokenize…
// answer without it) and its CORS default allows every origin; a socket only this user can reach keeps pages out
// of every route. A random API key per start stays as a second lock on /v1. The key goes in the environment
// (VLLM_API_KEY, which vLLM reads when --api-key is absent), not on the command line: `ps` shows every local user a
// command line, and vLLM logs its non-default flags. Its log lines are streamed while it loads (weights, CUDA
// graphs: minutes), and it is up once GET /health answers 200 over the socket (vLLM binds it before the engine
// loads and listens only after). It runs in a process group of its own, so stopping it (SIGTERM, then SIGKILL
// after a grace) also ends its engine-core children, and whatever is left of a server that died is ended too. A
// backend that exits kills what it started; one killed outright (SIGKILL, a crash of Node, a signal it has no
// handler for) runs no exit hook, so a lifeline watches for that on POSIX: a small Python process in a session of
// its own holding a pipe from the backend, which the kernel closes however the backend ends; at its end of file it
// stops vLLM's group as stop() does and removes the socket's folder.
import axios from 'axios';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface VllmServerOptions {
  /** The Python with vllm installed (the trainer environment's). */
  python: string;
  /** The checkpoint folder vLLM loads (config.json, safetensors, tokenizer). */
  modelDir: string;
  /** The name requests use (--served-model-name). */
  servedModelName: string;
  maxModelLen: number;
  gpuMemoryUtilization: number;
  seed: number;
  /** The environment the server starts from (Settings.childEnv). */
  env: NodeJS.ProcessEnv;
  log: (line: string) => void;
  /** How long loading may take before the start is given up (default 20 min: large checkpoints, CUDA graphs). */
  startTimeoutMs?: number;
  /** How long a stopping server has after SIGTERM before SIGKILL (default 15 s). */
  stopGraceMs?: number;
  /** Aborting it gives up a start still loading: the server is stopped and the start rejects. */
  signal?: AbortSignal;
}

/** vLLM's last log lines kept for an error message. */
const TAIL_LINES = 30;

/** Servers of this process not stopped yet, with their socket folders: killed (group and all), folder removed, if the backend exits first. */
const live = new Map<ChildProcess, string>();
let exitHook = false;
function killOnExit(child: ChildProcess, socketDir: string): void {
  live.set(child, socketDir);
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const [c, dir] of live) {
      killGroup(c, 'SIGKILL');
      removeFolder(dir);
    }
  });
}

function removeFolder(dir: string): void {
  try {
    rmSync(dir, { recursive: true, force: true });
  } catch {
    /* already gone, or not ours to remove */
  }
}

/** The longest socket path that binds everywhere vLLM runs (sun_path: 108 bytes on Linux, 104 on macOS, with its NUL). */
const MAX_SOCKET_PATH = 100;

/** A new folder only this user can enter (mkdtemp makes it 0700; chmod says so outright), for the server's socket. */
function privateSocketFolder(): { dir: string; socket: string } {
  const under = join(tmpdir(), 'kimina-vllm-XXXXXX', 'vllm.sock').length <= MAX_SOCKET_PATH ? tmpdir() : '/tmp';
  const dir = mkdtempSync(join(under, 'kimina-vllm-'));
  chmodSync(dir, 0o700);
  return { dir, socket: join(dir, 'vllm.sock') };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal); // the group: the server and its engine-core processes
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* gone */
    }
  }
}

/**
 * The lifeline: reads its stdin to the end (the backend gone), then SIGTERM to the group, SIGKILL after the grace,
 * then removes the socket's folder.
 */
const LIFELINE = `
import os, shutil, signal, sys, time
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM): signal.signal(s, signal.SIG_IGN)
group, grace, folder = int(sys.argv[1]), float(sys.argv[2]), sys.argv[3]
while sys.stdin.buffer.read(65536): pass
def signal_group(sig):
    try:
        os.killpg(group, sig)
        return True
    except OSError:
        return False
end = time.time() + grace
if signal_group(signal.SIGTERM):
    while time.time() < end and signal_group(0): time.sleep(0.2)
    signal_group(signal.SIGKILL)
shutil.rmtree(folder, ignore_errors=True)
`;

/** Starts the lifeline of a server's process group; undefined where there is none (Windows, no pid). */
function startLifeline(o: VllmServerOptions, group: number | undefined, socketDir: string): ChildProcess | undefined {
  if (group === undefined || process.platform === 'win32') return undefined;
  const grace = String((o.stopGraceMs ?? 15_000) / 1000);
  const lifeline = spawn(o.python, ['-c', LIFELINE, String(group), grace, socketDir], {
    env: o.env,
    stdio: ['pipe', 'ignore', 'ignore'],
    detached: true, // a session of its own: a Ctrl-C or a closed terminal that ends the backend does not end it
  });
  lifeline.on('error', () => undefined); // without it vLLM still stops with a backend that exits or stops it
  lifeline.stdin?.on('error', () => undefined);
  lifeline.unref(); // it never keeps the backend running
  (lifeline.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  return lifeline;
}

export class VllmServer {
  private readonly tail: string[] = [];
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Resolves once the server process has ended. */
  readonly ended: Promise<void>;
  private ready = false;

  private constructor(
    private readonly child: ChildProcess,
    /** The Unix socket vLLM listens on, in a folder of its own (socketDir) that only this user can enter. */
    readonly socketPath: string,
    readonly socketDir: string,
    readonly apiKey: string,
    private readonly o: VllmServerOptions,
  ) {
    const lifeline = startLifeline(o, child.pid, socketDir);
    this.ended = new Promise((resolve) => {
      const ended = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (this.exit) return;
        this.exit = { code, signal };
        live.delete(child);
        killGroup(child, 'SIGKILL'); // an engine core left behind by a server that died
        lifeline?.kill('SIGKILL'); // nothing left to watch
        removeFolder(socketDir);
        resolve();
      };
      child.once('exit', ended);
      child.once('error', () => ended(null, null)); // it did not start at all
    });
    const onLine = (line: string): void => {
      this.tail.push(line);
      if (this.tail.length > TAIL_LINES) this.tail.shift();
      // While loading every line is progress; once up, only its warnings and errors (requests log every few seconds).
      if (!this.ready || /\b(WARNING|ERROR|CRITICAL)\b|Traceback/.test(line)) o.log(`vllm: ${line}`);
    };
    for (const stream of [child.stdout, child.stderr]) {
      let pending = '';
      stream?.setEncoding('utf8');
      stream?.on('data', (chunk: string) => {
        const lines = (pending + chunk).split(/\r?\n/);
        pending = lines.pop() ?? '';
        for (const line of lines) if (line.trim()) onLine(line);
      });
    }
  }

  /** Starts the server and waits until GET /health answers 200; rejects with vLLM's last lines if it exits or stalls. */
  static async start(o: VllmServerOptions): Promise<VllmServer> {
    const { dir: socketDir, socket: socketPath } = privateSocketFolder();
    const apiKey = randomBytes(24).toString('base64url');
    // prettier-ignore
    const args = [
      '-m', 'vllm.entrypoints.openai.api_server',
      '--model', o.modelDir,
      '--served-model-name', o.servedModelName,
      '--uds', socketPath, // vLLM ignores --host and --port then: no TCP port at all
      '--max-model-len', String(o.maxModelLen),
      '--gpu-memory-utilization', String(o.gpuMemoryUtilization),
      '--seed', String(o.seed),
    ];
    const child = spawn(o.python, args, {
      env: { ...o.env, VLLM_API_KEY: apiKey }, // readable by this user only (/proc/<pid>/environ is 0400)
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true, // a process group of its own, ended as one
      windowsHide: true,
    });
    const failedToSpawn = new Promise<Error>((resolve) => child.once('error', resolve));
    if (child.pid !== undefined) killOnExit(child, socketDir);
    const server = new VllmServer(child, socketPath, socketDir, apiKey, o);
    o.log(
      `vLLM starting: ${o.python} -m vllm.entrypoints.openai.api_server on unix socket ${socketPath} (pid ${child.pid})`,
    );
    const started = Date.now();
    const timeout = o.startTimeoutMs ?? 20 * 60_000;
    const aborted = new Promise<'aborted'>((resolve) => {
      if (o.signal?.aborted) resolve('aborted');
      o.signal?.addEventListener('abort', () => resolve('aborted'), { once: true });
    });
    const outcome = await Promise.race([server.waitHealthy(started + timeout), failedToSpawn, aborted]);
    if (outcome !== 'up') {
      await server.stop();
      if (outcome instanceof Error) throw new Error(`vLLM did not start: ${o.python}: ${outcome.message}`);
      throw new Error(
        outcome === 'timeout'
          ? `vLLM did not answer GET /health within ${Math.round(timeout / 1000)} s of starting, and was stopped; ${server.exitWords()}`
          : outcome === 'aborted'
            ? `vLLM's start was given up (the engine closed) and the server stopped`
            : `vLLM stopped while starting: ${server.exitWords()}`,
      );
    }
    server.ready = true;
    o.log(
      `vLLM is up on unix socket ${socketPath} (pid ${child.pid}) after ${((Date.now() - started) / 1000).toFixed(1)} s`,
    );
    return server;
  }

  /** The OpenAI API root; requests go to socketPath (axios' socketPath), so its host is only a name. */
  get baseUrl(): string {
    return 'http://localhost/v1';
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** Whether the process has ended. */
  get running(): boolean {
    return this.exit === undefined;
  }

  /** How it ended and its last lines, in words (for errors). */
  exitWords(): string {
    const how = !this.exit
      ? 'is still running'
      : this.exit.signal
        ? `was ended by ${this.exit.signal}`
        : `exited with code ${this.exit.code}`;
    const lines = this.tail.slice(-12);
    return `vLLM (pid ${this.child.pid}) ${how}${lines.length ? `; its last lines:\n${lines.join('\n')}` : ''}`;
  }

  /** Polls GET /health until 200 ('up'), the process exits ('exited') or the deadline passes ('timeout'). */
  private async waitHealthy(deadline: number): Promise<'up' | 'exited' | 'timeout'> {
    let exited = false;
    void this.ended.then(() => (exited = true));
    while (!exited) {
      if (Date.now() > deadline) return 'timeout';
      const ok = await axios
        .get('http://localhost/health', { socketPath: this.socketPath, timeout: 5000, validateStatus: () => true })
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ok) return 'up';
      await Promise.race([new Promise((r) => setTimeout(r, 250)), this.ended]);
    }
    return 'exited';
  }

  /** SIGTERM to its process group, SIGKILL after the grace; resolves once the server process has ended and its socket folder is gone. */
  async stop(): Promise<void> {
    if (this.exit) return;
    killGroup(this.child, 'SIGTERM');
    const grace = setTimeout(() => killGroup(this.child, 'SIGKILL'), this.o.stopGraceMs ?? 15_000);
    await this.ended;
    clearTimeout(grace);
  }
}
