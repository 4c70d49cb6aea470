// The verifier's settings from the environment, and building a verifier from them.
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import { env } from '../config';
import { buildLaunch, findReplBinary, lakeEnvironment } from './launch';
import { LeanFileRunner } from './leanFileRunner';
import { PoolRunner } from './poolRunner';
import { ReplPool } from './pool';
import type { SnippetRunner } from './runner';
import { detectSandbox, type Sandbox, type SandboxPreference } from './sandbox';
import { defaultAllowedAxioms } from './verdict';
import { Verifier } from './verifier';
import { Admission, type AdmissionOptions } from './admission';

export interface VerifierSettings {
  projectDir: string;
  replCommand?: string;
  replPath?: string;
  maxRepls: number;
  maxQueue: number;
  maxUses: number;
  maxRssMb: number;
  memoryLimitMb: number;
  /** Stop REPLs idle this many seconds (0: keep them). */
  idleTimeoutS?: number;
  sandbox: SandboxPreference;
  allowedAxioms: string[];
  allowNativeDecide: boolean;
  defaultTimeoutS: number;
  /** Header -> number of REPLs to start at once. */
  initRepls: Record<string, number>;
}

/** Reads KIMINA_* variables (documented in docs/verifier.md). */
export function verifierSettingsFromEnv(): VerifierSettings {
  const sandbox = env.str('KIMINA_SANDBOX', 'auto');
  if (!['auto', 'bwrap', 'unshare', 'none'].includes(sandbox)) throw new Error(`KIMINA_SANDBOX must be auto, bwrap, unshare or none, got '${sandbox}'`);
  let initRepls: Record<string, number> = {};
  const rawInit = env.str('KIMINA_INIT_REPLS', '');
  if (rawInit) {
    try { initRepls = JSON.parse(rawInit) as Record<string, number>; } catch { throw new Error('KIMINA_INIT_REPLS must be JSON like {"import Mathlib": 2}'); }
  }
  return {
    projectDir: resolve(env.str('KIMINA_LEAN_PROJECT', process.cwd())),
    replCommand: process.env.KIMINA_REPL_COMMAND || undefined,
    replPath: process.env.KIMINA_REPL_PATH || undefined,
    maxRepls: env.num('KIMINA_MAX_REPLS', Math.max(1, availableParallelism() - 1)),
    maxQueue: env.num('KIMINA_MAX_QUEUE', 256),
    maxUses: env.num('KIMINA_REPL_MAX_USES', 200),
    maxRssMb: env.num('KIMINA_REPL_MAX_RSS_MB', 12_000),
    memoryLimitMb: env.num('KIMINA_REPL_MEMORY_MB', 16_384),
    idleTimeoutS: env.num('KIMINA_REPL_IDLE_S', 1800),
    sandbox: sandbox as SandboxPreference,
    allowedAxioms: env.str('KIMINA_ALLOWED_AXIOMS', defaultAllowedAxioms.join(',')).split(',').map((s) => s.trim()).filter(Boolean),
    allowNativeDecide: ['1', 'true', 'yes'].includes(env.str('KIMINA_ALLOW_NATIVE_DECIDE', '').toLowerCase()),
    defaultTimeoutS: env.num('KIMINA_TIMEOUT', 60),
    initRepls,
  };
}

export interface BuiltVerifier {
  verifier: Verifier;
  /** The verifier behind fair admission (per-client shares, round-robin): what a server shares among its clients. */
  admission: Admission;
  mode: 'repl' | 'lean-file';
  sandbox: Sandbox;
  /** One line for people: what runs Lean. */
  describe: string;
}

export function buildVerifier(settings: VerifierSettings): BuiltVerifier {
  const sandbox = detectSandbox(settings.sandbox);
  const replPath = settings.replCommand ? undefined : findReplBinary(settings.projectDir, settings.replPath);
  let runner: SnippetRunner;
  let describe: string;
  if (settings.replCommand || replPath) {
    const lakeEnv = settings.replCommand ? undefined : lakeEnvironment(settings.projectDir);
    const launchOptions = { command: settings.replCommand, replPath, lakeEnv, projectDir: settings.projectDir, memoryLimitMb: settings.memoryLimitMb, sandbox };
    const pool = new ReplPool({ launch: (scratch) => buildLaunch(launchOptions, scratch), maxRepls: settings.maxRepls, maxUses: settings.maxUses, maxRssMb: settings.maxRssMb, idleTimeoutMs: (settings.idleTimeoutS ?? 0) * 1000 });
    runner = new PoolRunner(pool);
    describe = `REPL pool (${settings.replCommand ?? (lakeEnv ? `${replPath} with lake's environment` : `lake env ${replPath}`)}), up to ${settings.maxRepls} REPLs`;
  } else {
    const kb = Math.floor(settings.memoryLimitMb * 1024);
    // lake runs once here, outside the sandbox; Lean then starts directly with lake's environment
    const lakeEnv = lakeEnvironment(settings.projectDir);
    runner = new LeanFileRunner({
      projectDir: settings.projectDir, maxParallel: settings.maxRepls,
      ...(lakeEnv ? { leanCommand: ['lean'], env: lakeEnv } : {}),
      wrap: (argv, scratch) => {
        const boxed = sandbox.wrap(argv, scratch);
        return settings.memoryLimitMb > 0 ? ['sh', '-c', `ulimit -v ${kb} && exec "$@"`, 'kimina-lean', ...boxed] : boxed;
      },
    });
    describe = 'no REPL build found: `lake env lean --json` per snippet (slower; run `kimina lean setup` for the REPL pool)';
  }
  const verifier = new Verifier({
    runner, policy: { allowed: settings.allowedAxioms, allowNativeDecide: settings.allowNativeDecide },
    maxInFlight: settings.maxRepls + settings.maxQueue, defaultTimeoutS: settings.defaultTimeoutS,
  });
  const admission = new Admission(verifier, admissionOptions(settings));
  return { verifier, admission, mode: runner.mode, sandbox, describe };
}

/**
 * Fair sharing (KIMINA_MAX_BATCH snippets per request, default 128; KIMINA_MAX_PER_CLIENT checks admitted per client,
 * default half the queue and at least one batch): the server's queue stays the verifier's (maxRepls + maxQueue).
 */
export function admissionOptions(settings: VerifierSettings): AdmissionOptions {
  const capacity = settings.maxRepls + settings.maxQueue;
  const maxBatch = Math.max(1, Math.min(capacity, env.num('KIMINA_MAX_BATCH', 128)));
  const perClient = Math.max(maxBatch, Math.min(capacity, env.num('KIMINA_MAX_PER_CLIENT', Math.ceil(capacity / 2))));
  return { capacity, perClient, maxBatch, lanes: Math.max(1, settings.maxRepls * 2), defaultTimeoutS: settings.defaultTimeoutS };
}

/** Starts the REPLs of `settings.initRepls` (pool mode only). */
export async function prewarm(built: BuiltVerifier, settings: VerifierSettings): Promise<void> {
  const runner = built.verifier.runner;
  if (runner instanceof PoolRunner && Object.keys(settings.initRepls).length > 0) await runner.pool.prewarm(settings.initRepls);
}
