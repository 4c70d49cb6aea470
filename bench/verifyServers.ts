// bench:verify's side by side of whole servers, each its own process over the same stand-in REPL and the
// same load: `kimina serve` and kimina-lean-server itself (when KLS_SRC names its checkout).
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { samplePeakRss } from './processTree';
import { driveChecks, type LoadResult } from './serverLoad';
import { klsUnavailable, startKiminaLeanServer, startKiminaServe, type RunningServer } from './servers';

interface ServerResult extends LoadResult {
  name: string;
  imports: number;
  peakRssMb: number;
}

/** Stand-in delays that make the workload cost what Lean costs (bench:verify's realistic part), with their sources. */
export interface LeanCost {
  importMs: number;
  checkMs: number;
  sources: string;
}

export function leanCostEnv(cost: LeanCost | undefined): Record<string, string> {
  return cost ? { STAND_IN_IMPORT_MS: String(cost.importMs), STAND_IN_CHECK_MS: String(cost.checkMs) } : {};
}

async function measure(
  start: (log: string) => Promise<RunningServer>,
  clients: number,
  total: number,
  headers: number,
): Promise<ServerResult> {
  const log = join(mkdtempSync(join(tmpdir(), 'kimina-bench-')), 'repl.log');
  const server = await start(log);
  try {
    // one short warm-up per header, so neither server is timed on its first imports alone
    await driveChecks(server.url, { clients: headers, total: headers, headers, reuse: true, token: server.token });
    const rss = samplePeakRss(server.pid);
    const r = await driveChecks(server.url, { clients, total, headers, reuse: true, token: server.token });
    const peak = rss.stop();
    const imports = existsSync(log)
      ? readFileSync(log, 'utf8')
          .split('\n')
          .filter((l) => l.includes(' import ')).length
      : 0;
    return { ...r, name: server.name, imports, peakRssMb: peak / 2 ** 20 };
  } finally {
    await server.stop();
  }
}

/**
 * Prints the two servers' rows and `kls_ratio` (ours / theirs, checks per second), or why theirs was not run.
 * With `cost`, the stand-in REPL takes Lean's time per import and per check, so the rows are end-to-end times.
 */
export async function serversSideBySide(
  repls: number,
  clients: number,
  total: number,
  headers: number,
  cost?: LeanCost,
): Promise<void> {
  const what = cost
    ? `stand-in REPL taking ${cost.importMs / 1000} s per import and ${cost.checkMs / 1000} s per check (${cost.sources})`
    : 'stand-in REPL answering at once';
  console.log(
    `\nWhole servers as processes, ${what}: ${repls} REPLs, ${clients} clients, ${total} checks, ${headers} headers (one warm-up check per header first; imports include them)\n`,
  );
  console.log('| server | checks/s | wall s | p50 ms | p99 ms | imports | accepted | peak RSS MiB (server + REPLs) |');
  console.log('|---|---|---|---|---|---|---|---|');
  const row = (r: ServerResult): string =>
    `| ${r.name} | ${r.perSecond.toFixed(cost ? 2 : 0)} | ${(r.checks / r.perSecond).toFixed(1)} | ${r.p50.toFixed(2)} | ${r.p99.toFixed(2)} | ${r.imports} | ${r.accepted}/${r.checks} | ${r.peakRssMb.toFixed(0)} |`;
  const env = leanCostEnv(cost);
  const tag = cost ? 'realistic_' : '';
  const ours = await measure((log) => startKiminaServe(repls, log, env), clients, total, headers);
  console.log(row(ours));
  const src = process.env.KLS_SRC;
  const why = klsUnavailable(src);
  if (why) {
    console.log(`\n${tag}kls_ratio: not measured: ${why}`);
    return;
  }
  let theirs: ServerResult;
  try {
    theirs = await measure((log) => startKiminaLeanServer(src!, repls, log, env), clients, total, headers);
  } catch (err) {
    console.log(
      `\n${tag}kls_ratio: not measured: kimina-lean-server did not run: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
    );
    return;
  }
  console.log(row(theirs));
  console.log(
    `\n${tag}kls_ratio=${(ours.perSecond / theirs.perSecond).toFixed(2)} (checks/s, kimina serve / kimina-lean-server) p99_ratio=${(theirs.p99 / ours.p99).toFixed(2)} rss_ratio=${(theirs.peakRssMb / ours.peakRssMb).toFixed(2)}` +
      (cost
        ? ` end_to_end_s ours=${(ours.checks / ours.perSecond).toFixed(0)} theirs=${(theirs.checks / theirs.perSecond).toFixed(0)}`
        : ''),
  );
}
