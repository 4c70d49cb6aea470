// The KV cache in JS-owned arrays (Float32Array, or Uint16Array holding float16 for a graph with a
// float16 cache), one pair per layer, shared by all rows of the batch:
//   K transposed: [batch, kvHeads, 1, headDim, capacity]   V: [batch, kvHeads, 1, capacity, headDim]
// plus past_bias [batch, capacity]: 0 where a slot holds a real token, -1e9 where it is empty or padding.
// Capacity grows in steps by allocating and copying; rows can be selected (duplicated or dropped).

export const MASKED = -1e9;

export interface CacheShape {
  layers: number;
  kvHeads: number;
  headDim: number;
  /** float16 values (as Uint16Array bits) instead of float32. */
  half?: boolean;
}

export type CacheArray = Float32Array | Uint16Array;

export class KvCache {
  keys: CacheArray[];
  values: CacheArray[];
  bias: Float32Array;
  /** Slots filled so far (the same for every row: left padding keeps rows aligned). */
  length = 0;
  /** Bumped whenever the arrays are replaced, so callers know to rebuild their tensors. */
  version = 0;

  constructor(
    readonly shape: CacheShape,
    public batch: number,
    public capacity: number,
    readonly growStep = 128,
  ) {
    const { layers, kvHeads, headDim } = shape;
    const size = batch * kvHeads * headDim * capacity;
    this.keys = Array.from({ length: layers }, () => this.array(size));
    this.values = Array.from({ length: layers }, () => this.array(size));
    this.bias = new Float32Array(batch * capacity).fill(MASKED);
  }

  private array(size: number): CacheArray {
    return this.shape.half ? new Uint16Array(size) : new Float32Array(size);
  }

  /** Bytes per token and row. */
  static bytesPerToken(shape: CacheShape): number {
    return shape.layers * 2 * shape.kvHeads * shape.headDim * (shape.half ? 2 : 4);
  }

  /** Makes room for `extra` more slots. */
  reserve(extra: number): void {
    const needed = this.length + extra;
    if (needed <= this.capacity) return;
    const capacity = Math.ceil(needed / this.growStep) * this.growStep;
    this.rebuild(
      Array.from({ length: this.batch }, (_, r) => r),
      capacity,
    );
  }

  /** Keeps rows in the given order (an index may repeat: one prompt's cache shared by n samples). */
  selectRows(rows: number[]): void {
    this.rebuild(rows, this.capacity);
  }

  private rebuild(rows: number[], capacity: number): void {
    const { kvHeads, headDim } = this.shape;
    const oldCap = this.capacity;
    const keep = this.length;
    const batch = rows.length;
    this.keys = this.keys.map((old) => {
      const next = this.array(batch * kvHeads * headDim * capacity);
      rows.forEach((from, to) => {
        for (let h = 0; h < kvHeads; h++) {
          for (let d = 0; d < headDim; d++) {
            const src = ((from * kvHeads + h) * headDim + d) * oldCap;
            next.set(old.subarray(src, src + keep), ((to * kvHeads + h) * headDim + d) * capacity);
          }
        }
      });
      return next;
    });
    this.values = this.values.map((old) => {
      const next = this.array(batch * kvHeads * capacity * headDim);
      rows.forEach((from, to) => {
        for (let h = 0; h < kvHeads; h++) {
          const src = (from * kvHeads + h) * oldCap * headDim;
          next.set(old.subarray(src, src + keep * headDim), (to * kvHeads + h) * capacity * headDim);
        }
      });
      return next;
    });
    const bias = new Float32Array(batch * capacity).fill(MASKED);
    rows.forEach((from, to) => bias.set(this.bias.subarray(from * oldCap, from * oldCap + keep), to * capacity));
    this.bias = bias;
    this.batch = batch;
    this.capacity = capacity;
    this.version++;
  }

  /** Masks slots [from, to) of one row again (rejected speculative tokens). */
  maskSlots(row: number, from: number, to: number): void {
    if (to > from) this.bias.fill(MASKED, row * this.capacity + from, row * this.capacity + to);
  }

  /**
   * Stores the new tokens' K and V (graph outputs [batch, kvHeads, seq, headDim], of the cache's type) at slots
   * length..length+seq-1; `real[row * seq + s]` says whether that token is real (not padding).
   */
  append(newKeys: CacheArray[], newValues: CacheArray[], seq: number, real: Uint8Array): void {
    const { kvHeads, headDim } = this.shape;
    const cap = this.capacity;
    const t0 = this.length;
    if (t0 + seq > cap) throw new Error('internal: KV cache append without reserve');
    const half = !!this.shape.half;
    if (newKeys.some((k) => k instanceof Uint16Array !== half))
      throw new Error(`internal: new K/V are not ${half ? 'float16' : 'float32'} like the cache`);
    for (let l = 0; l < this.keys.length; l++) {
      const K = this.keys[l];
      const V = this.values[l];
      const nk = newKeys[l];
      const nv = newValues[l];
      for (let b = 0; b < this.batch; b++) {
        for (let h = 0; h < kvHeads; h++) {
          const bh = b * kvHeads + h;
          for (let s = 0; s < seq; s++) {
            const src = (bh * seq + s) * headDim;
            const kBase = bh * headDim * cap + t0 + s;
            for (let d = 0; d < headDim; d++) K[kBase + d * cap] = nk[src + d];
            V.set(nv.subarray(src, src + headDim), (bh * cap + t0 + s) * headDim);
          }
        }
      }
    }
    for (let b = 0; b < this.batch; b++) {
      for (let s = 0; s < seq; s++) if (real[b * seq + s]) this.bias[b * cap + t0 + s] = 0;
    }
    this.length += seq;
  }
}
