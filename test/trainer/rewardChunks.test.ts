// The local trainer's reward client (kimina_trainer/backend_client.py, real Python) against a live `kimina serve`
// (stand-in REPL, a TEST DOUBLE for Lean): 64 answers with 20,000 CJK characters of thinking each (60 KB apiece in
// UTF-8, 120 KB with \u escapes). Sent in one body the way `requests.post(json=…)` encodes it, the batch is over the
// server's 4 MiB limit (413); the trainer's chunker measures the bytes it sends and every chunk is accepted.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TrainingRun } from '../../backend/protocol';
import { startServe, TOKEN, type LiveServe } from '../security/liveServe';
import { PROMPTS, removeDir, tempDir } from './harness';
import { testPython, trainerSource } from './pythonSetup';

let dir: string;
let python: string;
let s: LiveServe;
before(async () => {
  dir = tempDir('kimina-reward-chunks-');
  python = await testPython();
  s = await startServe({ KIMINA_TRAINER_PYTHON: join(dir, 'no-python') });
});
after(async () => {
  await s?.stop();
  removeDir(dir);
});

const SCRIPT = `
import json, sys, requests
from kimina_trainer.backend_client import BackendClient, chunks, encode
url, run_id, token = sys.argv[1:4]
statement = "import Mathlib\\n\\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\\n  sorry"
think = ("因为二乘以未知数加三等于十一，所以未知数等于四。" * 1000)[:20000]
answer = ("<think>\\n" + think + "\\n</think>\\n线性算术。\\n\\n\`\`\`lean4\\nimport Mathlib\\n\\n"
          "theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\\n  linarith\\n\`\`\`")
items = [{"promptId": str(i), "turn": 1, "formalStatement": statement, "previous": [], "response": answer} for i in range(64)]
whole = requests.post(url + "/v1/training/runs/" + run_id + "/reward", json={"step": 1, "purpose": "train", "items": items},
                      headers={"Authorization": "Bearer " + token}, timeout=120)
parts = chunks(items, {"step": 1, "purpose": "train"})
results = BackendClient(url, run_id, token).reward(1, "train", items)
print(json.dumps({"whole": whole.status_code, "wholeBytes": len(json.dumps({"step": 1, "purpose": "train", "items": items}).encode()),
                  "chunks": [len(encode({"step": 1, "purpose": "train", "items": p})) for p in parts],
                  "results": len(results), "valid": sum(1 for r in results if r["verdict"] == "valid")}))
`;

test(
  "64 answers x 20,000 CJK characters: one json= body is refused (413), the trainer's chunks are all accepted",
  { timeout: 300_000 },
  async () => {
    const made = await s.post('/v1/training/runs', {
      preset: 'tiny-cpu',
      model: join(dir, 'no-model'),
      prompts: PROMPTS,
      heldOut: [],
      gpus: 'cpu',
      name: 'chunks',
    });
    assert.equal(made.status, 201, JSON.stringify(made.json));
    const run = made.json as TrainingRun;
    const r = spawnSync(python, ['-c', SCRIPT, s.url, run.id, TOKEN], {
      cwd: trainerSource,
      encoding: 'utf8',
      timeout: 240_000,
      env: { ...process.env, PYTHONPATH: trainerSource },
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout.trim().split('\n').pop()!) as {
      whole: number;
      wholeBytes: number;
      chunks: number[];
      results: number;
      valid: number;
    };
    console.log(
      `one body with \\u escapes: ${out.wholeBytes} bytes -> ${out.whole}; chunks as sent: ${out.chunks.join(', ')} bytes`,
    );
    assert.equal(out.whole, 413);
    assert.ok(out.chunks.every((n) => n < 4 * 1024 * 1024));
    assert.equal(out.results, 64);
    assert.equal(out.valid, 64);
    await s.health();
  },
);
