// Decoding over the GQA graph (onnx/model.gqa.onnx) through onnxruntime's C API: the cache is appended
// in place by GroupQueryAttention (gqaCache.ts), the logits are written into a buffer we own, nothing is
// copied per step. The same DecodeRequest / DecodeControl / RowResult as the split-cache Decoder, and
// the same prompts, sampling, EOS, limits, stops and cancellation.
//
// Differences from the split-cache Decoder: each distinct prompt is prefilled alone (onnxruntime's
// GroupQueryAttention takes several new tokens only in a batch of one) and copied to the rows that
// share it; rows of different lengths then decode together, each at its own length (no padding);
// speculation is not used (requests that ask for it decode without it: the greedy output is the same,
// the sampled distribution too).
import type { FinishReason } from '../engine';
import type { DecodeControl, DecodeRequest, DecodeStats, RowResult } from './decoder';
import { GqaCache } from './gqaCache';
import { ElementType, nativeBuffer, type NativeSession, type NativeValue, type OrtNative } from './ortNative';
import { io } from './qwen3Graph';
import type { Qwen3Shape } from './qwen3Config';
import { rowRandom, sampleToken } from './sampler';

export interface GqaDecoderOptions {
  prefillChunk?: number;
  /** The graph's cache is int8 (onnx/model.gqa8.onnx, kvInt8.ts). */
  int8?: boolean;
}

/** A cache and the rows it holds (the low-level API the parity suite drives like Decoder's). */
export interface GqaState {
  cache: GqaCache;
}

export class GqaDecoder {
  readonly prefillChunk: number;
  readonly int8: boolean;
  /** Whether the graph takes position ids (RoPE outside GroupQueryAttention, for head sizes it cannot rotate). */
  readonly positionIds: boolean;
  lastStats: DecodeStats = { steps: 0, drafted: 0, accepted: 0 };
  private logitsBuffers = new Map<number, { data: Float32Array; value: NativeValue }>();

  constructor(
    private readonly ort: OrtNative,
    readonly session: NativeSession,
    readonly shape: Qwen3Shape,
    options: GqaDecoderOptions = {},
  ) {
    for (const name of [io.seqlensK, io.totalSequenceLength, io.pastKey(0)])
      if (!session.inputNames.includes(name)) throw new Error(`not a GQA graph: no input ${name}`);
    this.prefillChunk = options.prefillChunk ?? 256;
    this.int8 = options.int8 ?? false;
    this.positionIds = session.inputNames.includes(io.positionIds);
  }

  newState(rows: number, capacity = 256): GqaState {
    return {
      cache: new GqaCache(
        this.ort,
        { layers: this.shape.layers, kvHeads: this.shape.kvHeads, headDim: this.shape.headDim, int8: this.int8 },
        rows,
        Math.min(capacity, this.shape.maxPositions),
      ),
    };
  }

  private logitsFor(rows: number): { data: Float32Array; value: NativeValue } {
    let b = this.logitsBuffers.get(rows);
    if (!b) {
      const n = rows * this.shape.vocabSize;
      const data = nativeBuffer((buf) => new Float32Array(buf, 0, n), n * 4);
      b = { data, value: this.ort.tensor(ElementType.FLOAT, data, [rows, 1, this.shape.vocabSize]) };
      this.logitsBuffers.set(rows, b);
    }
    return b;
  }

  /**
   * One forward pass: `tokens[r]` are row r's new tokens (the same count for every row; more than one only
   * in a batch of one, or `row` set: then only that row of the cache is fed). Returns the logits of each
   * row's last new token, [rows, vocab] (a view reused by the next call: copy what you keep).
   */
  run(state: GqaState, tokens: number[][], row?: number): Float32Array {
    const cache = state.cache;
    const B = tokens.length;
    const S = tokens[0].length;
    if (row === undefined && B !== cache.rows) throw new Error(`internal: ${B} rows fed to a cache of ${cache.rows}`);
    if (S > 1 && B > 1) throw new Error('internal: several new tokens only in a batch of one');
    const lengths = row === undefined ? cache.lengths : [cache.lengths[row]];
    const total = Math.max(...lengths) + S;
    if (total > this.shape.maxPositions)
      throw new Error(`internal: ${total} positions exceed the model's ${this.shape.maxPositions}`);
    cache.reserve(S);
    const ids = nativeBuffer((b) => new BigInt64Array(b, 0, B * S), B * S * 8);
    const seqlens = nativeBuffer((b) => new Int32Array(b, 0, B), B * 4);
    const totalLen = nativeBuffer((b) => new Int32Array(b, 0, 1), 4);
    const positions = this.positionIds ? nativeBuffer((b) => new BigInt64Array(b, 0, B * S), B * S * 8) : undefined;
    for (let b = 0; b < B; b++) {
      for (let s = 0; s < S; s++) {
        ids[b * S + s] = BigInt(tokens[b][s]);
        if (positions) positions[b * S + s] = BigInt(lengths[b] + s);
      }
      seqlens[b] = lengths[b] + S - 1;
    }
    totalLen[0] = total;
    const made: NativeValue[] = [];
    const value = (type: ElementType, data: BigInt64Array | Int32Array, dims: number[]) => {
      const v = this.ort.tensor(type, data, dims);
      made.push(v);
      return v;
    };
    const kv: { k: NativeValue[]; v: NativeValue[]; release?: () => void } =
      row === undefined ? cache.batch() : cache.row(row);
    const logits = this.logitsFor(B);
    try {
      const inputs = new Map<string, NativeValue>([
        [io.inputIds, value(ElementType.INT64, ids, [B, S])],
        [io.seqlensK, value(ElementType.INT32, seqlens, [B])],
        [io.totalSequenceLength, value(ElementType.INT32, totalLen, [1])],
      ]);
      if (positions) inputs.set(io.positionIds, value(ElementType.INT64, positions, [B, S]));
      const outputs = new Map<string, NativeValue>([[io.logits, logits.value]]);
      for (let l = 0; l < this.shape.layers; l++) {
        inputs.set(io.pastKey(l), kv.k[l]);
        inputs.set(io.pastValue(l), kv.v[l]);
        outputs.set(io.presentKey(l), kv.k[l]);
        outputs.set(io.presentValue(l), kv.v[l]);
      }
      this.session.run(inputs, outputs);
    } finally {
      made.forEach((v) => v.release());
      kv.release?.();
    }
    if (row === undefined) for (let b = 0; b < B; b++) cache.lengths[b] += S;
    else cache.lengths[row] += S;
    cache.collapseFilled();
    return logits.data;
  }

  /** Decoder-compatible: feeds equal-length slices per row, returns [rows, vocab] logits of the last position (a copy). */
  async feed(state: GqaState, rows: number[][]): Promise<Float32Array> {
    if (rows[0].length > 1 && rows.length > 1) {
      const V = this.shape.vocabSize;
      const out = new Float32Array(rows.length * V);
      rows.forEach((r, i) => out.set(this.run(state, [r], i).subarray(0, V), i * V));
      return out;
    }
    return this.run(state, rows).slice();
  }

  /** Prefills one prompt per row (row by row, in chunks); returns each row's last logits (a copy). */
  async prefill(
    state: GqaState,
    prompts: number[][],
    isCancelled: () => boolean = () => false,
  ): Promise<Float32Array | undefined> {
    const V = this.shape.vocabSize;
    const out = new Float32Array(prompts.length * V);
    for (const [r, prompt] of prompts.entries()) {
      if (prompt.length === 0) throw new Error('cannot generate from an empty prompt');
      state.cache.reserve(prompt.length);
      for (let at = 0; at < prompt.length; at += this.prefillChunk) {
        if (isCancelled()) return undefined;
        const logits = this.run(state, [prompt.slice(at, at + this.prefillChunk)], r);
        if (at + this.prefillChunk >= prompt.length) out.set(logits.subarray(0, V), r * V);
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
    }
    return out;
  }

  async decode(req: DecodeRequest, control: DecodeControl): Promise<RowResult[]> {
    const V = this.shape.vocabSize;
    const results: RowResult[] = req.prompts.map(() => ({ tokens: 0, finishReason: 'length' as FinishReason }));
    for (const p of req.prompts) {
      if (p.length >= this.shape.maxPositions)
        throw new Error(`prompt of ${p.length} tokens exceeds the model's ${this.shape.maxPositions} positions`);
      if (p.length === 0) throw new Error('cannot generate from an empty prompt');
    }
    const stats: DecodeStats = { steps: 0, drafted: 0, accepted: 0 };
    this.lastStats = stats;
    if (req.prompts.length === 0) return results;
    // Identical prompts (n samples of one conversation) are prefilled once, into the first row that has it.
    const firstRow = new Map<string, number>();
    const source = req.prompts.map((p, row) => {
      const key = p.join(',');
      if (!firstRow.has(key)) firstRow.set(key, row);
      return firstRow.get(key)!;
    });
    // Every slot the request can reach, allocated once (untouched pages cost no memory): no copy to grow.
    const longest = Math.max(...req.prompts.map((p) => p.length));
    const state = this.newState(req.prompts.length, Math.min(this.shape.maxPositions, longest + req.maxTokens + 1));
    try {
      let logits: Float32Array = new Float32Array(req.prompts.length * V);
      for (const [row, prompt] of req.prompts.entries()) {
        if (source[row] !== row) continue;
        const last = await this.prefill1(state, row, prompt, () => control.isCancelled());
        if (!last) {
          for (const r of results) r.finishReason = 'cancelled';
          return results;
        }
        logits.set(last, row * V);
      }
      source.forEach((src, row) => {
        if (src !== row) logits.copyWithin(row * V, src * V, (src + 1) * V);
      });
      state.cache.selectRows(source);

      const randoms = req.prompts.map((_, row) => rowRandom(req.seed, row));
      const limit = Math.min(V, req.vocabLimit ?? V);
      const eos = new Set(req.eosIds);
      let active = req.prompts.map((_, row) => row); // request row of each cache row
      for (;;) {
        if (control.isCancelled()) {
          for (const row of active) results[row].finishReason = 'cancelled';
          break;
        }
        const tokens: number[] = [];
        const still: number[] = [];
        const emitted: { rows: number[]; tokens: number[] } = { rows: [], tokens: [] };
        active.forEach((row, b) => {
          const token = sampleToken(logits.subarray(b * V, b * V + limit), req.temperature, req.topP, randoms[row]);
          if (eos.has(token)) {
            results[row].finishReason = 'stop';
            return;
          }
          results[row].tokens++;
          emitted.rows.push(row);
          emitted.tokens.push(token);
          if (results[row].tokens >= req.maxTokens) return; // 'length'
          if (state.cache.lengths[b] + 1 >= this.shape.maxPositions) return; // 'length'
          still.push(b);
          tokens.push(token);
        });
        if (emitted.rows.length > 0) control.onTokens(emitted.rows, emitted.tokens);
        const running = still.filter((b) => {
          if (!control.isStopped(active[b])) return true;
          results[active[b]].finishReason = 'stop';
          return false;
        });
        if (running.length === 0) break;
        const fed = running.map((b) => tokens[still.indexOf(b)]);
        if (running.length < active.length) {
          state.cache.selectRows(running);
          active = running.map((b) => active[b]);
        }
        logits = this.run(
          state,
          fed.map((t) => [t]),
        );
        stats.steps++;
        // Let the worker's message loop deliver stops and cancellation between steps.
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      return results;
    } finally {
      state.cache.release();
    }
  }

  /** One prompt into one row of a multi-row state: its last logits (a copy), or undefined when cancelled. */
  private async prefill1(
    state: GqaState,
    row: number,
    prompt: number[],
    isCancelled: () => boolean,
  ): Promise<Float32Array | undefined> {
    const V = this.shape.vocabSize;
    let last: Float32Array | undefined;
    for (let at = 0; at < prompt.length; at += this.prefillChunk) {
      if (isCancelled()) return undefined;
      last = this.run(state, [prompt.slice(at, at + this.prefillChunk)], row).slice(0, V);
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    return last;
  }

  /**
   * Milliseconds of one decode step of `rows` rows holding `cachedPerRow` tokens each (the calibration's
   * probe, schedule.ts). Every page of those slots is written first: never-written pages all map to one
   * zero page the CPU keeps in cache, which would make the cache look free to read.
   */
  timeStep(rows: number, cachedPerRow: number): number {
    const state = this.newState(rows, cachedPerRow + 2);
    try {
      const step = 4096 / state.cache.keys[0].BYTES_PER_ELEMENT;
      for (const a of [...state.cache.keys, ...state.cache.values]) for (let i = 0; i < a.length; i += step) a[i] = 1;
      state.cache.lengths.fill(cachedPerRow);
      const tokens = Array.from({ length: rows }, (_, r) => [(r * 7919 + 13) % this.shape.vocabSize]);
      this.run(state, tokens); // warm-up
      const t = performance.now();
      this.run(state, tokens);
      return performance.now() - t;
    } finally {
      state.cache.release();
    }
  }

  async close(): Promise<void> {
    for (const b of this.logitsBuffers.values()) b.value.release();
    this.logitsBuffers.clear();
    this.session.release();
  }
}
