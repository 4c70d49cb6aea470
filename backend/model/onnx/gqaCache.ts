// The KV cache of the GQA graph: per layer one K and one V buffer [rows, kv, capacity, head_dim] in
// memory V8 never moves, each wrapped once in an OrtValue that is both the layer's `past_key.L` input and
// its `present_key.L` output, so GroupQueryAttention appends the new tokens in place. Each row has its own
// length; GroupQueryAttention reads only a row's own length (seqlens_k), so rows of different lengths
// decode together without padding. The filled part of each row is moved onto huge pages as it grows
// (hugePages.ts).
import { collapseHugePages, HUGE_PAGE_BYTES, hugePageOffset, hugePagesAvailable } from './hugePages';
import { ElementType, nativeBuffer, type NativeValue, type OrtNative } from './ortNative';

export interface GqaCacheShape {
  layers: number;
  kvHeads: number;
  headDim: number;
  /** int8 cache (kvInt8.ts: GroupQueryAttention quantizes and dequantizes it with per-channel scales). */
  int8?: boolean;
}

export type GqaCacheArray = Float32Array | Int8Array;

export class GqaCache {
  keys: GqaCacheArray[] = [];
  values: GqaCacheArray[] = [];
  /** Cached tokens per row. */
  lengths: number[];
  /** Per row, the length up to which its filled blocks were last collapsed into huge pages. */
  private collapsedTo: number[];
  private hugePages = true;
  private batchValues?: { rows: number; k: NativeValue[]; v: NativeValue[] };

  constructor(
    private readonly ort: OrtNative,
    readonly shape: GqaCacheShape,
    public rows: number,
    public capacity: number,
  ) {
    this.lengths = new Array<number>(rows).fill(0);
    this.collapsedTo = new Array<number>(rows).fill(0);
    this.capacity = this.roundCapacity(capacity);
    this.allocate();
  }

  private get elementType(): ElementType {
    return this.shape.int8 ? ElementType.INT8 : ElementType.FLOAT;
  }

  /** Bytes per token and row (every layer's K and V). */
  static bytesPerToken(shape: GqaCacheShape): number {
    return shape.layers * 2 * shape.kvHeads * shape.headDim * (shape.int8 ? 1 : 4);
  }

  private get block(): number {
    return this.shape.kvHeads * this.capacity * this.shape.headDim;
  }

  /** Tokens of one head's slots that fill one huge page. */
  private get hugeBlockTokens(): number {
    return HUGE_PAGE_BYTES / (this.shape.headDim * (this.shape.int8 ? 1 : 4));
  }

  /**
   * Whether each head region starts on a huge-page boundary, so that every 2 MiB a row fills can become one
   * huge page: for caches of at least one huge page per head, where huge pages are available. The capacity
   * is then a whole number of huge pages per head (slots never written cost no memory).
   */
  private alignsToHugePages(capacity: number): boolean {
    return this.hugePages && capacity >= this.hugeBlockTokens && hugePagesAvailable();
  }

  private roundCapacity(capacity: number): number {
    if (!this.alignsToHugePages(capacity)) return capacity;
    return Math.ceil(capacity / this.hugeBlockTokens) * this.hugeBlockTokens;
  }

  private allocate(): void {
    // Zero-filled lazily by the OS: pages of slots never written take no memory.
    const n = this.rows * this.block;
    const bytes = n * (this.shape.int8 ? 1 : 4);
    const aligned = this.alignsToHugePages(this.capacity);
    const make = (): GqaCacheArray => {
      if (!aligned)
        return this.shape.int8
          ? nativeBuffer((b) => new Int8Array(b, 0, n), n)
          : nativeBuffer((b) => new Float32Array(b, 0, n), bytes);
      // A huge page more than needed, viewed from its first huge-page boundary on.
      const buffer = new ArrayBuffer(bytes + HUGE_PAGE_BYTES);
      const at = hugePageOffset(buffer);
      return this.shape.int8 ? new Int8Array(buffer, at, n) : new Float32Array(buffer, at, n);
    };
    this.keys = [];
    this.values = [];
    this.collapsedTo = new Array<number>(this.rows).fill(0);
    for (let l = 0; l < this.shape.layers; l++) {
      this.keys.push(make());
      this.values.push(make());
    }
  }

  /** The cache of all rows as OrtValues (made once per row count and capacity). */
  batch(): { k: NativeValue[]; v: NativeValue[] } {
    if (this.batchValues?.rows === this.rows) return this.batchValues;
    this.releaseValues();
    const dims = [this.rows, this.shape.kvHeads, this.capacity, this.shape.headDim];
    const n = this.rows * this.block;
    this.batchValues = {
      rows: this.rows,
      k: this.keys.map((a) => this.ort.tensor(this.elementType, a.subarray(0, n), dims)),
      v: this.values.map((a) => this.ort.tensor(this.elementType, a.subarray(0, n), dims)),
    };
    return this.batchValues;
  }

  /** One row's cache as a batch of one (for prefill: onnxruntime's GQA takes several new tokens in a batch of one only). */
  row(r: number): { k: NativeValue[]; v: NativeValue[]; release(): void } {
    const dims = [1, this.shape.kvHeads, this.capacity, this.shape.headDim];
    const at = r * this.block;
    const k = this.keys.map((a) => this.ort.tensor(this.elementType, a.subarray(at, at + this.block), dims));
    const v = this.values.map((a) => this.ort.tensor(this.elementType, a.subarray(at, at + this.block), dims));
    return { k, v, release: () => [...k, ...v].forEach((x) => x.release()) };
  }

  /** Room for `extra` more tokens in every row: a larger buffer, rows copied head by head (their filled slots only). */
  reserve(extra: number, step = 256): void {
    const needed = Math.max(...this.lengths) + extra;
    if (needed <= this.capacity) return;
    const capacity = this.roundCapacity(Math.max(needed, Math.ceil((this.capacity * 1.5) / step) * step));
    const old = { keys: this.keys, values: this.values, capacity: this.capacity };
    this.capacity = capacity;
    this.releaseValues();
    this.allocate();
    const { kvHeads, headDim } = this.shape;
    for (let l = 0; l < this.shape.layers; l++) {
      for (const [from, to] of [
        [old.keys[l], this.keys[l]],
        [old.values[l], this.values[l]],
      ] as [GqaCacheArray, GqaCacheArray][]) {
        for (let r = 0; r < this.rows; r++) {
          const len = this.lengths[r] * headDim;
          for (let h = 0; h < kvHeads; h++) {
            const src = (r * kvHeads + h) * old.capacity * headDim;
            to.set(from.subarray(src, src + len), (r * kvHeads + h) * capacity * headDim);
          }
        }
      }
    }
  }

  /**
   * Row i becomes a copy of row `from[i]` (filled slots only); the row count becomes from.length (at most
   * rows). Copies run in order, so a source must not be overwritten earlier in the list: compaction
   * (sources increasing, each at or after its target) and copies of rows that are no target both qualify.
   */
  selectRows(from: number[]): void {
    if (from.length > this.rows) throw new Error('internal: GqaCache.selectRows cannot add rows');
    from.forEach((src, dst) => {
      if (from.slice(0, dst).some((s, j) => j === src && s !== src))
        throw new Error('internal: GqaCache.selectRows would read a row it already overwrote');
    });
    const { kvHeads, headDim } = this.shape;
    const P = this.capacity;
    const lengths = from.map((r) => this.lengths[r]);
    from.forEach((src, dst) => {
      if (src === dst) return;
      const len = this.lengths[src] * headDim;
      for (const buffers of [this.keys, this.values])
        for (const a of buffers)
          for (let h = 0; h < kvHeads; h++) {
            const at = (src * kvHeads + h) * P * headDim;
            a.copyWithin((dst * kvHeads + h) * P * headDim, at, at + len);
          }
    });
    this.lengths = lengths;
    this.collapsedTo = from.map((src, dst) => (src === dst ? this.collapsedTo[src] : 0));
    if (from.length !== this.rows) {
      this.rows = from.length;
      this.releaseValues();
    }
  }

  /**
   * Huge pages under what each row has filled (hugePages.ts): asked whenever a row has grown by another
   * 2 MiB per head region since the last time (every 4,096 tokens of a float cache), from the block that
   * straddled the last watermark. Writes no data; costs a copy of those blocks once (the kernel's).
   */
  collapseFilled(): void {
    if (!this.hugePages) return;
    const { kvHeads, headDim } = this.shape;
    const tokenBytes = headDim * (this.shape.int8 ? 1 : 4);
    const blockTokens = HUGE_PAGE_BYTES / tokenBytes;
    for (let r = 0; r < this.rows; r++) {
      const done = this.collapsedTo[r];
      const length = this.lengths[r];
      if (length - done < blockTokens) continue;
      const from = Math.max(0, done - blockTokens) * tokenBytes;
      const to = length * tokenBytes;
      for (const a of [...this.keys, ...this.values])
        for (let h = 0; h < kvHeads; h++) {
          const region = (r * kvHeads + h) * this.capacity * tokenBytes;
          if (!collapseHugePages(a, region + from, region + to)) {
            this.hugePages = false;
            return;
          }
        }
      this.collapsedTo[r] = length;
    }
  }

  private releaseValues(): void {
    if (!this.batchValues) return;
    for (const x of [...this.batchValues.k, ...this.batchValues.v]) x.release();
    this.batchValues = undefined;
  }

  release(): void {
    this.releaseValues();
    this.keys = [];
    this.values = [];
  }
}
