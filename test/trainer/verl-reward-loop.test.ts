// The reward module's per-answer entry point, `compute_score`, as verl's reward loop (0.7 to 0.9) calls it: once
// per answer, all of a call's answers started together (verl/experimental/reward_loop/reward_loop.py
// compute_score_batch gathers one task per answer; naive.py run_single awaits compute_score when it is a
// coroutine function). The answers must still leave in the module's size-limited batches, spread over the
// servers with failover, each call getting its own answer's reward. The server is a TEST DOUBLE of the reward
// route (express with the backend's real body reader, 413 over the limit) that scores each item by a rule
// (score 1 for even promptIds) so that every answer's result can be told apart. Needs only the system python3.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import { readJsonBody } from '../../backend/api/body';
import { trainerSource } from './pythonSetup';

const execFileAsync = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'kimina-verl-loop-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'kimina_reward.py'), readFileSync(join(trainerSource, 'verl', 'kimina_reward.py'), 'utf8'));

interface Double {
  url: string;
  /** Items per request answered, in order. */
  batches: number[];
  sizes: number[];
  close(): Promise<void>;
}

async function startDouble(limitBytes: number, refuse = false): Promise<Double> {
  const batches: number[] = [];
  const sizes: number[] = [];
  const app = express();
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok', bodyLimitBytes: limitBytes });
  });
  app.post('/v1/training/reward', (req, res) => {
    sizes.push(Number(req.headers['content-length'] ?? -1));
    readJsonBody(req, limitBytes).then((r) => {
      if (!r.ok) {
        res.status(r.failure.status).json({ detail: r.failure.message });
        return;
      }
      if (refuse) {
        res.status(400).json({ detail: 'bad request from the test' });
        return;
      }
      const items = (r.value as { items: { promptId: string; turn: number }[] }).items;
      batches.push(items.length);
      res.json({
        results: items.map((it) => {
          const ok = Number(it.promptId) % 2 === 0;
          return {
            score: ok ? 1 : 0,
            acc: ok ? 1 : 0,
            code: null,
            feedback: ok ? null : `prompt ${it.promptId} turn ${it.turn}`,
            formatErrorText: 'No error.',
          };
        }),
      });
    });
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, batches, sizes, close: () => new Promise((r) => server.close(() => r(undefined))) };
}

const answer = (i: number): string => {
  const unit = `<think>\nStep ${i}: from h₀ : 2 * x + 3 = 11, x ∈ ℝ and x = 4 by linarith.\n</think>\n`;
  return unit.repeat(Math.ceil(20_000 / Buffer.byteLength(unit))).slice(0, 20_000);
};

// 64 answers started at once through asyncio.gather, as the reward loop starts them; the order in which the
// coroutines reach compute_score is shuffled by a random sleep of up to 5 ms each (the loop decodes first).
const call = `
import asyncio, json, random, sys
sys.path.insert(0, sys.argv[1])
import kimina_reward
args = json.load(open(sys.argv[2]))

async def one(i):
    await asyncio.sleep(random.random() * 0.005)
    r = await kimina_reward.compute_score(data_source="kimina/personal", solution_str=args["sols"][i],
                                          ground_truth=None, extra_info=args["infos"][i])
    return r

async def main():
    try:
        out = await asyncio.gather(*(one(i) for i in range(len(args["sols"]))))
        print(json.dumps({"scores": [d["score"] for d in out], "feedback": [d["tool_feedback"] for d in out],
                          "responses_match": all(d["response"] == s for d, s in zip(out, args["sols"]))}))
    except kimina_reward.RewardServiceError as e:
        print(json.dumps({"error": str(e)}))

asyncio.run(main())
`;

async function run(
  url: string,
  n = 64,
): Promise<{ scores?: number[]; feedback?: string[]; responses_match?: boolean; error?: string }> {
  const sols = Array.from({ length: n }, (_, i) => answer(i));
  const infos = sols.map((_, i) => ({ index: String(i), formal_statement: 'theorem t : True := by' }));
  const argsFile = join(dir, `args-${Math.random()}.json`);
  writeFileSync(argsFile, JSON.stringify({ sols, infos }));
  const { stdout } = await execFileAsync('python3', ['-c', call, dir, argsFile], {
    env: { ...process.env, KIMINA_REWARD_URL: url },
    maxBuffer: 64 << 20,
  });
  return JSON.parse(stdout);
}

const expected = (n: number) => Array.from({ length: n }, (_, i) => (i % 2 === 0 ? 1 : 0));

test(
  'per-answer calls are gathered into size-limited batches, and each call gets its own answer’s reward',
  { timeout: 60_000 },
  async (t) => {
    const limit = 512 * 1024;
    const d = await startDouble(limit);
    try {
      const r = await run(d.url);
      assert.deepEqual(r.scores, expected(64));
      assert.equal(r.feedback![3], 'prompt 3 turn 1');
      assert.equal(r.responses_match, true);
      const items = d.batches.reduce((a, b) => a + b, 0);
      assert.equal(items, 64, 'every answer scored exactly once');
      // 64 x 20 KB under a 512 KiB limit (less the 64 KiB margin): about 23 answers a body, so 3 requests; one
      // request per answer would be 64.
      t.diagnostic(`64 per-answer calls went out as ${d.batches.length} requests of ${d.batches.join(', ')} answers`);
      assert.ok(d.batches.length <= 4, `gathered into ${d.batches.length} requests: ${d.batches}`);
      for (const s of d.sizes) assert.ok(s <= limit, `request of ${s} bytes is over ${limit}`);
    } finally {
      await d.close();
    }
  },
);

test(
  'per-answer calls fail over: a dead server beside a live one, every answer still scored',
  { timeout: 60_000 },
  async () => {
    const d = await startDouble(4 * 1024 * 1024);
    const dead = await startDouble(4 * 1024 * 1024);
    const deadUrl = dead.url;
    await dead.close(); // nothing listens there any more: connection refused
    try {
      const r = await run(`${deadUrl},${d.url}`, 32);
      assert.deepEqual(r.scores, expected(32));
      assert.equal(
        d.batches.reduce((a, b) => a + b, 0),
        32,
      );
    } finally {
      await d.close();
    }
  },
);

test(
  'a refusal reaches every waiting call with the status and the backend’s message',
  { timeout: 60_000 },
  async () => {
    const d = await startDouble(4 * 1024 * 1024, true);
    try {
      const r = await run(d.url, 8);
      assert.match(r.error ?? '', /refused the batch: 400 .*bad request from the test/);
    } finally {
      await d.close();
    }
  },
);
