// 4-bit block quantization in the layout of com.microsoft MatMulNBits (bits 4, block 32, symmetric,
// implicit zero point 8): for a linear weight W [N out, K in], B is uint8 [N, K/32, 16] with element
// 2j in the low nibble of byte j, scales are float32 [N * K/32], value = (q - 8) * scale.

export const Q4_BLOCK = 32;

export interface Q4Weight {
  n: number;
  k: number;
  packed: Uint8Array;
  scales: Float32Array;
}

/** Quantizes a row-major [n, k] weight (the Hugging Face Linear layout). k must be a multiple of 32. */
export function quantizeQ4(weight: Float32Array, n: number, k: number): Q4Weight {
  if (k % Q4_BLOCK !== 0) throw new Error(`4-bit quantization needs an input size divisible by ${Q4_BLOCK}, got ${k}`);
  if (weight.length !== n * k) throw new Error(`weight has ${weight.length} values, expected ${n}x${k}`);
  const blocks = k / Q4_BLOCK;
  const packed = new Uint8Array(n * blocks * (Q4_BLOCK / 2));
  const scales = new Float32Array(n * blocks);
  for (let row = 0; row < n; row++) {
    for (let b = 0; b < blocks; b++) {
      const base = row * k + b * Q4_BLOCK;
      // The value of largest magnitude maps to -8, which uses the full signed 4-bit range.
      let extreme = 0;
      for (let i = 0; i < Q4_BLOCK; i++) {
        const v = weight[base + i];
        if (Math.abs(v) > Math.abs(extreme)) extreme = v;
      }
      const scale = extreme / -8;
      const inv = scale === 0 ? 0 : 1 / scale;
      scales[row * blocks + b] = scale;
      const out = (row * blocks + b) * (Q4_BLOCK / 2);
      for (let i = 0; i < Q4_BLOCK; i += 2) {
        const q0 = Math.min(15, Math.max(0, Math.round(weight[base + i] * inv) + 8));
        const q1 = Math.min(15, Math.max(0, Math.round(weight[base + i + 1] * inv) + 8));
        packed[out + i / 2] = q0 | (q1 << 4);
      }
    }
  }
  return { n, k, packed, scales };
}

/** The float weight a Q4Weight stands for (for tests and for writing other formats). */
export function dequantizeQ4(q: Q4Weight): Float32Array {
  const blocks = q.k / Q4_BLOCK;
  const out = new Float32Array(q.n * q.k);
  for (let row = 0; row < q.n; row++) {
    for (let b = 0; b < blocks; b++) {
      const scale = q.scales[row * blocks + b];
      const src = (row * blocks + b) * (Q4_BLOCK / 2);
      for (let i = 0; i < Q4_BLOCK; i += 2) {
        const byte = q.packed[src + i / 2];
        out[row * q.k + b * Q4_BLOCK + i] = ((byte & 15) - 8) * scale;
        out[row * q.k + b * Q4_BLOCK + i + 1] = ((byte >> 4) - 8) * scale;
      }
    }
  }
  return out;
}
