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
import { detectSandbox, type Sandbox, type SandboxPreference } from './sandbox';
import { defaultAllowedAxioms } from './verdict';
import { Verifier } from './verifier';
import { Admission, type AdmissionOptions } from './admission';

export interface VerifierSettings {
  /** KIMINA_HOME, where `kimina lean setup` builds the REPL. */
  home: string;
  /** ELAN_HOME for the REPLs, whose HOME is their scratch folder (launch.ts elanHomeToKeep). */
  elanHome?: string;
  projectDir: string;
  replCommand?: string;
  replPath?: string;
  maxRepls: number;
  maxQueue: number;
  maxUses: number;
  maxRssMb: number;
  memoryLimitMb: number;
  /** Largest answer of one REPL command in MiB (KIMINA_REPL_ANSWER_MB; default 64). */
  answerLimitMb?: number;
  /** Stop REPLs idle this many seconds (0: keep them). */
  idleTimeoutS?: number;
  sandbox: SandboxPreference;
  allowedAxioms: string[];
  allowNativeDecide: boolean;
  defaultTimeoutS: number;
  /** Header -> number of REPLs to start at once. */
  initRepls: Record<string, number>;
  /** Snippets one request may carry (fair sharing; default 128). */
  maxBatch?: number;
  /** Checks one client may have admitted at once (default half the queue, at least one batch). */
  maxPerClient?: number;
  /** The base environment of lake and the REPLs, handed down by the root (Settings.childEnv). */
  childEnv: NodeJS.ProcessEnv;
}

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
export type LeanSettings = Pick<Settings, (typeof leanKeys)[number] | 'childEnv'>;

/** The verifier's part of the backend settings (backend/settings/settings.ts; documented in docs/settings.md). */
export function verifierSettingsOf(s: LeanSettings): VerifierSettings {
  return {
    home: s.home,
    elanHome: elanHomeToKeep(s),
    projectDir: s.leanProject,
    replCommand: s.replCommand,
    replPath: s.replPath,
    maxRepls: s.maxRepls,
    maxQueue: s.maxQueue,
    maxUses: s.replMaxUses,
    maxRssMb: s.replMaxRssMb,
    memoryLimitMb: s.replMemoryMb,
    answerLimitMb: s.replAnswerMb,
    idleTimeoutS: s.replIdleS,
    sandbox: s.sandbox,
    allowedAxioms: s.allowedAxioms ?? defaultAllowedAxioms,
    allowNativeDecide: s.allowNativeDecide,
    defaultTimeoutS: s.timeoutS,
    initRepls: s.initRepls,
    maxBatch: s.maxBatch,
    maxPerClient: s.maxPerClient,
    childEnv: s.childEnv,
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

/** One line on how memory is bounded on this OS (and the one-time notice when the cap cannot be used). */
export function memoryLine(memoryLimitMb: number, os: Os, cap = memoryCap(memoryLimitMb, os)): string {
  if (!(memoryLimitMb > 0)) return 'memory: no cap and no guard (KIMINA_REPL_MEMORY_MB=0)';
  const guard = `memory guard: a check stops when its processes hold more than ${memoryLimitMb} MiB (sampled every ${GUARD_INTERVAL_MS[os] / 1000} s)`;
  if (cap.kind === 'ulimit') return `memory: address-space cap ${memoryLimitMb} MiB per process (ulimit -v); ${guard}`;
  return cap.notice ? `${cap.notice} (${guard})` : `memory: no address-space cap (${cap.why}); ${guard}`;
}

export function buildVerifier(settings: VerifierSettings, os: Os = osOf()): BuiltVerifier {
  const sandbox = detectSandbox(settings.sandbox, settings.childEnv, os);
  const cap = memoryCap(settings.memoryLimitMb, os);
  const replPath = settings.replCommand
    ? undefined
    : findReplBinary(settings.home, settings.projectDir, settings.replPath, os);
  let runner: SnippetRunner;
  let describe: string;
  if (settings.replCommand || replPath) {
    const lakeEnv = settings.replCommand ? undefined : lakeEnvironment(settings.projectDir, settings.childEnv);
    const launchOptions = {
      command: settings.replCommand,
      replPath,
      lakeEnv,
      env: settings.childEnv,
      projectDir: settings.projectDir,
      memoryLimitMb: settings.memoryLimitMb,
      ...(settings.answerLimitMb !== undefined ? { answerLimitMb: settings.answerLimitMb } : {}),
      sandbox,
      os,
      cap,
      ...(settings.elanHome ? { elanHome: settings.elanHome } : {}),
    };
    const pool = new ReplPool({
      launch: (scratch) => buildLaunch(launchOptions, scratch),
      maxRepls: settings.maxRepls,
      maxUses: settings.maxUses,
      maxRssMb: settings.maxRssMb,
      idleTimeoutMs: (settings.idleTimeoutS ?? 0) * 1000,
    });
    runner = new PoolRunner(pool);
    describe = `REPL pool (${settings.replCommand ?? (lakeEnv ? `${replPath} with lake's environment` : `lake env ${replPath}`)}), up to ${settings.maxRepls} REPLs`;
  } else {
    // lake runs once here, outside the sandbox; Lean then starts directly with lake's environment
    const lakeEnv = lakeEnvironment(settings.projectDir, settings.childEnv, exeName('lake', os));
    runner = new LeanFileRunner({
      projectDir: settings.projectDir,
      maxParallel: settings.maxRepls,
      ...(lakeEnv ? { leanCommand: [exeName('lean', os)], env: lakeEnv } : { env: settings.childEnv }),
      wrap: (argv, scratch) => withMemoryCap(sandbox.wrap(argv, scratch), cap, 'kimina-lean'),
      os,
      guardBytes: Math.max(0, settings.memoryLimitMb) * 1024 * 1024,
    });
    describe =
      'no REPL build found: `lake env lean --json` per snippet (slower; run `kimina lean setup` for the REPL pool)';
  }
  const verifier = new Verifier({
    runner,
    policy: { allowed: settings.allowedAxioms, allowNativeDecide: settings.allowNativeDecide },
    maxInFlight: settings.maxRepls + settings.maxQueue,
    defaultTimeoutS: settings.defaultTimeoutS,
    // a REPL command we were given runs a Lean we do not know: module files are then audited outside module mode
    printAxiomsInModules: printAxiomsWorksInModules(
      settings.replCommand ? undefined : projectToolchainTag(settings.projectDir),
    ),
  });
  const admission = new Admission(verifier, admissionOptions(settings));
  describe += `; ${memoryLine(settings.memoryLimitMb, os, cap)}`;
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
    defaultTimeoutS: settings.defaultTimeoutS,
  };
}

/** Starts the REPLs of `settings.initRepls` (pool mode only). */
export async function prewarm(built: BuiltVerifier, settings: VerifierSettings): Promise<void> {
  const runner = built.verifier.runner;
  if (runner instanceof PoolRunner && Object.keys(settings.initRepls).length > 0)
    await runner.pool.prewarm(settings.initRepls);
}
