// The GPU check (`kimina trainer gpu-check`, backend/trainer/kimina_trainer/gpu_check.py) on the CPU with the tiny
// shape, so it is known to work before a GPU is ever lent: the folder holds the presets' configs, run.sh and the
// wheels the GPU image lacks (downloaded from PyPI for CPython 3.12, under the 64 MiB a device run carries); the
// check runs the trainer's real GRPO step for LoRA and full fine-tuning against its in-process REWARD DOUBLE (the
// backend's reward contract, scores by a hash: no Lean) and reports step time, tokens/s and peak memory.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GPU_CHECK_PACKAGES, gpuCheckConfigs, prepareGpuCheck } from '../../backend/training/gpuCheck';
import { testPython, trainerSource } from './pythonSetup';

const run = promisify(execFile);

test('the configs are the single-GPU presets, cut short: Dr.GRPO, LoRA for one mode, all weights for the other', () => {
  const { lora, full } = gpuCheckConfigs(3, 1024);
  assert.equal(lora.max_steps, 3);
  assert.equal(lora.max_completion_length, 1024);
  assert.ok(lora.lora && typeof lora.lora === 'object', 'single-gpu-lora keeps its LoRA');
  assert.equal(full.lora, null, 'single-gpu-full trains every weight');
  for (const c of [lora, full]) {
    assert.equal(c.beta, 0);
    assert.equal(c.epsilon, 0.2);
    assert.equal(c.epsilon_high, 0.3);
    assert.equal(
      (c.prompts_per_step as number) * (c.num_generations as number),
      c.per_device_batch,
      'one update per generation',
    );
  }
});

test(
  'gpu-check folder: wheels for Python 3.12 under 64 MiB, then the real GRPO step (LoRA and full) on the CPU',
  { timeout: 600_000 },
  async () => {
    const python = await testPython();
    const dir = mkdtempSync(join(tmpdir(), 'kimina-gpu-check-'));
    const folder = prepareGpuCheck(dir, { python, steps: 2, completionTokens: 24, env: process.env });
    const names = folder.wheels.map((w) => w.split('-')[0].toLowerCase());
    assert.deepEqual([...names].sort(), [...GPU_CHECK_PACKAGES].sort(), `wheels: ${folder.wheels.join(', ')}`);
    assert.ok(folder.wheelBytes > 100_000 && folder.wheelBytes < 64 * 2 ** 20, `${folder.wheelBytes} bytes`);
    for (const w of folder.wheels) assert.match(w, /-(py3|py312|cp312)-/, `${w} is for Python 3.12`);
    assert.match(readFileSync(join(dir, 'run.sh'), 'utf8'), /--no-index --no-deps --target/);
    assert.ok(readdirSync(dir).includes('configs.json'));

    const out = join(dir, 'report.json');
    const r = await run(
      python,
      [
        '-m',
        'kimina_trainer.gpu_check',
        '--configs',
        join(dir, 'configs.json'),
        '--shapes',
        'tiny',
        '--device',
        'cpu',
        '--out',
        out,
      ],
      { env: { ...process.env, PYTHONPATH: trainerSource }, maxBuffer: 64 << 20 },
    );
    assert.match(r.stdout, /gpu-check versions: python 3\.\d+.*torch .*transformers .*trl /);
    assert.match(r.stdout, /\| tiny \| lora \| 2 \|/);
    const report = JSON.parse(readFileSync(out, 'utf8')) as {
      versions: Record<string, string>;
      rows: {
        mode: string;
        steps: number;
        step_s: number;
        tokens_per_s: number;
        loss: number;
        peak_memory_gib: number;
        rewards_scored: number;
        finished: boolean;
        error?: string;
      }[];
    };
    assert.deepEqual(
      report.rows.map((row) => row.mode),
      ['lora', 'full'],
    );
    for (const row of report.rows) {
      assert.equal(row.error, undefined);
      assert.equal(row.steps, 2);
      assert.ok(row.finished, 'the trainer finished its run');
      assert.equal(row.rewards_scored, 2 * 32, 'every answer of both steps went through the reward contract');
      assert.ok(row.step_s > 0 && row.tokens_per_s > 0, `step ${row.step_s} s, ${row.tokens_per_s} tokens/s`);
      assert.ok(Number.isFinite(row.loss));
      assert.ok(row.peak_memory_gib > 0);
    }
  },
);
