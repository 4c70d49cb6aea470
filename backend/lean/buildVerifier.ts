// Building the verifier (REPL pool or `lake env lean`, behind fair-sharing admission) from its part of the backend
// settings; the variables themselves are declared and read in backend/settings/settings.ts.
import type { Settings } from '../settings/settings';
import { buildLaunch, elanHomeToKeep, findReplBinary, lakeEnvironment, projectToolchainTag } from './launch';
import { printAxiomsWorksInModules } from './moduleAudit';
import { GUARD_INTERVAL_MS, exeName, memoryCap, osOf, withMemoryCap, type Os } from './processes';
import { LeanFileRunner } from './leanFileRunner';
import { PoolRunner } from './poolRunner';
import { ReplPool } from './pool';
import type { SnippetRunner } from './runner';
import { detectSandbox, type Sandbox } from './sandbox';
import { defaultAllowedAxioms } from './verdict';
import { Verifier } from './verifier';
import { Admission, type AdmissionOptions } from './admission';

const leanKeys = [
  'leanProject',
  'replCommand',
  'replPath',
  'maxRepls',
  'maxQueue',
  'replMaxUses',
  'replMaxRssMb',
  'replMemoryMb',
  'replAnswerMb',
  'replIdleS',
  'sandbox',
  'allowedAxioms',
  'allowNativeDecide',
  'timeoutS',
  'initRepls',
  'maxBatch',
  'maxPerClient',
  'home',
  'userHome',
  'elanHome',
] as const;
/**
 * The verifier's part of the backend settings, under their own names (backend/settings/settings.ts; documented in
 * docs/settings.md): the project Lean runs in, the REPL pool's bounds, the sandbox, the axiom policy, fair sharing;
 * `childEnv` is the base environment of lake and the REPLs, handed down by the root.
 */
export type VerifierSettings = Pick<Settings, (typeof leanKeys)[number] | 'childEnv'>;

/** Only the verifier's settings of a larger settings object (picked, not renamed). */
export function verifierSettingsOf(s: VerifierSettings): VerifierSettings {
  return Object.fromEntries(
    [...leanKeys, 'childEnv'].map((k) => [k, s[k as keyof VerifierSettings]]),
  ) as VerifierSettings;
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

/** One line on how memory is bounded on this OS (and the one-time notice when the cap cannot be used). */
export function memoryLine(memoryLimitMb: number, os: Os, cap = memoryCap(memoryLimitMb, os)): string {
  if (!(memoryLimitMb > 0)) return 'memory: no cap and no guard (KIMINA_REPL_MEMORY_MB=0)';
  const guard = `memory guard: a check stops when its processes hold more than ${memoryLimitMb} MiB (sampled every ${GUARD_INTERVAL_MS[os] / 1000} s)`;
  if (cap.kind === 'ulimit') return `memory: address-space cap ${memoryLimitMb} MiB per process (ulimit -v); ${guard}`;
  return cap.notice ? `${cap.notice} (${guard})` : `memory: no address-space cap (${cap.why}); ${guard}`;
}

export function buildVerifier(settings: VerifierSettings, os: Os = osOf()): BuiltVerifier {
  const sandbox = detectSandbox(settings.sandbox, settings.childEnv, os);
  const cap = memoryCap(settings.replMemoryMb, os);
  const replPath = settings.replCommand
    ? undefined
    : findReplBinary(settings.home, settings.leanProject, settings.replPath, os);
  let runner: SnippetRunner;
  let describe: string;
  if (settings.replCommand || replPath) {
    const lakeEnv = settings.replCommand ? undefined : lakeEnvironment(settings.leanProject, settings.childEnv);
    const elanHome = elanHomeToKeep(settings);
    const launchOptions = {
      command: settings.replCommand,
      replPath,
      lakeEnv,
      env: settings.childEnv,
      projectDir: settings.leanProject,
      memoryLimitMb: settings.replMemoryMb,
      ...(settings.replAnswerMb !== undefined ? { answerLimitMb: settings.replAnswerMb } : {}),
      sandbox,
      os,
      cap,
      ...(elanHome ? { elanHome } : {}),
    };
    const pool = new ReplPool({
      launch: (scratch) => buildLaunch(launchOptions, scratch),
      maxRepls: settings.maxRepls,
      maxUses: settings.replMaxUses,
      maxRssMb: settings.replMaxRssMb,
      idleTimeoutMs: (settings.replIdleS ?? 0) * 1000,
    });
    runner = new PoolRunner(pool);
    describe = `REPL pool (${settings.replCommand ?? (lakeEnv ? `${replPath} with lake's environment` : `lake env ${replPath}`)}), up to ${settings.maxRepls} REPLs`;
  } else {
    // lake runs once here, outside the sandbox; Lean then starts directly with lake's environment
    const lakeEnv = lakeEnvironment(settings.leanProject, settings.childEnv, exeName('lake', os));
    runner = new LeanFileRunner({
      projectDir: settings.leanProject,
      maxParallel: settings.maxRepls,
      ...(lakeEnv ? { leanCommand: [exeName('lean', os)], env: lakeEnv } : { env: settings.childEnv }),
      wrap: (argv, scratch) => withMemoryCap(sandbox.wrap(argv, scratch), cap, 'kimina-lean'),
      os,
      guardBytes: Math.max(0, settings.replMemoryMb) * 1024 * 1024,
    });
    describe =
      'no REPL build found: `lake env lean --json` per snippet (slower; run `kimina lean setup` for the REPL pool)';
  }
  const verifier = new Verifier({
    runner,
    policy: { allowed: settings.allowedAxioms ?? defaultAllowedAxioms, allowNativeDecide: settings.allowNativeDecide },
    maxInFlight: settings.maxRepls + settings.maxQueue,
    defaultTimeoutS: settings.timeoutS,
    // a REPL command we were given runs a Lean we do not know: module files are then audited outside module mode
    printAxiomsInModules: printAxiomsWorksInModules(
      settings.replCommand ? undefined : projectToolchainTag(settings.leanProject),
    ),
  });
  const admission = new Admission(verifier, admissionOptions(settings));
  describe += `; ${memoryLine(settings.replMemoryMb, os, cap)}`;
  return { verifier, admission, mode: runner.mode, sandbox, describe };
}

/**
 * Fair sharing (KIMINA_MAX_BATCH snippets per request, default 128; KIMINA_MAX_PER_CLIENT checks admitted per client,
 * default half the queue and at least one batch): the server's queue stays the verifier's (maxRepls + maxQueue).
 */
function admissionOptions(settings: VerifierSettings): AdmissionOptions {
  const capacity = settings.maxRepls + settings.maxQueue;
  const maxBatch = Math.max(1, Math.min(capacity, settings.maxBatch ?? 128));
  const perClient = Math.max(maxBatch, Math.min(capacity, settings.maxPerClient ?? Math.ceil(capacity / 2)));
  return {
    capacity,
    perClient,
    maxBatch,
    lanes: Math.max(1, settings.maxRepls * 2),
    defaultTimeoutS: settings.timeoutS,
  };
}

/** Starts the REPLs of `settings.initRepls` (pool mode only). */
export async function prewarm(built: BuiltVerifier, settings: VerifierSettings): Promise<void> {
  const runner = built.verifier.runner;
  if (runner instanceof PoolRunner && Object.keys(settings.initRepls).length > 0)
    await runner.pool.prewarm(settings.initRepls);
}
