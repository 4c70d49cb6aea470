// The one place that decides how a Lean process (a REPL, or `lean --json` in the fallback) or the Python
// trainer (backend/training/trainerProcess.ts) starts, is watched and is stopped, per operating system. Everything takes the OS as a parameter (tests build the
// plans of all three on one machine); the defaults are this machine's.
//
//            start                                address-space cap            memory guard (while a check runs)      stop
//   linux    argv spawn, own process group         `ulimit -v` via sh, when     tree RSS from /proc/<pid>/status        kill(-pgid, SIGKILL)
//                                                  the hard limit allows it
//   darwin   argv spawn, own process group         none (macOS refuses          `ps -A -o pid=,ppid=,rss=`              kill(-pgid, SIGKILL)
//                                                  RLIMIT_AS)
//   win32    argv spawn, windowsHide               none (no ulimit)             PowerShell Get-CimInstance              taskkill /PID <pid> /T /F
//                                                                               Win32_Process (WorkingSetSize)
//
// The trainer (python -m kimina_trainer.worker) starts and stops the same way (spawnOptions, stopTree); its search path
// is pathList (`;` on Windows); its graceful stop is SIGTERM on POSIX and a `stop` line on its stdin on Windows (no
// signal a process can catch reaches it there); which program a pid is comes from /proc/<pid>/cmdline on Linux,
// `ps -o command= -p` on macOS, PowerShell's Win32_Process CommandLine on Windows (processCommandLine).
//
// KIMINA_REPL_COMMAND is a command line for the platform's own shell: `sh -c` on POSIX, `cmd.exe /d /s /c`
// on Windows (quoted as Node's own `shell: true` does: lib/child_process.js normalizeSpawnArguments).
import { execFile, spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { posix, win32 } from 'node:path';

export type Os = 'linux' | 'darwin' | 'win32';

/** This machine's OS family: Windows, macOS, or (every other Unix) linux-like. */
export function osOf(platform: NodeJS.Platform = process.platform): Os {
  return platform === 'win32' ? 'win32' : platform === 'darwin' ? 'darwin' : 'linux';
}

/** A program's file name on this OS: `repl.exe`, `lake.exe` on Windows. */
export function exeName(name: string, os: Os = osOf()): string {
  return os === 'win32' && !/\.exe$/i.test(name) ? `${name}.exe` : name;
}

/** A search-path list (PYTHONPATH, PATH) in the OS's form: entries joined with `;` on Windows, `:` elsewhere. */
export function pathList(entries: readonly (string | undefined)[], os: Os = osOf()): string {
  return entries.filter(Boolean).join(os === 'win32' ? win32.delimiter : posix.delimiter);
}

/** argv that runs a command line through the platform's shell. */
export function shellArgv(commandLine: string, os: Os = osOf()): { argv: string[]; verbatim: boolean } {
  if (os === 'win32') return { argv: ['cmd.exe', '/d', '/s', '/c', `"${commandLine}"`], verbatim: true };
  return { argv: ['sh', '-c', commandLine], verbatim: false };
}

// ---- the address-space cap

export type MemoryCap = { kind: 'ulimit'; kb: number } | { kind: 'none'; why: string; notice?: string };

/** The hard RLIMIT_AS of this process in bytes (Infinity: unlimited), from /proc/self/limits; undefined if unknown. */
export function hardAddressSpaceLimit(limitsText?: string): number | undefined {
  let text = limitsText;
  if (text === undefined) {
    try {
      text = readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const row = text.split('\n').find((l) => l.startsWith('Max address space'));
  const cells = row?.slice('Max address space'.length).trim().split(/\s+/);
  if (!cells || cells.length < 2) return undefined;
  if (cells[1] === 'unlimited') return Infinity;
  const n = Number(cells[1]);
  return Number.isFinite(n) ? n : undefined;
}

/**
 * Whether and how the REPL's address space is capped: `ulimit -v` on Linux when the hard limit allows the cap;
 * none on macOS (setrlimit(RLIMIT_AS) fails there since macOS 12; kimina-lean-server sets it only when
 * `platform.system() != "Darwin"`) and on Windows (no ulimit). `notice` is said once, when the verifier starts.
 */
export function memoryCap(
  limitMb: number,
  os: Os = osOf(),
  hardLimit: () => number | undefined = hardAddressSpaceLimit,
): MemoryCap {
  if (!(limitMb > 0)) return { kind: 'none', why: 'no cap asked (KIMINA_REPL_MEMORY_MB=0)' };
  if (os === 'darwin')
    return {
      kind: 'none',
      why: 'macOS refuses an address-space limit (ulimit -v / RLIMIT_AS); the memory guard watches instead',
    };
  if (os === 'win32')
    return { kind: 'none', why: 'Windows has no address-space ulimit; the memory guard watches instead' };
  const bytes = limitMb * 1024 * 1024;
  const hard = hardLimit();
  if (hard !== undefined && hard < bytes) {
    const hardMb = Math.floor(hard / (1024 * 1024));
    return {
      kind: 'none',
      why: `this host's hard address-space limit (${hardMb} MiB) is below the cap`,
      notice:
        `note: this host's hard address-space limit (${hardMb} MiB, ulimit -Hv) is below KIMINA_REPL_MEMORY_MB ` +
        `(${limitMb} MiB): Lean starts without the cap (the host's own limit still applies) and the memory guard ` +
        `stops a check whose processes hold more than ${limitMb} MiB. Lower KIMINA_REPL_MEMORY_MB to at most ${hardMb} to use the cap.`,
    };
  }
  return { kind: 'ulimit', kb: Math.floor(limitMb * 1024) };
}

/** argv under the cap (`sh -c 'ulimit -v KB && exec "$@"' LABEL argv…`), or argv itself. */
export function withMemoryCap(argv: string[], cap: MemoryCap, label = 'kimina-lean'): string[] {
  return cap.kind === 'ulimit' ? ['sh', '-c', `ulimit -v ${cap.kb} && exec "$@"`, label, ...argv] : argv;
}

// ---- start

export interface ProcessSpec {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The OS the spec was built for (default: this machine's). */
  os?: Os;
  /** Pass argv[1…] to CreateProcess as written (cmd.exe's quoting; Windows only). */
  verbatim?: boolean;
}

/** The spawn options of a Lean process on an OS: its own process group on POSIX, no console window on Windows. */
export function spawnOptions(spec: ProcessSpec, stdio: StdioOptions) {
  const os = spec.os ?? osOf();
  return {
    cwd: spec.cwd,
    env: spec.env,
    stdio,
    // POSIX: a new process group, so a stop takes lake, the REPL and anything they started. Windows: a
    // detached child would get its own console; the tree is stopped with taskkill /T instead.
    detached: os !== 'win32',
    windowsHide: true,
    ...(os === 'win32' && spec.verbatim ? { windowsVerbatimArguments: true } : {}),
  };
}

export function startProcess(spec: ProcessSpec, stdio: StdioOptions): ChildProcess {
  return spawn(spec.argv[0], spec.argv.slice(1), spawnOptions(spec, stdio));
}

// ---- stop

export type StopPlan = { kind: 'group'; pid: number; signal: 'SIGKILL' } | { kind: 'command'; argv: string[] };

/** How a process tree is stopped: its process group on POSIX, `taskkill /T /F` on Windows. */
export function stopPlan(pid: number, os: Os = osOf()): StopPlan {
  return os === 'win32'
    ? { kind: 'command', argv: ['taskkill', '/PID', String(pid), '/T', '/F'] }
    : { kind: 'group', pid: -pid, signal: 'SIGKILL' };
}

export interface StopDeps {
  kill(pid: number, signal: NodeJS.Signals): void;
  /** Runs a stop command; `failed` is called when it cannot run or exits non-zero. */
  run(argv: string[], failed: () => void): void;
}

/** The real stop: signals, and the stop command (taskkill) run with `env` (the base the process was started from). */
export function systemStop(env: NodeJS.ProcessEnv): StopDeps {
  return {
    kill: (pid, signal) => process.kill(pid, signal),
    run: (argv, failed) => {
      const c = spawn(argv[0], argv.slice(1), { stdio: 'ignore', windowsHide: true, env });
      c.on('error', failed);
      c.on('exit', (code) => {
        if (code !== 0) failed();
      });
    },
  };
}

/** Stops a child's whole process tree; the child itself is killed directly too when the tree stop cannot run. */
export function stopTree(child: Pick<ChildProcess, 'pid' | 'kill'>, os: Os, deps: StopDeps): void {
  const pid = child.pid;
  if (pid === undefined) return;
  const plan = stopPlan(pid, os);
  const direct = (): void => {
    try {
      child.kill('SIGKILL'); // TerminateProcess on Windows
    } catch {
      /* already gone */
    }
  };
  if (plan.kind === 'command') {
    // taskkill walks the tree from the parent: the parent must still be alive, so it is not killed first
    deps.run(plan.argv, direct);
    return;
  }
  try {
    deps.kill(plan.pid, plan.signal);
  } catch {
    direct(); // no such group (the child never got one): the child alone
  }
}

/** Stops the tree of a process known only by its pid (one started by an earlier backend): as stopTree. */
export function stopTreeOfPid(pid: number, os: Os, deps: StopDeps): void {
  stopTree({ pid, kill: () => (deps.kill(pid, 'SIGKILL'), true) }, os, deps);
}

// ---- which program a pid is

/** The probe of a process's command line per OS: /proc on Linux (no command), `ps` on macOS, PowerShell on Windows. */
export function commandLineProbe(pid: number, os: Os): string[] | undefined {
  if (os === 'linux') return undefined;
  // -ww: BSD ps cuts the command column to the terminal's width (79 characters without one); a trainer's command line is longer
  if (os === 'darwin') return ['ps', '-ww', '-o', 'command=', '-p', String(pid)];
  return [
    'powershell.exe',
    '-NoProfile',
    '-NonInteractive',
    '-Command',
    `(Get-CimInstance Win32_Process -Filter "ProcessId=${Math.trunc(pid)}").CommandLine`,
  ];
}

/**
 * The command line of a live process (arguments joined by spaces), or undefined when it is gone or cannot be read.
 * `exec` runs the probe (processTable(env), or a test's double); Linux reads /proc/<pid>/cmdline (`readProc`).
 */
export async function processCommandLine(
  pid: number,
  os: Os,
  exec: (argv: string[]) => Promise<string>,
  readProc: (path: string) => string = (path) => readFileSync(path, 'utf8'),
): Promise<string | undefined> {
  try {
    const probe = commandLineProbe(pid, os);
    const text = probe ? await exec(probe) : readProc(`/proc/${pid}/cmdline`).replace(/\0/g, ' ');
    return text.trim() || undefined;
  } catch {
    return undefined; // ps exits 1 for a pid that is gone; /proc/<pid> is missing
  }
}

// ---- the memory guard

/** Bytes held by a process and its descendants, measured the OS's way; undefined when it cannot be measured. */
export type RssSampler = (pid: number) => Promise<number | undefined>;

/** How often the guard samples, per OS (a `ps` or PowerShell run costs more than reading /proc). */
export const GUARD_INTERVAL_MS: Record<Os, number> = { linux: 500, darwin: 1000, win32: 3000 };

/** Resident bytes of a Linux process tree from /proc (VmRSS of the process and its children, 8 levels). */
export function procTreeRss(pid: number, depth = 0): number {
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
    for (const c of children ? children.split(/\s+/) : []) total += procTreeRss(Number(c), depth + 1);
  } catch {
    /* no children file on this kernel */
  }
  return total;
}

/** Parses `pid ppid amount` rows (ps, or the PowerShell line below); amount × unit bytes. */
export function parseProcessTable(text: string, unit: number): Map<number, { ppid: number; bytes: number }> {
  const table = new Map<number, { ppid: number; bytes: number }>();
  for (const line of text.split(/\r?\n/)) {
    const m = /^\s*(\d+)\s+(\d+)\s+(\d+)\s*$/.exec(line);
    if (m) table.set(Number(m[1]), { ppid: Number(m[2]), bytes: Number(m[3]) * unit });
  }
  return table;
}

/** The bytes of `root` and all its descendants in a process table; undefined when root is not in it. */
export function treeBytes(table: Map<number, { ppid: number; bytes: number }>, root: number): number | undefined {
  if (!table.has(root)) return undefined;
  const children = new Map<number, number[]>();
  for (const [pid, { ppid }] of table) if (pid !== ppid) children.set(ppid, [...(children.get(ppid) ?? []), pid]);
  let total = 0;
  const seen = new Set<number>();
  const stack = [root];
  while (stack.length) {
    const pid = stack.pop()!;
    if (seen.has(pid)) continue;
    seen.add(pid);
    total += table.get(pid)?.bytes ?? 0;
    stack.push(...(children.get(pid) ?? []));
  }
  return total;
}

/** The probe command per OS: `ps` on macOS (rss in KiB), PowerShell's CIM process list on Windows (bytes). */
const PROCESS_TABLE_COMMAND: Record<'darwin' | 'win32', { argv: string[]; unit: number }> = {
  darwin: { argv: ['ps', '-A', '-o', 'pid=,ppid=,rss='], unit: 1024 },
  // wmic is gone from current Windows 11 and tasklist has no parent ids: Win32_Process has both
  win32: {
    argv: [
      'powershell.exe',
      '-NoProfile',
      '-NonInteractive',
      '-Command',
      'Get-CimInstance Win32_Process | ForEach-Object { "$($_.ProcessId) $($_.ParentProcessId) $($_.WorkingSetSize)" }',
    ],
    unit: 1,
  },
};

/** The sampler of an OS. `exec` runs the probe command and returns its stdout (processTable, or a test's double). */
export function rssSampler(os: Os, exec: (argv: string[]) => Promise<string>): RssSampler {
  if (os === 'linux') return async (pid) => procTreeRss(pid) || undefined;
  const probe = PROCESS_TABLE_COMMAND[os];
  return async (pid) => {
    try {
      return treeBytes(parseProcessTable(await exec(probe.argv), probe.unit), pid);
    } catch {
      return undefined;
    }
  };
}

/** Runs a process-table probe (ps, PowerShell) with `env` (the base the guarded process was started from). */
export function processTable(env: NodeJS.ProcessEnv): (argv: string[]) => Promise<string> {
  return (argv) =>
    new Promise((resolve, reject) =>
      execFile(
        argv[0],
        argv.slice(1),
        { windowsHide: true, maxBuffer: 16 << 20, timeout: 20_000, env },
        (err, stdout) => (err ? reject(err) : resolve(stdout)),
      ),
    );
}

export interface GuardOptions {
  /** Stop the check when the tree holds more than this many bytes (0: no guard). */
  limitBytes: number;
  intervalMs?: number;
  sampler?: RssSampler;
  os?: Os;
  /** The environment ps or PowerShell runs with (the base the guarded process was started from). */
  env: NodeJS.ProcessEnv;
}

/** Samples a process tree while a check runs; calls `onExceed` once when it holds more than the limit. */
export class MemoryGuard {
  private timer: NodeJS.Timeout | undefined;
  private sampling = false;
  /** The last sample in bytes (0 before the first). */
  last = 0;
  private readonly sampler: RssSampler;
  private readonly intervalMs: number;

  constructor(private readonly options: GuardOptions) {
    const os = options.os ?? osOf();
    this.sampler = options.sampler ?? rssSampler(os, processTable(options.env));
    this.intervalMs = options.intervalMs ?? GUARD_INTERVAL_MS[os];
  }

  get enabled(): boolean {
    return this.options.limitBytes > 0;
  }

  /** Starts sampling `pid`; `onExceed(bytes)` is called at most once per start. */
  start(pid: number | undefined, onExceed: (bytes: number) => void): void {
    this.stop();
    if (!this.enabled || pid === undefined) return;
    let fired = false;
    const tick = async (): Promise<void> => {
      if (this.sampling || fired) return;
      this.sampling = true;
      try {
        const bytes = await this.sampler(pid);
        if (bytes !== undefined) this.last = bytes;
        if (this.timer && bytes !== undefined && bytes > this.options.limitBytes) {
          fired = true;
          this.stop();
          onExceed(bytes);
        }
      } finally {
        this.sampling = false;
      }
    };
    this.timer = setInterval(() => void tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
