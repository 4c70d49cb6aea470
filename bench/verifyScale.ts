// bench:verify's scaling part: the verl reward module (backend/trainer/verl/kimina_reward.py, run by the system
// python3) scores the same rollouts through 1, 2 and 3 `kimina serve` processes named in one comma-separated
// KIMINA_REWARD_URL, as a Ray cluster with one verifier per node would. Each server has its own REPLs over the
// STAND-IN REPL (a test double) taking Lean's time per import and per check, so checks/s is what the verifiers
// give, not the client's overhead. Not a timed test.
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { shortAnswer } from '../backend/demo/kiminaExamples';
import { startKiminaServe, type RunningServer } from './servers';
import { leanCostEnv, type LeanCost } from './verifyServers';

const run = promisify(execFile);
const module = resolve(__dirname, '..', 'backend', 'trainer', 'verl');
const statement = 'theorem t3 (n : ℕ) : n + 0 = n := by';
// every fourth rollout's final proof names an unknown lemma (a Lean error); the others are valid
const answer = (i: number): string =>
  shortAnswer(statement, i % 4 === 0 ? `exact bogus_${i}` : `simp -- rollout ${i}`, 'simp');

const script = `
import json, sys, time
sys.path.insert(0, sys.argv[1])
import kimina_reward
sols = json.load(open(sys.argv[2]))
infos = [{"formal_statement": sys.argv[3], "index": str(i)} for i in range(len(sols))]
t0 = time.monotonic()
scores = kimina_reward.reward(["s"] * len(sols), sols, [None] * len(sols), infos)
print(json.dumps({"seconds": time.monotonic() - t0, "scores": scores}))
`;

async function score(urls: string[], token: string, rollouts: number, batchItems: number, concurrency = 2) {
  const file = join(mkdtempSync(join(tmpdir(), 'kimina-scale-')), 'sols.json');
  writeFileSync(file, JSON.stringify(Array.from({ length: rollouts }, (_, i) => answer(i))));
  const { stdout } = await run('python3', ['-c', script, module, file, statement], {
    env: {
      ...process.env,
      KIMINA_REWARD_URL: urls.join(','),
      KIMINA_API_TOKEN: token,
      KIMINA_REWARD_BATCH_ITEMS: String(batchItems),
      KIMINA_REWARD_CONCURRENCY: String(concurrency),
    },
    maxBuffer: 64 << 20,
  });
  return JSON.parse(stdout) as { seconds: number; scores: number[] };
}

/** Prints checks/s against the number of servers and `scale_ratio@N` (N servers / one). */
export async function scalingTable(replsPerServer: number, rollouts: number, cost: LeanCost): Promise<void> {
  const counts = [1, 2, 3];
  const batchItems = replsPerServer; // one request fills one server's REPLs
  console.log(
    `\nThe verl reward module over 1-3 servers: ${rollouts} rollouts, ${replsPerServer} REPLs per server, ${batchItems} answers per request, stand-in REPL taking ${cost.importMs / 1000} s per import and ${cost.checkMs / 1000} s per check (${cost.sources}); each server warmed with one import per REPL first\n`,
  );
  console.log('| servers | REPLs in all | wall s | checks/s | × one server | rewards |');
  console.log('|---|---|---|---|---|---|');
  let base = 0;
  const ratios: string[] = [];
  for (const n of counts) {
    const servers: RunningServer[] = [];
    try {
      for (let i = 0; i < n; i++)
        servers.push(await startKiminaServe(replsPerServer, join(tmpdir(), `scale-${i}.log`), leanCostEnv(cost)));
      const token = servers[0].token!;
      // warm-up: each server imports once per REPL
      await Promise.all(servers.map((s) => score([s.url], token, replsPerServer, 1, replsPerServer)));
      const r = await score(
        servers.map((s) => s.url),
        token,
        rollouts,
        batchItems,
      );
      const perSecond = rollouts / r.seconds;
      if (n === 1) base = perSecond;
      const expected = Array.from({ length: rollouts }, (_, i) => (i % 4 === 0 ? 0 : 1));
      const right = r.scores.length === rollouts && r.scores.every((v, i) => v === expected[i]);
      console.log(
        `| ${n} | ${n * replsPerServer} | ${r.seconds.toFixed(1)} | ${perSecond.toFixed(2)} | ${(perSecond / base).toFixed(2)} | ${right ? 'one per rollout, in order' : 'WRONG'} |`,
      );
      if (n > 1) ratios.push(`scale_ratio@${n}=${(perSecond / base).toFixed(2)}`);
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  }
  console.log(`\n${ratios.join(' ')}`);
}
