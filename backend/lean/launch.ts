// How one REPL process is started: the base command (KIMINA_REPL_COMMAND through the platform's shell, or
// `lake env <repl>`), wrapped in the OS sandbox and, where the OS allows one, an address-space cap; and the
// memory guard's limit. The per-OS decisions live in processes.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { LeanNotAvailable } from './lake';
import type { Sandbox } from './sandbox';
import { RELEASE_TAG, releaseTag } from './toolchain';
import {
  exeName,
  memoryCap,
  osOf,
  shellArgv,
  withMemoryCap,
  type MemoryCap,
  type Os,
  type ProcessSpec,
} from './processes';

export interface LaunchSpec extends ProcessSpec {
  /** The memory guard stops a check whose process tree holds more than this many bytes (0: no guard). */
  guardBytes?: number;
  /** Sampling period of the guard (default per OS: processes.ts GUARD_INTERVAL_MS). */
  guardIntervalMs?: number;
  /** Largest answer of one command in bytes (default repl.ts DEFAULT_ANSWER_LIMIT_BYTES, 64 MiB). */
  answerLimitBytes?: number;
  /** The environment of the tools that watch and stop it (ps, PowerShell, taskkill): env without the scratch folder. */
  toolEnv: NodeJS.ProcessEnv;
  /** The program the REPL command starts, before any sandbox or memory cap wraps it (named when it cannot start). */
  program?: string;
}

export interface LaunchOptions {
  /** Shell command line that starts one REPL (KIMINA_REPL_COMMAND); overrides `replPath`. */
  command?: string;
  /** The REPL binary, run as `lake env <replPath>`. */
  replPath?: string;
  /** The Lean project (cwd of every REPL). */
  projectDir: string;
  /** The base environment the root handed down (Settings.childEnv); a KIMINA_REPL_COMMAND REPL starts from it. */
  env: NodeJS.ProcessEnv;
  /**
   * The environment `lake env` gives programs of the project (see lakeEnvironment): when set, the REPL
   * binary starts directly with it, so lake itself never runs inside the sandbox (it may want to write).
   */
  lakeEnv?: NodeJS.ProcessEnv;
  /** Address-space cap per REPL in MiB where the OS allows one, and the memory guard's limit everywhere (0: none). */
  memoryLimitMb: number;
  /** Largest answer of one REPL command in MiB (KIMINA_REPL_ANSWER_MB). */
  answerLimitMb?: number;
  sandbox: Sandbox;
  /** The OS to launch for (default: this machine's; tests build the others). */
  os?: Os;
  /** The cap decided once for the verifier (default: decided here, processes.ts memoryCap). */
  cap?: MemoryCap;
  /** Guard sampling period in ms (default per OS). */
  guardIntervalMs?: number;
  /** ELAN_HOME for the REPL, whose HOME is its scratch folder (see elanHomeToKeep). */
  elanHome?: string;
}

/** `leanprover/lean4:v4.24.0` -> `v4.24.0` (undefined without a lean-toolchain, or when it is not a Lean release). */
export function projectToolchainTag(projectDir: string): string | undefined {
  const file = join(projectDir, 'lean-toolchain');
  if (!existsSync(file)) return undefined;
  return releaseTag(readFileSync(file, 'utf8')); // only a Lean release tag: it names a folder and a git tag
}

/** Where `kimina lean setup` builds the REPL for a toolchain tag, in a KIMINA_HOME. */
export function setupReplDir(home: string, tag: string): string {
  if (!RELEASE_TAG.test(tag)) throw new Error(`not a Lean release tag: ${JSON.stringify(tag)}`);
  return join(home, 'repl', tag);
}

/** Where lake builds the REPL binary inside a repl checkout (`repl.exe` on Windows). */
export function replBinaryIn(replDir: string, os: Os = osOf()): string {
  return join(replDir, '.lake', 'build', 'bin', exeName('repl', os));
}

/** The REPL binary to use: KIMINA_REPL_PATH, the project's own `repl` package, or the one `kimina lean setup` built. */
export function findReplBinary(
  home: string,
  projectDir: string,
  explicit?: string,
  os: Os = osOf(),
): string | undefined {
  if (explicit) return resolve(explicit);
  const candidates = [replBinaryIn(join(projectDir, '.lake', 'packages', 'repl'), os)];
  const tag = projectToolchainTag(projectDir);
  if (tag) candidates.push(replBinaryIn(setupReplDir(home, tag), os));
  return candidates.find((c) => existsSync(c));
}

/** Builds the argv of one REPL process; `scratch` is its private writable folder. */
export function buildLaunch(options: LaunchOptions, scratch: string): LaunchSpec {
  const os = options.os ?? osOf();
  let base: string[];
  let verbatim = false;
  if (options.command) ({ argv: base, verbatim } = shellArgv(options.command, os));
  else if (options.replPath)
    base = options.lakeEnv ? [options.replPath] : [exeName('lake', os), 'env', options.replPath];
  else
    throw new LeanNotAvailable(
      'no REPL command: set KIMINA_REPL_COMMAND or KIMINA_REPL_PATH, or run `kimina lean setup`',
    );
  const cap = options.cap ?? memoryCap(options.memoryLimitMb, os);
  const argv = withMemoryCap(options.sandbox.wrap(base, scratch), cap, 'kimina-repl');
  const env = options.lakeEnv && !options.command ? options.lakeEnv : options.env;
  return {
    argv,
    cwd: options.projectDir,
    env: {
      ...env,
      HOME: scratch,
      TMPDIR: scratch,
      ...(os === 'win32' ? { TEMP: scratch, TMP: scratch } : {}),
      ...(options.elanHome ? { ELAN_HOME: options.elanHome } : {}),
    },
    toolEnv: env,
    program: options.command ? (options.command.trim().split(/\s+/)[0] ?? base[0]) : base[0],
    os,
    verbatim,
    guardBytes: Math.max(0, options.memoryLimitMb) * 1024 * 1024,
    ...(options.answerLimitMb !== undefined ? { answerLimitBytes: options.answerLimitMb * 1024 * 1024 } : {}),
    ...(options.guardIntervalMs ? { guardIntervalMs: options.guardIntervalMs } : {}),
  };
}

/**
 * Runs `lake env` once, outside any sandbox, from the base environment the root handed down, and returns the
 * environment it sets up for programs of the project (the base plus LEAN_PATH, LEAN_SYSROOT, PATH, …); undefined
 * when lake is missing or fails.
 */
export function lakeEnvironment(
  projectDir: string,
  base: NodeJS.ProcessEnv,
  lake = exeName('lake'),
): NodeJS.ProcessEnv | undefined {
  const r = spawnSync(lake, ['env', process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.env))'], {
    cwd: projectDir,
    encoding: 'utf8',
    timeout: 300_000,
    windowsHide: true,
    env: { ...base, NODE_OPTIONS: '' },
  });
  if (r.status !== 0) return undefined;
  try {
    return JSON.parse(r.stdout) as NodeJS.ProcessEnv;
  } catch {
    return undefined;
  }
}

/**
 * Lean and lake find their toolchain through elan's folder under the real HOME; the REPL's HOME is its scratch
 * folder, so with ELAN_HOME unset (a set one is inherited) it gets ELAN_HOME=$HOME/.elan.
 */
export function elanHomeToKeep(s: { userHome?: string; elanHome?: string }): string | undefined {
  if (!s.userHome || s.elanHome) return undefined;
  return join(s.userHome, '.elan');
}
