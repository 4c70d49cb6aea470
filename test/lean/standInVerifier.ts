// Builds the real pool/verifier over the stand-in REPL (a TEST DOUBLE for the Lean REPL).
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildLaunch } from '../../backend/lean/launch';
import { ReplPool, type PoolOptions } from '../../backend/lean/pool';
import { PoolRunner } from '../../backend/lean/poolRunner';
import { detectSandbox } from '../../backend/lean/sandbox';
import { defaultAllowedAxioms } from '../../backend/lean/verdict';
import { Verifier } from '../../backend/lean/verifier';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';
import type { MemoryCap, Os } from '../../backend/lean/processes';

export interface StandInSetup {
  pool: ReplPool;
  verifier: Verifier;
  logFile: string;
  /** Lines the stand-in logged: `<pid> import …`, `<pid> fresh`, `<pid> command`. */
  log(): string[];
}

/** `lean`: the Lean generation the stand-in speaks (STAND_IN_LEAN, e.g. '4.15'); default: current Lean's texts. */
export function standInPool(
  options: Partial<PoolOptions> & {
    importDelayMs?: number;
    memoryLimitMb?: number;
    sandbox?: boolean;
    lean?: string;
    /** Log each command's size (`<pid> command lines=N`, STAND_IN_LOG_LINES). */
    logLines?: boolean;
    /** The OS the launch is built for (processes.ts), the address-space cap, the memory guard's period. */
    os?: Os;
    cap?: MemoryCap;
    guardIntervalMs?: number;
  } = {},
): { pool: ReplPool; logFile: string } {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-test-'));
  const logFile = join(dir, 'stand-in.log');
  const launchOptions = {
    command: `${options.sandbox ? '' : `STAND_IN_LOG=${logFile} `}${options.logLines ? 'STAND_IN_LOG_LINES=1 ' : ''}${options.lean ? `STAND_IN_LEAN=${options.lean} ` : ''}STAND_IN_IMPORT_MS=${options.importDelayMs ?? 0} ${standInReplCommand()}`,
    projectDir: dir,
    env: process.env,
    memoryLimitMb: options.memoryLimitMb ?? 0,
    sandbox: options.sandbox ? detectSandbox('auto', process.env) : detectSandbox('none', process.env),
    os: options.os,
    cap: options.cap,
    guardIntervalMs: options.guardIntervalMs,
  };
  const pool = new ReplPool({
    launch: (scratch) => buildLaunch(launchOptions, scratch),
    maxRepls: options.maxRepls ?? 2,
    maxUses: options.maxUses ?? 0,
    maxRssMb: options.maxRssMb ?? 0,
    idleTimeoutMs: options.idleTimeoutMs,
  });
  return { pool, logFile };
}

export function standInVerifier(
  options: Parameters<typeof standInPool>[0] & {
    allowNativeDecide?: boolean;
    printAxiomsInModules?: boolean;
    maxInFlight?: number;
    timeoutS?: number;
  } = {},
): StandInSetup {
  const { pool, logFile } = standInPool(options);
  const verifier = new Verifier({
    runner: new PoolRunner(pool),
    policy: { allowed: defaultAllowedAxioms, allowNativeDecide: options.allowNativeDecide ?? false },
    maxInFlight: options.maxInFlight ?? 64,
    defaultTimeoutS: options.timeoutS ?? 10,
    ...(options.printAxiomsInModules ? { printAxiomsInModules: true } : {}),
  });
  return {
    pool,
    verifier,
    logFile,
    log: () => (existsSync(logFile) ? readFileSync(logFile, 'utf8').trim().split('\n').filter(Boolean) : []),
  };
}
