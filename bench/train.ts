// `npm run bench:train`: tokens/s and step time of GRPO (dr_grpo) on the tiny random Qwen3 on the CPU, through
// the whole local path (`kimina serve`'s composition: training job, Python TRL trainer, reward service with the
// stand-in REPL TEST DOUBLE). The trainer runs in test/trainer/.venv (created like `kimina trainer setup` on first use).
// Env: KIMINA_BENCH_STEPS (default 12), KIMINA_BENCH_GENERATIONS (default 8), KIMINA_BENCH_PROMPTS (default 4),
// KIMINA_BENCH_LENGTH (completion tokens, default 64). Prints one line per step and a median summary.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { ChatMessage, TrainingPrompt } from '../backend/protocol';
import { ApiClient } from '../backend/client/apiClient';
import { openApp } from '../backend/app/app';
import { startServing } from '../backend/app/serve';
import { readSettings } from '../backend/settings/settings';
import { standInVerifier } from '../backend/demo/demo';
import { ensurePythonEnv } from '../backend/training/pythonEnv';

const steps = Number(process.env.KIMINA_BENCH_STEPS ?? 12);
const generations = Number(process.env.KIMINA_BENCH_GENERATIONS ?? 8);
const prompts = Number(process.env.KIMINA_BENCH_PROMPTS ?? 4);
const length = Number(process.env.KIMINA_BENCH_LENGTH ?? 64);

const root = resolve(__dirname, '..');
const trainerSource = join(root, 'backend', 'trainer');
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
};

function prompt(id: string, theorem: string): TrainingPrompt {
  const formalStatement = `import Mathlib\n\ntheorem ${theorem} := by\n  sorry`;
  const messages: ChatMessage[] = [
    { role: 'system', content: 'You are an expert in mathematics and proving theorems in Lean 4.' },
    {
      role: 'user',
      content: `Think about and solve the following problems step by step in Lean 4.\n\n# Problem:\n\n\n# Formal Statement:\n\`\`\`lean4\n${formalStatement}\n\`\`\`\n`,
    },
  ];
  return { id, prompt: messages, formalStatement };
}

const PROMPTS = [
  prompt('p1', 't1 (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4'),
  prompt('p2', 't2 (a b : ℕ) (h : a = b) : b = a'),
  prompt('p3', 't3 (n : ℕ) : n + 0 = n'),
  prompt('p4', 't4 (x : ℤ) (h : x - 1 = 2) : x = 3'),
];

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-bench-train-'));
  const env = await ensurePythonEnv({
    env: process.env,
    dir: join(root, 'test', 'trainer', '.venv'),
    requirements: join(trainerSource, 'requirements-cpu.txt'),
    onProgress: () => {},
  });
  const settings = readSettings({
    ...process.env,
    KIMINA_HOME: dir,
    KIMINA_DB: join(dir, 'kimina.db'),
    KIMINA_TRAINING_DIR: join(dir, 'runs'),
    KIMINA_TRAINER_PYTHON: env.python,
    KIMINA_LEAN_PROJECT: dir,
    KIMINA_MAX_REPLS: '2',
    KIMINA_API_TOKEN: '',
    LEAN_SERVER_API_KEY: '',
  });
  const serving = await startServing(openApp({ settings, verifier: standInVerifier() }), {
    host: '127.0.0.1',
    port: 0,
  });
  const api = new ApiClient({ url: serving.url }); // no token: none is configured above
  try {
    const model = join(dir, 'tiny-model');
    await promisify(execFile)(env.python, ['-m', 'kimina_trainer.tiny', model, '--seed', '0'], {
      cwd: trainerSource,
      env: { ...process.env, PYTHONPATH: trainerSource },
    });
    const t0 = Date.now();
    const started = await api.call('trainingStart', {
      body: {
        preset: 'tiny-cpu',
        model,
        prompts: PROMPTS.slice(0, prompts),
        heldOut: [],
        gpus: 'cpu',
        name: 'bench',
        overrides: {
          maxSteps: steps,
          saveSteps: steps,
          evalSteps: 0,
          promptsPerStep: prompts,
          numGenerations: generations,
          perDeviceBatch: prompts * generations,
          maxCompletionLength: length,
        },
      },
    });
    const params = { id: started.id };
    for (const deadline = Date.now() + 1_800_000; ;) {
      const run = await api.call('trainingRun', { params });
      if (run.state === 'failed') throw new Error(String(run.error));
      if (run.state === 'completed') break;
      if (Date.now() > deadline) throw new Error('timed out waiting for the bench run');
      await new Promise((done) => setTimeout(done, 500));
    }
    const wall = (Date.now() - t0) / 1000;
    const rows = (await api.call('trainingMetrics', { params, query: { kind: 'train' } })).steps;
    for (const s of rows) {
      console.log(
        `step ${String(s.step).padStart(3)}  ${s.metrics['perf/time_per_step'].toFixed(2)} s  ${s.metrics['perf/tokens_per_s'].toFixed(0)} tokens/s  mean length ${s.metrics['completions/mean_length'].toFixed(1)}`,
      );
    }
    const warm = rows.slice(1); // the first step includes lazy initialisation
    console.log(
      `tiny Qwen3 (${prompts} prompts x ${generations} samples, <= ${length} new tokens, CPU): median step ${median(warm.map((s) => s.metrics['perf/time_per_step'])).toFixed(2)} s, ` +
        `median ${median(warm.map((s) => s.metrics['perf/tokens_per_s'])).toFixed(0)} tokens/s (prompt + completion), run wall time ${wall.toFixed(0)} s including trainer start-up`,
    );
  } finally {
    await serving.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
