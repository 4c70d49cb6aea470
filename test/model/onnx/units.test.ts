// Small parts: protobuf varints, half floats, 4-bit blocks, the sampler, stop-string streaming, config checks.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtoWriter } from '../../../backend/model/onnx/protobuf';
import { fromHalf, toHalf, bfloat16ToFloat32 } from '../../../backend/model/onnx/numeric';
import { dequantizeQ4, quantizeQ4 } from '../../../backend/model/onnx/quantize';
import { argmax, sampleToken, seededRandom } from '../../../backend/model/onnx/sampler';
import { SampleText } from '../../../backend/model/onnx/textStream';
import { qwen3ShapeFromConfig } from '../../../backend/model/onnx/qwen3Config';
import type { StreamDecoder } from '../../../backend/model/tokenizer';

test('protobuf varints: small, multi-byte and negative int64 (ten bytes)', () => {
  assert.deepEqual([...new ProtoWriter().varint(1, 1).finish()], [0x08, 0x01]);
  assert.deepEqual([...new ProtoWriter().varint(2, 300).finish()], [0x10, 0xac, 0x02]);
  const neg = new ProtoWriter().varint(1, -1).finish();
  assert.equal(neg.length, 11);
  assert.equal(neg[10], 0x01);
  const nested = new ProtoWriter().message(3, new ProtoWriter().string(1, 'ab')).finish();
  assert.deepEqual([...nested], [0x1a, 0x04, 0x0a, 0x02, 0x61, 0x62]);
});

test('half and bfloat16 conversions round correctly', () => {
  for (const v of [0, 1, -2.5, 65504, 6.103515625e-5, 2 ** -24]) assert.equal(fromHalf(toHalf(v)), v);
  assert.equal(fromHalf(toHalf(1 + 2 ** -11)), 1); // ties to even
  assert.equal(fromHalf(toHalf(1e6)), Infinity);
  assert.deepEqual([...bfloat16ToFloat32(new Uint16Array([0x3f80, 0xc000]))], [1, -2]);
});

test('4-bit blocks: the extreme value is exact, errors stay within half a step, bad sizes are refused', () => {
  const random = seededRandom(3);
  const w = Float32Array.from({ length: 4 * 64 }, () => random() * 2 - 1);
  const q = quantizeQ4(w, 4, 64);
  assert.equal(q.packed.length, 4 * 2 * 16);
  const back = dequantizeQ4(q);
  for (let b = 0; b < 8; b++) {
    const scale = Math.abs(q.scales[b]);
    const block = [...w.subarray(b * 32, b * 32 + 32)];
    const extreme = block.reduce((m, v) => (Math.abs(v) > Math.abs(m) ? v : m), 0);
    for (let i = 0; i < 32; i++) {
      const err = Math.abs(back[b * 32 + i] - w[b * 32 + i]);
      if (w[b * 32 + i] === extreme) assert.ok(err < 1e-6, 'the extreme value maps to -8 exactly');
      // +8 steps do not exist (4 bits hold -8..7): values of the other sign may be off by one step.
      else
        assert.ok(
          err <= (Math.sign(w[b * 32 + i]) === Math.sign(extreme) ? scale / 2 : scale) + 1e-6,
          `block ${b} item ${i}`,
        );
    }
  }
  assert.throws(() => quantizeQ4(new Float32Array(40), 1, 40), /divisible by 32/);
});

test('sampler: greedy is argmax; a tiny top_p keeps only the best token; seeded draws follow the probabilities', () => {
  const logits = new Float32Array([0.1, 2, 1.9, -5]);
  assert.equal(argmax(logits), 1);
  assert.equal(sampleToken(logits, 0, 1, seededRandom(1)), 1);
  const r = seededRandom(2);
  for (let i = 0; i < 50; i++) assert.equal(sampleToken(logits, 1, 0.01, r), 1);
  // top_p = 0.9 over probabilities [.5, .3, .15, .05] keeps the first three.
  const probs = [0.5, 0.3, 0.15, 0.05];
  const l2 = new Float32Array(probs.map(Math.log));
  const counts = [0, 0, 0, 0];
  const r2 = seededRandom(9);
  for (let i = 0; i < 4000; i++) counts[sampleToken(l2, 1, 0.9, r2)]++;
  assert.equal(counts[3], 0);
  assert.ok(Math.abs(counts[0] / 4000 - 0.5 / 0.95) < 0.03, `${counts}`);
  // Same seed, same draws.
  const draws = (seed: number) => {
    const rr = seededRandom(seed);
    return Array.from({ length: 20 }, () => sampleToken(l2, 1, 1, rr));
  };
  assert.deepEqual(draws(5), draws(5));
  assert.notDeepEqual(draws(5), draws(6));
});

/** A test double of the tokenizer's stream decoder: token i decodes to pieces[i]. */
function pieceDecoder(pieces: string[]): StreamDecoder {
  return { push: (id) => pieces[id], flush: () => '' };
}

test('stop strings: cut at the earliest match, never streamed (not even partly), text kept before it', () => {
  const pieces = ['Hello', ' wor', 'ld', '<', 'EN', 'D>', 'after'];
  const s = new SampleText(pieceDecoder(pieces), ['<END>', 'xyz']);
  const deltas = [0, 1, 2, 3, 4, 5, 6].map((t) => s.push(t));
  assert.deepEqual(deltas, ['Hello', ' wor', 'ld', '', '', '', '']);
  assert.ok(s.stopped);
  assert.equal(s.text, 'Hello world');
  assert.equal(s.finish(), '');
  assert.equal(s.tokens, 6);
  // A held-back prefix that turns out not to be a stop string is released.
  const t = new SampleText(pieceDecoder(['a<', 'EN', 'x']), ['<END>']);
  assert.deepEqual([t.push(0), t.push(1), t.push(2)], ['a', '', '<ENx']);
  assert.equal(t.finish(), '');
  assert.equal(t.text, 'a<ENx');
  // A stop string spanning tokens, found even when it starts inside already-streamed text.
  const u = new SampleText(pieceDecoder(['ab', 'c']), ['bc']);
  assert.deepEqual([u.push(0), u.push(1)], ['a', '']);
  assert.equal(u.text, 'a');
});

test('config.json checks: Qwen3 only, rope_theta from either place, refused math-changing fields, defaults for optional keys', () => {
  const base = {
    model_type: 'qwen3',
    vocab_size: 10,
    hidden_size: 64,
    num_hidden_layers: 1,
    num_attention_heads: 4,
    intermediate_size: 32,
  };
  const s = qwen3ShapeFromConfig(base);
  assert.equal(s.kvHeads, 4);
  assert.equal(s.headDim, 16);
  assert.equal(s.tieWordEmbeddings, false);
  assert.throws(() => qwen3ShapeFromConfig({ ...base, model_type: 'llama' }), /qwen3 only/);
  assert.throws(() => qwen3ShapeFromConfig({ ...base, rope_scaling: { rope_type: 'yarn' } }), /rope_scaling "yarn"/);
  assert.equal(qwen3ShapeFromConfig(base).ropeTheta, 1e6);
  assert.equal(qwen3ShapeFromConfig({ ...base, rope_theta: 5000 }).ropeTheta, 5000);
  assert.equal(qwen3ShapeFromConfig({ ...base, rope_scaling: null, rope_theta: 5000 }).ropeTheta, 5000);
  // transformers >= 5: rope_parameters carries theta and type, and wins over a stale top-level value.
  assert.equal(
    qwen3ShapeFromConfig({ ...base, rope_parameters: { rope_type: 'default', rope_theta: 10000 } }).ropeTheta,
    10000,
  );
  assert.equal(
    qwen3ShapeFromConfig({ ...base, rope_theta: 5000, rope_parameters: { rope_type: 'default', rope_theta: 10000 } })
      .ropeTheta,
    10000,
  );
  for (const type of ['yarn', 'linear', 'dynamic', 'llama3']) {
    assert.throws(
      () => qwen3ShapeFromConfig({ ...base, rope_parameters: { rope_type: type, rope_theta: 1e6, factor: 4 } }),
      new RegExp(`rope_parameters "${type}"`),
    );
  }
  assert.throws(
    () =>
      qwen3ShapeFromConfig({
        ...base,
        rope_parameters: { rope_type: 'default', rope_theta: 1e6, partial_rotary_factor: 0.5 },
      }),
    /partial_rotary_factor/,
  );
  // Fields that change the math are refused, not ignored.
  assert.throws(() => qwen3ShapeFromConfig({ ...base, attention_bias: true }), /attention_bias/);
  assert.equal(qwen3ShapeFromConfig({ ...base, attention_bias: false, hidden_act: 'silu' }).layers, 1);
  assert.throws(() => qwen3ShapeFromConfig({ ...base, hidden_act: 'gelu' }), /hidden_act "gelu"/);
  assert.throws(
    () => qwen3ShapeFromConfig({ ...base, use_sliding_window: true, sliding_window: 4096, max_window_layers: 0 }),
    /sliding window/,
  );
  assert.throws(() => qwen3ShapeFromConfig({ ...base, layer_types: ['sliding_attention'] }), /layer_types/);
  // Qwen3-0.6B's own settings: a window configured but off, every layer full attention.
  assert.equal(
    qwen3ShapeFromConfig({
      ...base,
      use_sliding_window: false,
      sliding_window: null,
      max_window_layers: 1,
      layer_types: ['full_attention'],
    }).layers,
    1,
  );
  assert.equal(
    qwen3ShapeFromConfig({ ...base, use_sliding_window: true, sliding_window: 4096, max_window_layers: 1 }).layers,
    1,
  );
  assert.throws(() => qwen3ShapeFromConfig({ ...base, hidden_size: undefined }), /"hidden_size" is missing/);
  assert.throws(() => qwen3ShapeFromConfig({ ...base, num_key_value_heads: 3 }), /multiple/);
});
