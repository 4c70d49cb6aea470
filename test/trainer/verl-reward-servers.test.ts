// The verl reward module over several verifiers: three real `kimina serve` processes, each with the STAND-IN REPL
// (a test double of Lean) taking 150 ms per check, score 96 rollouts through one comma-separated KIMINA_REWARD_URL;
// one server is killed (SIGKILL) once the first call has returned and its GET /v1/load shows checks of a batch
// admitted (so it dies with a batch in flight). Every rollout must get exactly one reward, in order,
// equal to what one healthy server gives; the dead server's batches go to the others. A second run stops one
// server (SIGSTOP) so it stops answering: it is taken out after the request timeout and the run still completes.
// Needs only the system python3 (the module is standard-library only).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { shortAnswer } from '../../backend/demo/kiminaExamples';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';
import { cleanUpServes, serve, type Served } from '../api/spawnServe';
import { trainerSource } from './pythonSetup';

const TOKEN = 'reward-servers-test-token';
const dir = mkdtempSync(join(tmpdir(), 'kimina-reward-servers-'));
after(() => {
  cleanUpServes();
  rmSync(dir, { recursive: true, force: true });
});
writeFileSync(join(dir, 'kimina_reward.py'), readFileSync(join(trainerSource, 'verl', 'kimina_reward.py'), 'utf8'));

const statement = 'theorem t3 (n : ℕ) : n + 0 = n := by';
/** `tactic` decides the stand-in's verdict (`bogus_*` is an unknown identifier). */
const answer = (tactic: string): string => shortAnswer(statement, tactic);

const N = 96;
// valid for i % 3 === 0, a Lean error otherwise: the pattern tells a reordered or lost reward at once
const sols = Array.from({ length: N }, (_, i) => answer(i % 3 === 0 ? 'simp' : `exact bogus_fact_${i}`));
const expected = sols.map((_, i) => (i % 3 === 0 ? 1 : 0));

const script = `
import json, sys, time
sys.path.insert(0, sys.argv[1])
import kimina_reward
args = json.load(open(sys.argv[2]))
marker = sys.argv[3]
infos = [{"formal_statement": args["statement"], "index": str(i)} for i in range(len(args["sols"]))]
# one reward call per 32 rollouts, as verl's steps; the marker file tells the test when the run is under way
out = []
for start in range(0, len(args["sols"]), 32):
    out += kimina_reward.reward(["s"] * 32, args["sols"][start:start + 32], [None] * 32, infos[start:start + 32])
    open(marker, "a").write("step\\n")
print(json.dumps(out))
`;

function startServers(n: number): Promise<Served[]> {
  return Promise.all(
    Array.from({ length: n }, () =>
      serve({
        ...standInReplEnv({ checkDelayMs: 150 }),
        KIMINA_API_TOKEN: TOKEN,
        KIMINA_MAX_REPLS: '2',
      }),
    ),
  );
}

/** Runs the reward module over these URLs; `during` is called once the first step's rewards came back. */
async function run(
  urls: string[],
  env: Record<string, string>,
  during: () => void,
): Promise<{ rewards: number[]; ms: number }> {
  const argsFile = join(dir, `args-${Math.random()}.json`);
  const marker = join(dir, `marker-${Math.random()}`);
  writeFileSync(argsFile, JSON.stringify({ statement, sols }));
  appendFileSync(marker, '');
  const t0 = Date.now();
  const child = spawn('python3', ['-c', script, dir, argsFile, marker], {
    env: { ...process.env, KIMINA_REWARD_URL: urls.join(','), KIMINA_API_TOKEN: TOKEN, ...env },
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  let fired = false;
  const poll = setInterval(() => {
    if (!fired && readFileSync(marker, 'utf8').length > 0) {
      fired = true;
      during();
    }
  }, 20);
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  clearInterval(poll);
  assert.equal(code, 0, `the reward module failed:\n${stderr}`);
  assert.ok(fired, 'the servers were disturbed in the middle of the run');
  return { rewards: JSON.parse(stdout), ms: Date.now() - t0 };
}

test(
  'three servers, one killed mid-run: every rollout gets exactly one reward, in order, the same as one server gives',
  { timeout: 180_000 },
  async () => {
    const servers = await startServers(3);
    const alone = await run([servers[0].url], {}, () => {});
    assert.deepEqual(alone.rewards, expected, 'one healthy server: the reference rewards');

    // After step 1, wait until the second server has checks of a batch admitted (its /v1/load), then kill it.
    let admittedAtKill = 0;
    const killWithBatchInFlight = async (): Promise<void> => {
      const until = Date.now() + 20_000;
      try {
        while (Date.now() < until && admittedAtKill === 0) {
          const load = (await (
            await fetch(`${servers[1].url}/v1/load`, { headers: { authorization: `Bearer ${TOKEN}` } })
          ).json()) as { inFlight: number };
          if (load.inFlight > 0) admittedAtKill = load.inFlight;
          else await new Promise((r) => setTimeout(r, 10));
        }
      } finally {
        servers[1].child.kill('SIGKILL');
      }
    };
    const spread = await run(
      servers.map((s) => s.url),
      { KIMINA_REWARD_CONCURRENCY: '1', KIMINA_REWARD_BATCH_ITEMS: '8' },
      () => void killWithBatchInFlight(),
    );
    assert.ok(admittedAtKill > 0, 'the second server had checks of a batch in flight when it was killed');
    assert.equal(spread.rewards.length, N, 'exactly one reward per rollout');
    assert.deepEqual(spread.rewards, expected, 'in order, equal to the single server');
    assert.ok(spread.ms < alone.ms, `spread over servers (${spread.ms} ms) is faster than one (${alone.ms} ms)`);
    const exit = await servers[1].exited;
    assert.equal(exit.signal, 'SIGKILL', 'the second server really died during the run');
    for (const s of [servers[0], servers[2]]) s.child.kill('SIGTERM');
  },
);

test(
  'a server that stops answering (SIGSTOP) is taken out after the request timeout; the run completes',
  { timeout: 180_000 },
  async () => {
    const servers = await startServers(2);
    try {
      const r = await run(
        servers.map((s) => s.url),
        { KIMINA_REWARD_TIMEOUT_S: '3', KIMINA_REWARD_CONCURRENCY: '1', KIMINA_REWARD_BATCH_ITEMS: '8' },
        () => servers[0].child.kill('SIGSTOP'),
      );
      assert.deepEqual(r.rewards, expected);
    } finally {
      servers[0].child.kill('SIGCONT');
      for (const s of servers) s.child.kill('SIGTERM');
    }
  },
);

test('GET /v1/load needs the token and reports admitted checks against capacity', { timeout: 60_000 }, async () => {
  const [s] = await startServers(1);
  try {
    const open = await fetch(`${s.url}/v1/load`);
    assert.equal(open.status, 401, 'no token, no load figures');
    const res = await fetch(`${s.url}/v1/load`, { headers: { authorization: `Bearer ${TOKEN}` } });
    assert.equal(res.status, 200);
    const load = (await res.json()) as { inFlight: number; capacity: number; waiting: number; repls: object };
    assert.equal(load.inFlight, 0);
    assert.ok(load.capacity > 0, `capacity ${load.capacity}`);
    assert.equal(typeof load.waiting, 'number');
    const health = (await (await fetch(`${s.url}/health`)).json()) as Record<string, unknown>;
    assert.equal(health.inFlight, undefined, '/health stays to status, version and REPL counts');
  } finally {
    s.child.kill('SIGTERM');
  }
});

test(
  'a server taken out comes back once /health answers: the next reward call uses it again',
  { timeout: 60_000 },
  async () => {
    // TEST DOUBLES of the backend's reward route (score 1 for every answer): `flaky` answers 500 to its first
    // reward request, then works; the reward module runs in one python process across two calls
    const express = (await import('express')).default;
    const served = { flaky: 0, steady: 0 };
    const start = (name: 'flaky' | 'steady') =>
      new Promise<{ url: string; close: () => void }>((resolve) => {
        const app = express();
        let first = name === 'flaky';
        app.get('/health', (_req, res) => res.json({ status: 'ok' }));
        app.get('/v1/load', (_req, res) =>
          res.json({ inFlight: 0, capacity: 8, waiting: 0, repls: { total: 1, busy: 0 } }),
        );
        app.post('/v1/training/reward', express.json({ limit: '8mb' }), (req, res) => {
          if (first) {
            first = false;
            res.status(500).json({ detail: 'stand-in failure' });
            return;
          }
          served[name] += 1;
          const items = (req.body as { items: unknown[] }).items;
          res.json({
            results: items.map(() => ({ score: 1, acc: 1, code: null, feedback: null, formatErrorText: 'No error.' })),
          });
        });
        const server = app.listen(0, '127.0.0.1', () =>
          resolve({
            url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
            close: () => server.close(),
          }),
        );
      });
    const flaky = await start('flaky');
    const steady = await start('steady');
    try {
      const code = `
import json, sys, time
sys.path.insert(0, sys.argv[1])
import kimina_reward
infos = [{"formal_statement": "theorem t : True := by", "index": str(i)} for i in range(8)]
first = kimina_reward.reward(["s"] * 8, ["a"] * 8, [None] * 8, infos)
out = kimina_reward._servers[sys.argv[2]]
taken_out = out.out
time.sleep(1.2)  # past the first back-off
second = kimina_reward.reward(["s"] * 8, ["a"] * 8, [None] * 8, infos)
print(json.dumps({"first": first, "second": second, "takenOut": taken_out, "outNow": out.out}))
`;
      const child = spawn('python3', ['-c', code, dir, flaky.url], {
        env: { ...process.env, KIMINA_REWARD_URL: `${flaky.url},${steady.url}`, KIMINA_REWARD_BATCH_ITEMS: '1' },
      });
      let stdout = '';
      child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
      assert.equal(await new Promise((r) => child.once('exit', r)), 0);
      const r = JSON.parse(stdout) as { first: number[]; second: number[]; takenOut: boolean; outNow: boolean };
      assert.deepEqual(r.first, Array(8).fill(1));
      assert.deepEqual(r.second, Array(8).fill(1));
      assert.equal(r.takenOut, true, 'the failing server was taken out in the first call');
      assert.equal(r.outNow, false, 'and is back in after /health answered');
      assert.ok(served.flaky > 0, `the recovered server scored batches again (${served.flaky})`);
    } finally {
      flaky.close();
      steady.close();
    }
  },
);
