// Benchmark of the verifier's own overhead: the stand-in REPL (a test double) answers at once, so
// everything measured is ours (HTTP, filter, pool, framing, audit). Not a timed test.
// Usage: npm run bench:verify   (env BENCH_CHECKS=1000 BENCH_REPLS=4; KLS_SRC=<kimina-lean-server checkout>
// adds kimina-lean-server itself beside `kimina serve`, see servers.ts; BENCH_PARTS=overhead,servers,realistic,scale
// picks parts: `realistic` and `scale` give the stand-in Lean's own import and check times, LEAN_COST below)
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createApp, listen } from '../backend/api/server';
import { buildLaunch } from '../backend/lean/launch';
import { ReplPool } from '../backend/lean/pool';
import { PoolRunner } from '../backend/lean/poolRunner';
import { detectSandbox } from '../backend/lean/sandbox';
import { defaultAllowedAxioms } from '../backend/lean/verdict';
import { Verifier } from '../backend/lean/verifier';
import { standInReplCommand } from '../backend/demo/stand-in-repl/index';
import { driveChecks } from './serverLoad';
import { serversSideBySide, type LeanCost } from './verifyServers';
import { scalingTable } from './verifyScale';

/**
 * What Lean costs, from published figures (bench:verify's realistic and scaling parts):
 * - a check: 3.28 s, kimina-lean-server's README benchmark (fb2393d, images/benchmark_results_reuse_true.png:
 *   1,000 Goedel-LM/Lean-workbook-proofs, reuse=true, M2 with 10 CPUs, 60 s timeout): its "Total CPU Time"
 *   3282.29 s, the sum of per-snippet wall times, / 1,000, 17 timeouts included. Lean Workbook, not miniF2F (no
 *   kimina-lean-server figure is on miniF2F), so this is not a miniF2F check's time;
 * - `import Mathlib`: 15 s, kimina-lean-server's own test bound for a first `import Mathlib` plus a small def
 *   (< 15 s, tests/test_api.py) and mathlib4 issue #24020 (`lake env lean --run` with Mathlib: real 15.9 s).
 */
// BENCH_LEAN_SCALE shrinks both times for a quick look at the code path (then the figures are not Lean's)
const leanScale = Number(process.env.BENCH_LEAN_SCALE ?? 1);
const LEAN_COST: LeanCost = {
  importMs: Math.round(15_000 * leanScale),
  checkMs: Math.round(3_280 * leanScale),
  sources:
    leanScale === 1
      ? 'kimina-lean-server README benchmark (fb2393d): 3.28 s per check, the mean over 1,000 Lean-workbook proofs (not miniF2F) with its 17 timeouts; its test bound and mathlib4 #24020: 15 s per import'
      : `Lean's figures scaled by ${leanScale}: NOT realistic`,
};
const parts = new Set((process.env.BENCH_PARTS ?? 'overhead,servers,realistic,scale').split(','));

const checks = Number(process.env.BENCH_CHECKS ?? 1000);
const repls = Number(process.env.BENCH_REPLS ?? 4);
const headers = 4;

interface Mode {
  name: string;
  reuse: boolean;
  maxUses: number;
  waitForBusyHeader?: boolean;
}
interface Result {
  mode: string;
  clients: number;
  checks: number;
  perSecond: number;
  p50: number;
  p99: number;
  imports: number;
  valid: number;
}

async function run(mode: Mode, clients: number, total: number): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-bench-'));
  const log = join(dir, 'repl.log');
  const launchOptions = {
    command: `STAND_IN_LOG=${log} ${standInReplCommand()}`,
    projectDir: dir,
    env: process.env,
    memoryLimitMb: 0,
    sandbox: detectSandbox('none', process.env),
  };
  const pool = new ReplPool({
    launch: (s) => buildLaunch(launchOptions, s),
    maxRepls: repls,
    maxUses: mode.maxUses,
    maxRssMb: 0,
    waitForBusyHeader: mode.waitForBusyHeader,
  });
  const verifier = new Verifier({
    runner: new PoolRunner(pool),
    policy: { allowed: defaultAllowedAxioms, allowNativeDecide: false },
    maxInFlight: 10_000,
    defaultTimeoutS: 60,
  });
  const http = await listen(await createApp({ verifier }), '127.0.0.1', 0, undefined);
  const load = await driveChecks(http.url, { clients, total, headers, reuse: mode.reuse });
  await http.close();
  await verifier.close();
  const imports = existsSync(log)
    ? readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l.includes(' import ')).length
    : 0;
  return {
    mode: mode.name,
    clients,
    checks: total,
    perSecond: load.perSecond,
    p50: load.p50,
    p99: load.p99,
    imports,
    valid: load.accepted,
  };
}

function row(r: Result): string {
  return `| ${r.mode} | ${r.clients} | ${r.checks} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.imports} | ${r.valid}/${r.checks} |`;
}

async function main(): Promise<void> {
  if (parts.has('overhead')) await overhead();
  if (parts.has('servers')) await serversSideBySide(repls, 64, checks, headers);
  // Realistic: a 16-core machine's REPLs, the same 64 clients and 4 headers; Lean's time dominates
  if (parts.has('realistic'))
    await serversSideBySide(Number(process.env.BENCH_REALISTIC_REPLS ?? 16), 64, checks, headers, LEAN_COST);
  if (parts.has('scale')) await scalingTable(4, Number(process.env.BENCH_SCALE_ROLLOUTS ?? 96), LEAN_COST);
}

async function overhead(): Promise<void> {
  const pooled: Mode = { name: 'kimina pool (header reuse)', reuse: true, maxUses: 0 };
  const fresh: Mode = { name: 'fresh REPL per check', reuse: false, maxUses: 1 };
  const klsOrder: Mode = {
    name: 'KLS acquire order (evict on busy header)',
    reuse: true,
    maxUses: 0,
    waitForBusyHeader: false,
  };
  console.log(
    `stand-in REPL answering at once; ${repls} REPLs; ${headers} distinct headers; one snippet per POST /api/check\n`,
  );
  console.log('| mode | clients | checks | checks/s | p50 ms | p99 ms | imports | valid |');
  console.log('|---|---|---|---|---|---|---|---|');
  let last: Result | undefined;
  for (const clients of [1, 4, 16, 64]) {
    const total = clients === 64 ? checks : Math.min(checks, 200 * Math.max(1, clients / 4));
    const r = await run(pooled, clients, Math.floor(total));
    console.log(row(r));
    if (clients === 64) last = r;
  }
  for (const clients of [4, 64]) console.log(row(await run(klsOrder, clients, Math.min(checks, 200))));
  for (const clients of [1, 64])
    console.log(row(await run(fresh, clients, Math.min(checks, clients === 1 ? 50 : 200))));
  if (!last) throw new Error('no 64-client run');
  console.log(`\noverhead_ms p50=${last.p50.toFixed(2)} p99=${last.p99.toFixed(2)} imports=${last.imports}`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
