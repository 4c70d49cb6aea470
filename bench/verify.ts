// Benchmark of the verifier's own overhead: the stand-in REPL (a test double) answers at once, so
// everything measured is ours (HTTP, filter, pool, framing, audit). Not a timed test.
// Usage: npm run bench:verify   (env BENCH_CHECKS=1000 BENCH_REPLS=4)
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
import { standInVerifier } from '../backend/demo/demo';

const checks = Number(process.env.BENCH_CHECKS ?? 1000);
const repls = Number(process.env.BENCH_REPLS ?? 4);
const headers = 4;

interface Mode { name: string; reuse: boolean; maxUses: number; waitForBusyHeader?: boolean }
interface Result { mode: string; clients: number; checks: number; perSecond: number; p50: number; p99: number; imports: number; valid: number }

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

async function run(mode: Mode, clients: number, total: number): Promise<Result> {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-bench-'));
  const log = join(dir, 'repl.log');
  const launchOptions = { command: `STAND_IN_LOG=${log} ${standInVerifier().replCommand}`, projectDir: dir, memoryLimitMb: 0, sandbox: detectSandbox('none') };
  const pool = new ReplPool({ launch: (s) => buildLaunch(launchOptions, s), maxRepls: repls, maxUses: mode.maxUses, maxRssMb: 0, waitForBusyHeader: mode.waitForBusyHeader });
  const verifier = new Verifier({ runner: new PoolRunner(pool), policy: { allowed: defaultAllowedAxioms, allowNativeDecide: false }, maxInFlight: 10_000, defaultTimeoutS: 60 });
  const http = await listen(await createApp({ verifier }), '127.0.0.1', 0, undefined);
  const latencies: number[] = [];
  let next = 0;
  let valid = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: clients }, async () => {
    for (;;) {
      const i = next++;
      if (i >= total) return;
      const code = `import Header${i % headers}\n\ntheorem t${i} (a : ℕ) : a + 0 = a := by\n  simp`;
      const start = performance.now();
      const res = await fetch(`${http.url}/api/check`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ snippets: [{ id: String(i), code }], timeout: 60, debug: false, reuse: mode.reuse, infotree: null }),
      });
      const body = await res.json() as { results: { response?: { messages?: { severity: string }[] } }[] };
      latencies.push(performance.now() - start);
      if (res.status === 200 && !(body.results[0].response?.messages ?? []).some((m) => m.severity === 'error')) valid++;
    }
  }));
  const wall = (performance.now() - t0) / 1000;
  await http.close();
  await verifier.close();
  const imports = existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l.includes(' import ')).length : 0;
  latencies.sort((a, b) => a - b);
  return { mode: mode.name, clients, checks: total, perSecond: total / wall, p50: percentile(latencies, 50), p99: percentile(latencies, 99), imports, valid };
}

function row(r: Result): string {
  return `| ${r.mode} | ${r.clients} | ${r.checks} | ${r.perSecond.toFixed(0)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.imports} | ${r.valid}/${r.checks} |`;
}

async function main(): Promise<void> {
  const pooled: Mode = { name: 'kimina pool (header reuse)', reuse: true, maxUses: 0 };
  const fresh: Mode = { name: 'fresh REPL per check', reuse: false, maxUses: 1 };
  const klsOrder: Mode = { name: 'KLS acquire order (evict on busy header)', reuse: true, maxUses: 0, waitForBusyHeader: false };
  console.log(`stand-in REPL answering at once; ${repls} REPLs; ${headers} distinct headers; one snippet per POST /api/check\n`);
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
  for (const clients of [1, 64]) console.log(row(await run(fresh, clients, Math.min(checks, clients === 1 ? 50 : 200))));
  if (!last) throw new Error('no 64-client run');
  console.log(`\noverhead_ms p50=${last.p50.toFixed(2)} p99=${last.p99.toFixed(2)} imports=${last.imports}`);
}

main().catch((err: unknown) => { console.error(err); process.exit(1); });
