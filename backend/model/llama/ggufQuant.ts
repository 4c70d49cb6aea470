// The tensor encodings of ggufFormat.ts's types, as llama.cpp's reference quantizers (ggml-quants.c) write them.
import { toHalf } from '../onnx/numeric';
import { GGML_TYPES, type GgufWeightType } from './ggufFormat';

/** Q4_0: blocks of 32 as {fp16 d, 16 bytes of nibbles}, d = extreme / -8, q = trunc(x/d + 8.5) clamped to 15. */
function quantizeQ4_0(w: Float32Array): Buffer {
  const blocks = w.length / 32;
  const out = Buffer.alloc(blocks * GGML_TYPES.q4_0.bytes);
  for (let b = 0; b < blocks; b++) {
    let extreme = 0;
    for (let i = 0; i < 32; i++) if (Math.abs(w[b * 32 + i]) > Math.abs(extreme)) extreme = w[b * 32 + i];
    const d = extreme / -8;
    const id = d ? 1 / d : 0;
    out.writeUInt16LE(toHalf(d), b * 18);
    for (let j = 0; j < 16; j++) {
      const q0 = Math.min(15, Math.trunc(w[b * 32 + j] * id + 8.5));
      const q1 = Math.min(15, Math.trunc(w[b * 32 + 16 + j] * id + 8.5));
      out[b * 18 + 2 + j] = q0 | (q1 << 4);
    }
  }
  return out;
}

/** Q8_0: blocks of 32 as {fp16 d, 32 int8}, d = max|x| / 127, q = round(x/d) (half away from zero, C's roundf). */
function quantizeQ8_0(w: Float32Array): Buffer {
  const blocks = w.length / 32;
  const out = Buffer.alloc(blocks * GGML_TYPES.q8_0.bytes);
  for (let b = 0; b < blocks; b++) {
    let amax = 0;
    for (let i = 0; i < 32; i++) amax = Math.max(amax, Math.abs(w[b * 32 + i]));
    const d = amax / 127;
    const id = d ? 1 / d : 0;
    out.writeUInt16LE(toHalf(d), b * 34);
    for (let i = 0; i < 32; i++) {
      const x = w[b * 32 + i] * id;
      out.writeInt8(Math.sign(x) * Math.round(Math.abs(x)), b * 34 + 2 + i);
    }
  }
  return out;
}

function encodeF16(w: Float32Array): Buffer {
  const out = Buffer.alloc(w.length * 2);
  for (let i = 0; i < w.length; i++) out.writeUInt16LE(toHalf(w[i]), i * 2);
  return out;
}

/** The bytes of one tensor in a type (row-major; blocks run along the innermost dimension). */
export function encodeTensor(type: GgufWeightType, w: Float32Array): Buffer {
  switch (type) {
    case 'f32':
      return Buffer.from(w.buffer, w.byteOffset, w.byteLength);
    case 'f16':
      return encodeF16(w);
    case 'q4_0':
      return quantizeQ4_0(w);
    case 'q8_0':
      return quantizeQ8_0(w);
  }
}
