// The verl reward module's requests: 64 Kimina-sized answers (20 KB each, on turn 2 so each item also carries its
// 20 KB turn-1 answer) are cut into bodies under the backend's limit, a 429 is waited out with its Retry-After,
// and any other refusal stops with a clear message. The server is a TEST DOUBLE of the reward route: express
// with the backend's real body reader (backend/api/body.ts readJsonBody, 413 over the limit) and a /health that may state
// the limit; it scores each item by a rule (score = 1 for even promptIds) so order can be checked.
// Needs only the system python3 (the module is standard-library only).
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
const dir = mkdtempSync(join(tmpdir(), 'kimina-verl-reward-'));
after(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'kimina_reward.py'), readFileSync(join(trainerSource, 'verl', 'kimina_reward.py'), 'utf8'));

interface Double {
  url: string;
  sizes: number[];
  statuses: number[];
  close(): Promise<void>;
}

/** `plan` answers requests in turn: a status to send instead of scoring (with Retry-After for 429), or 'score'. */
async function startDouble(
  limitBytes: number,
  statedLimit: number | null,
  plan: (number | 'score')[] = [],
): Promise<Double> {
  const sizes: number[] = [];
  const statuses: number[] = [];
  const app = express();
  app.get('/health', (_req, res) => {
    res.json({ status: 'ok', ...(statedLimit ? { bodyLimitBytes: statedLimit } : {}) });
  });
  app.use((req, _res, next) => {
    sizes.push(Number(req.headers['content-length'] ?? -1));
    next();
  });
  app.use((req, res, next) => {
    readJsonBody(req, limitBytes).then((r) => {
      if (r.ok) {
        req.body = r.value;
        next();
        return;
      }
      statuses.push(r.failure.status);
      res.status(r.failure.status).json({ detail: r.failure.message });
    }, next);
  });
  app.post('/v1/training/reward', (req, res) => {
    const step = plan.shift() ?? 'score';
    if (step !== 'score') {
      statuses.push(step);
      if (step === 429) res.setHeader('Retry-After', '1');
      res.status(step).json({ detail: step === 429 ? 'Lean queue is full' : 'bad request from the test' });
      return;
    }
    statuses.push(200);
    const items = (req.body as { items: { promptId: string; turn: number }[] }).items;
    res.json({
      results: items.map((it) => {
        const ok = Number(it.promptId) % 2 === 0;
        return {
          score: ok ? 1 : 0,
          acc: ok ? 1 : 0,
          code: null,
          feedback: ok ? null : `turn ${it.turn}`,
          formatErrorText: 'No error.',
        };
      }),
    });
  });
  app.use(
    (
      err: { status?: number; message: string },
      _req: express.Request,
      res: express.Response,
      _next: express.NextFunction,
    ) => {
      statuses.push(err.status ?? 500);
      res.status(err.status ?? 500).json({ detail: err.message });
    },
  );
  const server = app.listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, sizes, statuses, close: () => new Promise((r) => server.close(() => r(undefined))) };
}

// A 20 KB Kimina-like answer: thinking prose and Lean with Unicode, as real answers have.
const answer = (i: number): string => {
  const unit = `<think>\nStep ${i}: since h₀ : 2 * x + 3 = 11 we get x ∈ ℝ with x = 4 by linarith.\n</think>\n`;
  return unit.repeat(Math.ceil(20_000 / Buffer.byteLength(unit))).slice(0, 20_000);
};

const call = `
import json, sys
sys.path.insert(0, sys.argv[1])
import kimina_reward
args = json.load(open(sys.argv[2]))
try:
    out = kimina_reward.reward(["s"] * len(args["sols"]), args["sols"], [None] * len(args["sols"]), args["infos"], return_dict=True)
    print(json.dumps({"ok": [d["score"] for d in out], "feedback": [d["tool_feedback"] for d in out]}))
except kimina_reward.RewardServiceError as e:
    print(json.dumps({"error": str(e)}))
`;

async function score(url: string): Promise<{ ok?: number[]; feedback?: string[]; error?: string }> {
  const sols = Array.from({ length: 64 }, (_, i) => answer(i));
  const infos = sols.map((_, i) => ({
    index: String(i),
    formal_statement: 'theorem t : True := by',
    prompt: [
      { role: 'system', content: 's' },
      { role: 'user', content: 'u' },
      { role: 'assistant', content: answer(100 + i) },
      { role: 'user', content: 'fb' },
    ],
  }));
  const argsFile = join(dir, `args-${Math.random()}.json`);
  writeFileSync(argsFile, JSON.stringify({ sols, infos }));
  const { stdout } = await execFileAsync('python3', ['-c', call, dir, argsFile], {
    env: { ...process.env, KIMINA_REWARD_URL: url },
    maxBuffer: 64 << 20,
  });
  return JSON.parse(stdout);
}

test(
  '64 turn-2 answers of 20 KB go in bodies under the limit /health states; all scored in order',
  { timeout: 60_000 },
  async () => {
    const limit = 1024 * 1024;
    const d = await startDouble(limit, limit);
    try {
      const r = await score(d.url);
      assert.deepEqual(
        r.ok,
        Array.from({ length: 64 }, (_, i) => (i % 2 === 0 ? 1 : 0)),
      );
      assert.equal(r.feedback![1], 'turn 2', 'the turn-1 answer travelled as previous');
      const total = d.sizes.reduce((a, b) => a + b, 0);
      assert.ok(total > 64 * 40_000, `the answers really were sent (${total} bytes)`);
      assert.ok(d.sizes.length >= 3, `split into ${d.sizes.length} requests`);
      for (const s of d.sizes) assert.ok(s <= limit, `request of ${s} bytes is over ${limit}`);
      assert.ok(
        d.statuses.every((s) => s === 200),
        `no 413: ${d.statuses}`,
      );
    } finally {
      await d.close();
    }
  },
);

test(
  'without a stated limit the documented 4 MiB default applies; a 429 is retried after Retry-After',
  { timeout: 60_000 },
  async () => {
    const d = await startDouble(4 * 1024 * 1024, null, [429, 'score']);
    try {
      const t0 = Date.now();
      const r = await score(d.url);
      assert.equal(r.ok?.length, 64);
      assert.deepEqual(d.statuses.slice(0, 2), [429, 200]);
      assert.ok(Date.now() - t0 >= 1000, 'waited the Retry-After second');
      for (const s of d.sizes) assert.ok(s <= 4 * 1024 * 1024);
    } finally {
      await d.close();
    }
  },
);

test(
  'the old fixed 64-per-request batching would be refused (413) where the new one is not',
  { timeout: 60_000 },
  async () => {
    // Same payload as one request: what the module used to send.
    const limit = 1024 * 1024;
    const d = await startDouble(limit, null);
    try {
      const items = Array.from({ length: 64 }, (_, i) => ({
        promptId: String(i),
        turn: 2,
        formalStatement: 't',
        previous: [answer(100 + i)],
        response: answer(i),
      }));
      const res = await fetch(`${d.url}/v1/training/reward`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ step: 0, purpose: 'train', items }),
      });
      assert.equal(res.status, 413);
    } finally {
      await d.close();
    }
  },
);

test('any other refusal stops with the status and the backend message', { timeout: 60_000 }, async () => {
  const d = await startDouble(4 * 1024 * 1024, null, [400]);
  try {
    const r = await score(d.url);
    assert.match(r.error ?? '', /refused the batch: 400 .*bad request from the test/);
  } finally {
    await d.close();
  }
});
