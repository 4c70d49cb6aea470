// Benchmark of the verifier's own overhead: the stand-in REPL (a test double) answers at once, so
// everything measured is ours (HTTP, filter, pool, framing, audit). Not a timed test.
// Usage: npm run bench:verify   (env BENCH_CHECKS=1000 BENCH_REPLS=4; KLS_SRC=<kimina-lean-server checkout>
// adds kimina-lean-server itself beside `kimina serve`, see servers.ts)
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
import { serversSideBySide } from './verifyServers';

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
    memoryLimitMb: 0,
    sandbox: detectSandbox('none'),
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
  await serversSideBySide(repls, 64, checks, headers);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
