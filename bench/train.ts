// `npm run bench:train`: tokens/s and step time of GRPO (dr_grpo) on the tiny random Qwen3 on the CPU, through
// the whole local path (backend job, Python TRL trainer, reward service with the stand-in REPL TEST DOUBLE).
// Env: KIMINA_BENCH_STEPS (default 12), KIMINA_BENCH_GENERATIONS (default 8), KIMINA_BENCH_PROMPTS (default 4),
// KIMINA_BENCH_LENGTH (completion tokens, default 64). Prints one line per step and a median summary.
import { join } from 'node:path';
import type { TrainingRun } from '../backend/protocol';
import { api, makeTinyModel, PROMPTS, removeDir, startBackend, waitFor } from '../test/trainer/harness';

const steps = Number(process.env.KIMINA_BENCH_STEPS ?? 12);
const generations = Number(process.env.KIMINA_BENCH_GENERATIONS ?? 8);
const prompts = Number(process.env.KIMINA_BENCH_PROMPTS ?? 4);
const length = Number(process.env.KIMINA_BENCH_LENGTH ?? 64);

const median = (xs: number[]) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };

async function main(): Promise<void> {
  const backend = await startBackend();
  try {
    const model = await makeTinyModel(join(backend.dir, 'tiny-model'));
    const t0 = Date.now();
    const r = await api<TrainingRun>(backend, 'POST', '/v1/training/runs', {
      preset: 'tiny-cpu', model, prompts: PROMPTS.slice(0, prompts), heldOut: [], gpus: 'cpu', name: 'bench',
      overrides: { maxSteps: steps, saveSteps: steps, evalSteps: 0, promptsPerStep: prompts, numGenerations: generations,
        perDeviceBatch: prompts * generations, maxCompletionLength: length },
    });
    if (r.status !== 201) throw new Error(JSON.stringify(r.body));
    await waitFor('the bench run', () => {
      const run = backend.service.jobs.get(r.body.id);
      if (run.state === 'failed') throw new Error(String(run.error));
      return run.state === 'completed' || undefined;
    }, 1_800_000, 500);
    const wall = (Date.now() - t0) / 1000;
    const rows = backend.service.store.metrics(r.body.id, { kind: 'train' });
    for (const s of rows) {
      console.log(`step ${String(s.step).padStart(3)}  ${s.metrics['perf/time_per_step'].toFixed(2)} s  ${s.metrics['perf/tokens_per_s'].toFixed(0)} tokens/s  mean length ${s.metrics['completions/mean_length'].toFixed(1)}`);
    }
    const warm = rows.slice(1); // the first step includes lazy initialisation
    console.log(`tiny Qwen3 (${prompts} prompts x ${generations} samples, <= ${length} new tokens, CPU): median step ${median(warm.map((s) => s.metrics['perf/time_per_step'])).toFixed(2)} s, `
      + `median ${median(warm.map((s) => s.metrics['perf/tokens_per_s'])).toFixed(0)} tokens/s (prompt + completion), run wall time ${wall.toFixed(0)} s including trainer start-up`);
  } finally {
    await backend.close();
    removeDir(backend.dir);
  }
}

main().catch((err: unknown) => { console.error(err); process.exit(1); });
