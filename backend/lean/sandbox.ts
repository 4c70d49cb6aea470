// OS sandboxing for REPL processes, used when the platform offers it:
// - bubblewrap (`bwrap`): no network, the whole filesystem read-only, writes only to a scratch folder
//   (bound at the same path, also HOME and TMPDIR);
// - `unshare --net` (root, or an unprivileged user namespace): no network only; HOME and TMPDIR point
//   at the scratch folder, but writes elsewhere are not prevented;
// - none: the REPL runs with the server's rights (the untrusted-code filter is then the only guard).
import { spawnSync } from 'node:child_process';
import { osOf, type Os } from './processes';

type SandboxKind = 'bwrap' | 'unshare' | 'none';
export type SandboxPreference = 'auto' | SandboxKind;

export interface Sandbox {
  kind: SandboxKind;
  /** What the kernel enforces with this sandbox, for `kimina serve` and docs. */
  enforces: string;
  /** Wraps the REPL's argv; `scratch` is the only writable folder (bwrap). */
  wrap(argv: string[], scratch: string): string[];
}

function works(argv: string[], env: NodeJS.ProcessEnv): boolean {
  const r = spawnSync(argv[0], argv.slice(1), { stdio: 'ignore', timeout: 5000, env });
  return r.status === 0;
}

const bwrap: Sandbox = {
  kind: 'bwrap',
  enforces: 'no network; filesystem read-only except a per-REPL scratch folder',
  wrap: (argv, scratch) => [
    'bwrap',
    '--die-with-parent',
    '--unshare-net',
    '--unshare-ipc',
    '--ro-bind',
    '/',
    '/',
    '--dev',
    '/dev',
    '--proc',
    '/proc',
    '--bind',
    scratch,
    scratch,
    '--setenv',
    'HOME',
    scratch,
    '--setenv',
    'TMPDIR',
    scratch,
    '--',
    ...argv,
  ],
};

function unshare(userNamespace: boolean): Sandbox {
  return {
    kind: 'unshare',
    enforces: 'no network (writes are not confined: HOME and TMPDIR point at a scratch folder)',
    wrap: (argv) => ['unshare', ...(userNamespace ? ['--user', '--map-root-user'] : []), '--net', '--', ...argv],
  };
}

const none: Sandbox = {
  kind: 'none',
  enforces: 'no OS sandbox; only the untrusted-code filter guards',
  wrap: (argv) => argv,
};

let detected: Sandbox | undefined;

/**
 * Picks the strongest sandbox that works here (probed once, with `env`: the base environment the root handed down),
 * or the one asked for. bwrap and unshare are Linux's.
 */
export function detectSandbox(preference: SandboxPreference, env: NodeJS.ProcessEnv, os: Os = osOf()): Sandbox {
  if (preference === 'none') return none;
  if (os !== 'linux') {
    if (preference !== 'auto')
      throw new Error(`KIMINA_SANDBOX=${preference} but '${preference}' is Linux's; this is ${os} (use auto or none)`);
    return none;
  }
  if (preference === 'auto' && detected) return detected;
  const candidates: Sandbox[] = [];
  if (preference === 'auto' || preference === 'bwrap') {
    if (
      works(
        [
          'bwrap',
          '--die-with-parent',
          '--unshare-net',
          '--ro-bind',
          '/',
          '/',
          '--dev',
          '/dev',
          '--proc',
          '/proc',
          '--',
          'true',
        ],
        env,
      )
    )
      candidates.push(bwrap);
  }
  if (preference === 'auto' || preference === 'unshare') {
    if (works(['unshare', '--net', '--', 'true'], env)) candidates.push(unshare(false));
    else if (works(['unshare', '--user', '--map-root-user', '--net', '--', 'true'], env))
      candidates.push(unshare(true));
  }
  const chosen = candidates[0];
  if (!chosen) {
    if (preference !== 'auto')
      throw new Error(`KIMINA_SANDBOX=${preference} but '${preference}' does not work on this machine`);
    detected = none;
    return none;
  }
  if (preference === 'auto') detected = chosen;
  return chosen;
}
