// Parity with Hugging Face transformers (opt-in: needs torch + transformers, taken from the trainer
// suite's Python environment test/trainer/.venv (test/trainer/pythonSetup.ts): used when it exists,
// created first when KIMINA_TEST_PARITY=1, skipped with the reason otherwise or when it cannot be made). transformers builds seeded random Qwen3 checkpoints
// in several config shapes (tied/untied, GQA 1:1 / 2:1 / 3:1 / 4:1, head_dim != hidden/heads,
// rope_theta != 1e6, config.json as transformers 4.x and 5.x write it) and computes every position's
// logits and greedy continuations by full recomputation (transformersReference.py); our converter turns
// each checkpoint into an fp32 graph and the engine must match: last-position logits after a chunked
// prefill, every cached position decoding token by token (rel <= 1e-4), greedy continuations alone,
// all prompts batched together, and n samples of one prompt sharing its cache (shared-prefix attention). The Qwen3 chat template must render byte-identical to
// apply_chat_template on multi-turn fix prompts with think blocks and leading whitespace.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { convertCheckpoint } from '../../../backend/model/onnx/convert';
import type { Decoder } from '../../../backend/model/onnx/decoder';
import { compileChatTemplate } from '../../../backend/model/chatTemplate';
import type { ChatMessage } from '../../../backend/protocol';
import { buildTokenizer } from '../../../backend/demo/models/tinyTokenizer';
import { seededRandom } from '../../../backend/model/onnx/sampler';
import { testPython, testVenv } from '../../trainer/pythonSetup';
import { loadDecoder, loadGqaDecoder } from '../onnx/helpers';
import { QWEN3_DIR } from '../qwen3Fixture';
import { parityConversations } from './conversations';

const execFileAsync = promisify(execFile);
const VOCAB = 340; // >= the tiny tokenizer's 337 tokens
const GREEDY_STEPS = 24;
const REL_TOLERANCE = 1e-4;

interface Shape {
  name: string;
  style: 'v4' | 'v5';
  config: Record<string, unknown>;
  promptLengths: number[];
}

const base = {
  vocab_size: VOCAB,
  intermediate_size: 128,
  num_hidden_layers: 2,
  rms_norm_eps: 1e-6,
  max_position_embeddings: 4096,
  initializer_range: 0.02,
};
const SHAPES: Shape[] = [
  {
    name: 'tied, GQA 2:1, transformers 5 config',
    style: 'v5',
    promptLengths: [1, 6, 40, 130, 300, 1500],
    config: {
      ...base,
      hidden_size: 64,
      num_attention_heads: 4,
      num_key_value_heads: 2,
      head_dim: 16,
      rope_theta: 1e6,
      tie_word_embeddings: true,
    },
  },
  {
    name: 'untied, GQA 4:1, head_dim 32 != 64/4, rope_theta 1e4, eps 1e-5, transformers 5 config',
    style: 'v5',
    promptLengths: [1, 6, 40, 300],
    config: {
      ...base,
      hidden_size: 64,
      num_attention_heads: 4,
      num_key_value_heads: 1,
      head_dim: 32,
      rope_theta: 1e4,
      rms_norm_eps: 1e-5,
      tie_word_embeddings: false,
    },
  },
  {
    name: 'untied, 8 heads without grouping, head_dim 8, rope_theta 5e5, transformers 4 config',
    style: 'v4',
    promptLengths: [1, 6, 40, 300],
    config: {
      ...base,
      hidden_size: 64,
      num_attention_heads: 8,
      num_key_value_heads: 8,
      head_dim: 8,
      rope_theta: 5e5,
      tie_word_embeddings: false,
    },
  },
  {
    name: 'tied, GQA 3:1, 3 layers, hidden 96, rope_theta 2e4, transformers 4 config',
    style: 'v4',
    promptLengths: [1, 6, 40, 300],
    config: {
      ...base,
      hidden_size: 96,
      num_hidden_layers: 3,
      num_attention_heads: 6,
      num_key_value_heads: 2,
      head_dim: 16,
      rope_theta: 2e4,
      tie_word_embeddings: true,
    },
  },
];

interface Reference {
  versions: Record<string, string>;
  checkpoints: Array<{ dir: string; greedy: number[][]; config: Record<string, unknown> }>;
  templates: string[];
}

function prompts(lengths: number[], seed: number): number[][] {
  const r = seededRandom(seed);
  return lengths.map((n) => Array.from({ length: n }, () => Math.floor(r() * VOCAB)));
}

let workDir: string | undefined;
after(() => {
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

let job: Promise<{ ref: Reference; root: string } | { skip: string }> | undefined;
function reference(): Promise<{ ref: Reference; root: string } | { skip: string }> {
  job ??= (async () => {
    // The environment is a few GB: made here only when asked; otherwise used when the trainer suite made it.
    if (!existsSync(join(testVenv, 'bin', 'python')) && !process.env.KIMINA_TEST_PARITY) {
      return {
        skip: 'no test/trainer/.venv with torch + transformers (npm run test:trainer makes it, or set KIMINA_TEST_PARITY=1)',
      };
    }
    let python: string;
    try {
      python = await testPython();
    } catch (e) {
      return { skip: `torch/transformers not installable here (${(e as Error).message.split('\n')[0]})` };
    }
    const root = mkdtempSync(join(tmpdir(), 'kimina-parity-'));
    workDir = root;
    const spec = {
      checkpoints: SHAPES.map((s, i) => ({
        dir: join(root, `ckpt${i}`),
        seed: 100 + i,
        config: s.config,
        config_style: s.style,
        prompts: prompts(s.promptLengths, 7 + i),
        greedy_steps: GREEDY_STEPS,
      })),
      templates: { tokenizer_dir: QWEN3_DIR, conversations: parityConversations },
    };
    writeFileSync(join(root, 'job.json'), JSON.stringify(spec));
    const { stdout } = await execFileAsync(
      python,
      [join(__dirname, 'transformersReference.py'), join(root, 'job.json')],
      { maxBuffer: 64 << 20 },
    );
    return { ref: JSON.parse(stdout.trim().split('\n').pop()!) as Reference, root };
  })();
  return job;
}

/**
 * The int8 cache's stated thresholds: the worst logit error relative to the largest logit, and the share of
 * greedy tokens that agree with the float32 path before the first difference, over INT8_LONG_STEPS.
 */
const INT8_REL_THRESHOLD = 0.05;
const INT8_AGREEMENT_THRESHOLD = 0.5;
const INT8_LONG_STEPS = 200;

/** The float16 cache rounds every cached K and V (measured worst 4.5e-4 on these checkpoints). */
const HALF_CACHE_REL_TOLERANCE = 2e-3;

function relError(ours: Float32Array, ref: Float32Array): number {
  let diff = 0;
  let scale = 0;
  for (let i = 0; i < ref.length; i++) {
    diff = Math.max(diff, Math.abs(ours[i] - ref[i]));
    scale = Math.max(scale, Math.abs(ref[i]));
  }
  return diff / scale;
}

async function greedy(decoder: Pick<Decoder, 'decode'>, rows: number[][], steps: number): Promise<number[][]> {
  const out = rows.map(() => [] as number[]);
  await decoder.decode(
    { prompts: rows, maxTokens: steps, temperature: 0, topP: 1, seed: 1, eosIds: [] },
    {
      onTokens: (r, t) => r.forEach((row, i) => out[row].push(t[i])),
      isStopped: () => false,
      isCancelled: () => false,
    },
  );
  return out;
}

SHAPES.forEach((shape, index) => {
  test(`transformers parity, fp32: ${shape.name}`, { timeout: 30 * 60_000 }, async (t) => {
    const r = await reference();
    if ('skip' in r) return t.skip(r.skip);
    const ckpt = r.ref.checkpoints[index];
    // The config really is in the style under test.
    if (shape.style === 'v5')
      assert.equal((ckpt.config.rope_parameters as Record<string, unknown>).rope_theta, shape.config.rope_theta);
    else {
      assert.equal(ckpt.config.rope_theta, shape.config.rope_theta);
      assert.equal(ckpt.config.rope_parameters, undefined);
    }
    const tok = buildTokenizer();
    writeFileSync(join(ckpt.dir, 'tokenizer.json'), JSON.stringify(tok.tokenizerJson));
    writeFileSync(join(ckpt.dir, 'tokenizer_config.json'), JSON.stringify(tok.tokenizerConfig));
    const out = join(r.root, `onnx${index}`);
    mkdirSync(out, { recursive: true });
    await convertCheckpoint(ckpt.dir, out, { quantize: 'fp32' });
    const decoder = await loadDecoder(out);
    const V = VOCAB;
    const ps = prompts(shape.promptLengths, 7 + index);
    let worst = 0;
    for (const [i, prompt] of ps.entries()) {
      const buf = readFileSync(join(ckpt.dir, 'reference', `logits_${i}.f32`));
      const ref = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
      assert.equal(ref.length, prompt.length * V);
      // Chunked prefill (256-token chunks): the last position.
      const state = decoder.newState(1);
      const last = await decoder.prefill(state, [prompt]);
      const e = relError(last!, ref.subarray((prompt.length - 1) * V));
      assert.ok(e <= REL_TOLERANCE, `prompt ${i} (${prompt.length} tokens), prefill: rel ${e}`);
      worst = Math.max(worst, e);
      // Every cached position, one token at a time.
      const step = decoder.newState(1);
      for (let p = 0; p < prompt.length; p++) {
        const logits = await decoder.feed(step, [[prompt[p]]]);
        const ep = relError(logits, ref.subarray(p * V, (p + 1) * V));
        assert.ok(ep <= REL_TOLERANCE, `prompt ${i}, position ${p}: rel ${ep}`);
        worst = Math.max(worst, ep);
      }
    }
    for (const [i, prompt] of ps.entries()) {
      assert.deepEqual((await greedy(decoder, [prompt], GREEDY_STEPS))[0], ckpt.greedy[i], `prompt ${i}: greedy alone`);
    }
    assert.deepEqual(await greedy(decoder, ps, GREEDY_STEPS), ckpt.greedy, 'greedy, all prompts batched together');
    // n samples of one prompt (pass@n): the rows read one shared copy of the prompt's cache.
    for (const i of [1, ps.length - 1]) {
      const rows = await greedy(decoder, [ps[i], ps[i], ps[i]], GREEDY_STEPS);
      rows.forEach((row, r) => assert.deepEqual(row, ckpt.greedy[i], `prompt ${i}: greedy, row ${r} of 3 sharing it`));
    }
    // The C API path (GroupQueryAttention, cache appended in place): the same checks, the same tolerance.
    const gqa = loadGqaDecoder(out);
    let worstGqa = 0;
    for (const [i, prompt] of ps.entries()) {
      const buf = readFileSync(join(ckpt.dir, 'reference', `logits_${i}.f32`));
      const ref = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
      const last = await gqa.prefill(gqa.newState(1), [prompt]);
      const e = relError(last!, ref.subarray((prompt.length - 1) * V));
      assert.ok(e <= REL_TOLERANCE, `C API path, prompt ${i} (${prompt.length} tokens), prefill: rel ${e}`);
      worstGqa = Math.max(worstGqa, e);
      const step = gqa.newState(1);
      for (let p = 0; p < prompt.length; p++) {
        const logits = await gqa.feed(step, [[prompt[p]]]);
        const ep = relError(logits, ref.subarray(p * V, (p + 1) * V));
        assert.ok(ep <= REL_TOLERANCE, `C API path, prompt ${i}, position ${p}: rel ${ep}`);
        worstGqa = Math.max(worstGqa, ep);
      }
      step.cache.release();
      assert.deepEqual(
        (await greedy(gqa, [prompt], GREEDY_STEPS))[0],
        ckpt.greedy[i],
        `C API path, prompt ${i}: greedy alone`,
      );
    }
    assert.deepEqual(await greedy(gqa, ps, GREEDY_STEPS), ckpt.greedy, 'C API path: greedy, all prompts batched');
    for (const i of [1, ps.length - 1]) {
      const rows = await greedy(gqa, [ps[i], ps[i], ps[i]], GREEDY_STEPS);
      rows.forEach((row, r) => assert.deepEqual(row, ckpt.greedy[i], `C API path: prompt ${i}, row ${r} of 3`));
    }
    t.diagnostic(`C API path (GroupQueryAttention, fp32 cache): worst rel error ${worstGqa.toExponential(2)}`);

    // The int8 cache (model.gqa8.onnx, per-channel scales calibrated at conversion): the logit error
    // against transformers, the greedy tokens against transformers' 24, and against our float32 path
    // (itself equal to transformers above) over a long continuation.
    const int8 = loadGqaDecoder(out, 1, true);
    let worstInt8 = 0;
    let identical = 0;
    let agreeing = 0;
    let compared = 0;
    for (const [i, prompt] of ps.entries()) {
      const buf = readFileSync(join(ckpt.dir, 'reference', `logits_${i}.f32`));
      const ref = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
      const step = int8.newState(1);
      for (let p = 0; p < prompt.length; p++)
        worstInt8 = Math.max(
          worstInt8,
          relError(await int8.feed(step, [[prompt[p]]]), ref.subarray(p * V, (p + 1) * V)),
        );
      step.cache.release();
      if (JSON.stringify((await greedy(int8, [prompt], GREEDY_STEPS))[0]) === JSON.stringify(ckpt.greedy[i]))
        identical++;
      const [ours] = await greedy(gqa, [prompt], INT8_LONG_STEPS);
      const [theirs] = await greedy(int8, [prompt], INT8_LONG_STEPS);
      let k = 0;
      while (k < ours.length && ours[k] === theirs[k]) k++;
      agreeing += k;
      compared += ours.length;
    }
    t.diagnostic(
      `int8 cache: worst rel logit error ${worstInt8.toExponential(2)} (threshold ${INT8_REL_THRESHOLD}); greedy = transformers on ${identical}/${ps.length} prompts x ${GREEDY_STEPS} tokens; agreeing prefix with the float32 path ${agreeing}/${compared} tokens over ${INT8_LONG_STEPS}-token continuations`,
    );
    // The logit error is a pass condition; the agreement is reported against its threshold (met or missed):
    // the int8 cache is opt-in (KIMINA_KV_CACHE=int8) because it misses it on some of these shapes.
    assert.ok(worstInt8 <= INT8_REL_THRESHOLD, `int8 cache: rel logit error ${worstInt8}`);
    t.diagnostic(
      `int8 cache: greedy agreement ${(agreeing / compared).toFixed(2)} ${agreeing / compared >= INT8_AGREEMENT_THRESHOLD ? 'meets' : 'misses'} the threshold ${INT8_AGREEMENT_THRESHOLD}`,
    );
    t.diagnostic(
      `worst rel error ${worst.toExponential(2)} (torch ${r.ref.versions.torch}, transformers ${r.ref.versions.transformers})`,
    );

    // The float16 KV cache (model.kv16.onnx): logits within float16 rounding, the same greedy tokens.
    const half = await loadDecoder(out, {}, 'fp16');
    let worstHalf = 0;
    for (const [i, prompt] of ps.entries()) {
      const buf = readFileSync(join(ckpt.dir, 'reference', `logits_${i}.f32`));
      const ref = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
      const e = relError((await half.prefill(half.newState(1), [prompt]))!, ref.subarray((prompt.length - 1) * V));
      assert.ok(e <= HALF_CACHE_REL_TOLERANCE, `float16 cache, prompt ${i}: rel ${e}`);
      worstHalf = Math.max(worstHalf, e);
      assert.deepEqual(
        (await greedy(half, [prompt], GREEDY_STEPS))[0],
        ckpt.greedy[i],
        `float16 cache, prompt ${i}: greedy alone`,
      );
    }
    assert.deepEqual(
      await greedy(half, ps, GREEDY_STEPS),
      ckpt.greedy,
      'float16 cache: greedy, all prompts batched together',
    );
    const last = ps.length - 1;
    (await greedy(half, [ps[last], ps[last]], GREEDY_STEPS)).forEach((row, r) =>
      assert.deepEqual(row, ckpt.greedy[last], `float16 cache: prompt ${last}, row ${r} of 2 sharing it`),
    );
    t.diagnostic(`float16 KV cache: worst rel error ${worstHalf.toExponential(2)}, greedy identical`);
  });
});

test(
  'transformers parity: the Qwen3 chat template renders byte-identical to apply_chat_template',
  { timeout: 30 * 60_000 },
  async (t) => {
    const r = await reference();
    if ('skip' in r) return t.skip(r.skip);
    const config = JSON.parse(readFileSync(join(QWEN3_DIR, 'tokenizer_config.json'), 'utf8')) as {
      chat_template: string;
    };
    const template = compileChatTemplate(config.chat_template);
    assert.equal(r.ref.templates.length, parityConversations.length);
    for (const [i, c] of parityConversations.entries())
      assert.equal(
        await template.render(c.messages as ChatMessage[], { addGenerationPrompt: c.add_generation_prompt }),
        r.ref.templates[i],
        `conversation ${i}`,
      );
  },
);
