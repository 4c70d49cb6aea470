// How one REPL process is started: the base command (KIMINA_REPL_COMMAND, or `lake env <repl>`),
// wrapped in the OS sandbox and an address-space cap.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Sandbox } from './sandbox';
import { RELEASE_TAG, releaseTag } from './toolchain';

export interface LaunchSpec {
  argv: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
}

export interface LaunchOptions {
  /** Shell command line that starts one REPL (KIMINA_REPL_COMMAND); overrides `replPath`. */
  command?: string;
  /** The REPL binary, run as `lake env <replPath>`. */
  replPath?: string;
  /** The Lean project (cwd of every REPL). */
  projectDir: string;
  /**
   * The environment `lake env` gives programs of the project (see lakeEnvironment): when set, the REPL
   * binary starts directly with it, so lake itself never runs inside the sandbox (it may want to write).
   */
  lakeEnv?: NodeJS.ProcessEnv;
  /** Address-space cap per REPL in MiB (0: none). */
  memoryLimitMb: number;
  sandbox: Sandbox;
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

/** The REPL binary to use: KIMINA_REPL_PATH, the project's own `repl` package, or the one `kimina lean setup` built. */
export function findReplBinary(home: string, projectDir: string, explicit?: string): string | undefined {
  if (explicit) return resolve(explicit);
  const candidates = [join(projectDir, '.lake', 'packages', 'repl', '.lake', 'build', 'bin', 'repl')];
  const tag = projectToolchainTag(projectDir);
  if (tag) candidates.push(join(setupReplDir(home, tag), '.lake', 'build', 'bin', 'repl'));
  return candidates.find((c) => existsSync(c));
}

/** Builds the argv of one REPL process; `scratch` is its private writable folder. */
export function buildLaunch(options: LaunchOptions, scratch: string): LaunchSpec {
  let base: string[];
  if (options.command) base = ['sh', '-c', options.command];
  else if (options.replPath) base = options.lakeEnv ? [options.replPath] : ['lake', 'env', options.replPath];
  else throw new Error('no REPL command: set KIMINA_REPL_COMMAND or KIMINA_REPL_PATH, or run `kimina lean setup`');
  let argv = options.sandbox.wrap(base, scratch);
  if (options.memoryLimitMb > 0) {
    const kb = Math.floor(options.memoryLimitMb * 1024);
    argv = ['sh', '-c', `ulimit -v ${kb} && exec "$@"`, 'kimina-repl', ...argv];
  }
  const env = options.lakeEnv && !options.command ? options.lakeEnv : process.env;
  return {
    argv,
    cwd: options.projectDir,
    env: {
      ...env,
      HOME: scratch,
      TMPDIR: scratch,
      ...(options.elanHome ? { ELAN_HOME: options.elanHome } : {}),
    },
  };
}

/**
 * Runs `lake env` once, outside any sandbox, and returns the environment it sets up for programs of
 * the project (LEAN_PATH, LEAN_SYSROOT, PATH, …); undefined when lake is missing or fails.
 */
export function lakeEnvironment(projectDir: string, lake = 'lake'): NodeJS.ProcessEnv | undefined {
  const r = spawnSync(lake, ['env', process.execPath, '-e', 'process.stdout.write(JSON.stringify(process.env))'], {
    cwd: projectDir,
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, NODE_OPTIONS: '' },
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
