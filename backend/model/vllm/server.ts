// One vLLM server process the backend starts and stops itself: the trainer environment's Python runs
// `-m vllm.entrypoints.openai.api_server` (the module `vllm serve` runs too; it takes the model as --model) on
// 127.0.0.1, a free port and a random API key per start (every web page the user opens can reach localhost; the key
// keeps them out of /v1). The key goes in the environment (VLLM_API_KEY, which vLLM reads when --api-key is absent),
// not on the command line: `ps` shows every local user a command line, and vLLM logs its non-default flags. Its log lines are streamed while it loads (weights, CUDA graphs: minutes), and it is up
// once GET /health answers 200 (vLLM binds its port before the engine loads and listens only after). It runs in a
// process group of its own, so stopping it (SIGTERM, then SIGKILL after a grace) also ends its engine-core
// children, and whatever is left of a server that died is ended too. A backend that exits kills what it started;
// one killed outright (SIGKILL, a crash of Node, a signal it has no handler for) runs no exit hook, so a lifeline
// watches for that on POSIX: a small Python process in a session of its own holding a pipe from the backend, which
// the kernel closes however the backend ends; at its end of file it stops vLLM's group as stop() does.
import axios from 'axios';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:net';

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

/** Servers of this process not stopped yet: killed (group and all) if the backend exits first. */
const live = new Set<ChildProcess>();
let exitHook = false;
function killOnExit(child: ChildProcess): void {
  live.add(child);
  if (exitHook) return;
  exitHook = true;
  process.once('exit', () => {
    for (const c of live) killGroup(c, 'SIGKILL');
  });
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

/** The lifeline: reads its stdin to the end (the backend gone), then SIGTERM to the group, SIGKILL after the grace. */
const LIFELINE = `
import os, signal, sys, time
for s in (signal.SIGINT, signal.SIGHUP, signal.SIGTERM): signal.signal(s, signal.SIG_IGN)
group, grace = int(sys.argv[1]), float(sys.argv[2])
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
`;

/** Starts the lifeline of a server's process group; undefined where there is none (Windows, no pid). */
function startLifeline(o: VllmServerOptions, group: number | undefined): ChildProcess | undefined {
  if (group === undefined || process.platform === 'win32') return undefined;
  const lifeline = spawn(o.python, ['-c', LIFELINE, String(group), String((o.stopGraceMs ?? 15_000) / 1000)], {
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

/** A port free on 127.0.0.1 now (vLLM binds it a moment later). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

export class VllmServer {
  private readonly tail: string[] = [];
  private exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Resolves once the server process has ended. */
  readonly ended: Promise<void>;
  private ready = false;

  private constructor(
    private readonly child: ChildProcess,
    readonly port: number,
    readonly apiKey: string,
    private readonly o: VllmServerOptions,
  ) {
    const lifeline = startLifeline(o, child.pid);
    this.ended = new Promise((resolve) => {
      const ended = (code: number | null, signal: NodeJS.Signals | null): void => {
        if (this.exit) return;
        this.exit = { code, signal };
        live.delete(child);
        killGroup(child, 'SIGKILL'); // an engine core left behind by a server that died
        lifeline?.kill('SIGKILL'); // nothing left to watch
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
    const port = await freePort();
    const apiKey = randomBytes(24).toString('base64url');
    // prettier-ignore
    const args = [
      '-m', 'vllm.entrypoints.openai.api_server',
      '--model', o.modelDir,
      '--served-model-name', o.servedModelName,
      '--host', '127.0.0.1',
      '--port', String(port),
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
    if (child.pid !== undefined) killOnExit(child);
    const server = new VllmServer(child, port, apiKey, o);
    o.log(`vLLM starting: ${o.python} -m vllm.entrypoints.openai.api_server on 127.0.0.1:${port} (pid ${child.pid})`);
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
    o.log(`vLLM is up on 127.0.0.1:${port} (pid ${child.pid}) after ${((Date.now() - started) / 1000).toFixed(1)} s`);
    return server;
  }

  /** The OpenAI API root. */
  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}/v1`;
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
        .get(`http://127.0.0.1:${this.port}/health`, { timeout: 5000, validateStatus: () => true })
        .then((r) => r.status === 200)
        .catch(() => false);
      if (ok) return 'up';
      await Promise.race([new Promise((r) => setTimeout(r, 250)), this.ended]);
    }
    return 'exited';
  }

  /** SIGTERM to its process group, SIGKILL after the grace; resolves once the server process has ended. */
  async stop(): Promise<void> {
    if (this.exit) return;
    killGroup(this.child, 'SIGTERM');
    const grace = setTimeout(() => killGroup(this.child, 'SIGKILL'), this.o.stopGraceMs ?? 15_000);
    await this.ended;
    clearTimeout(grace);
  }
}
