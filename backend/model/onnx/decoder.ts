// Batched decoding over the split-cache graph: left-padded prefill in chunks, one prompt's cache
// shared by its n samples, then one token per row per step until EOS, the token limit, a stop asked
// for by the caller, or cancellation. Finished rows are dropped from the batch.
import * as ort from 'onnxruntime-node';
import { KvCache, MASKED } from './kvCache';
import { io } from './qwen3Graph';
import type { Qwen3Shape } from './qwen3Config';
import { rowRandom, sampleToken } from './sampler';
import type { FinishReason } from '../engine';

export interface DecodeRequest {
  prompts: number[][];
  maxTokens: number;
  temperature: number;
  topP: number;
  seed: number;
  eosIds: number[];
  /** Only ids below this are sampled (the tokenizer's size; model vocabularies are padded). */
  vocabLimit?: number;
}

export interface DecodeControl {
  /** After each step: the token produced by each row still running (rows are request indices). */
  onTokens(rows: number[], tokens: number[]): void;
  /** The caller's own stop (a stop string matched): the row is finished with reason 'stop'. */
  isStopped(row: number): boolean;
  isCancelled(): boolean;
}

export interface RowResult {
  tokens: number;
  finishReason: FinishReason;
}

/** The cache plus each row's next position. */
export interface BatchState {
  cache: KvCache;
  nextPosition: number[];
}

export interface DecoderOptions {
  prefillChunk?: number;
  growStep?: number;
  padId?: number;
}

type Feeds = Record<string, ort.Tensor>;

export class Decoder {
  readonly prefillChunk: number;
  readonly growStep: number;
  readonly padId: number;
  private cacheFeeds?: { version: number; cache: KvCache; feeds: Feeds };

  constructor(readonly session: ort.InferenceSession, readonly shape: Qwen3Shape, options: DecoderOptions = {}) {
    if (!session.inputNames.includes(io.pastBias)) {
      throw new Error('onnx/model.onnx is not in the split-cache layout this engine needs (an Optimum / transformers.js export?); convert the checkpoint with `kimina model pull` (convertCheckpoint)');
    }
    this.prefillChunk = options.prefillChunk ?? 256;
    this.growStep = options.growStep ?? 128;
    this.padId = options.padId ?? 0;
  }

  newState(batch: number): BatchState {
    const cache = new KvCache({ layers: this.shape.layers, kvHeads: this.shape.kvHeads, headDim: this.shape.headDim }, batch, this.growStep, this.growStep);
    return { cache, nextPosition: new Array(batch).fill(0) };
  }

  private tensorsFor(cache: KvCache): Feeds {
    if (this.cacheFeeds && this.cacheFeeds.cache === cache && this.cacheFeeds.version === cache.version) return this.cacheFeeds.feeds;
    const { kvHeads, headDim } = this.shape;
    const B = cache.batch;
    const P = cache.capacity;
    const feeds: Feeds = { [io.pastBias]: new ort.Tensor('float32', cache.bias, [B, P]) };
    for (let l = 0; l < this.shape.layers; l++) {
      feeds[io.pastKey(l)] = new ort.Tensor('float32', cache.keys[l], [B, kvHeads, 1, headDim, P]);
      feeds[io.pastValue(l)] = new ort.Tensor('float32', cache.values[l], [B, kvHeads, 1, P, headDim]);
    }
    this.cacheFeeds = { version: cache.version, cache, feeds };
    return feeds;
  }

  /**
   * Runs the graph on one equal-length slice per row (null = left padding) and stores the new K/V.
   * Returns the logits of each row's last position, [batch * vocab].
   */
  async feed(state: BatchState, rows: (number | null)[][]): Promise<Float32Array> {
    const B = rows.length;
    const S = rows[0]?.length ?? 0;
    if (B !== state.cache.batch) throw new Error(`internal: feed of ${B} rows into a batch of ${state.cache.batch}`);
    if (S === 0 || rows.some((r) => r.length !== S)) throw new Error('internal: feed rows must be non-empty and of equal length');
    state.cache.reserve(S);
    const ids = new BigInt64Array(B * S);
    const positions = new BigInt64Array(B * S);
    const real = new Uint8Array(B * S);
    const newBias = new Float32Array(B * S * S).fill(MASKED);
    for (let b = 0; b < B; b++) {
      for (let s = 0; s < S; s++) {
        const token = rows[b][s];
        if (token === null) {
          ids[b * S + s] = BigInt(this.padId);
          continue;
        }
        ids[b * S + s] = BigInt(token);
        positions[b * S + s] = BigInt(state.nextPosition[b]++);
        real[b * S + s] = 1;
      }
      for (let q = 0; q < S; q++) {
        for (let k = 0; k <= q; k++) if (real[b * S + k]) newBias[(b * S + q) * S + k] = 0;
      }
    }
    const feeds: Feeds = {
      ...this.tensorsFor(state.cache),
      [io.inputIds]: new ort.Tensor('int64', ids, [B, S]),
      [io.positionIds]: new ort.Tensor('int64', positions, [B, S]),
      [io.newBias]: new ort.Tensor('float32', newBias, [B, S, S]),
    };
    const out = await this.session.run(feeds);
    const keys: Float32Array[] = [];
    const values: Float32Array[] = [];
    for (let l = 0; l < this.shape.layers; l++) {
      keys.push(out[io.newKey(l)].data as Float32Array);
      values.push(out[io.newValue(l)].data as Float32Array);
    }
    state.cache.append(keys, values, S, real);
    return out[io.logits].data as Float32Array;
  }

  /**
   * Prefills left-padded prompts in chunks; returns the last position's logits per row, or undefined
   * when `isCancelled` turned true between chunks.
   */
  async prefill(state: BatchState, prompts: number[][], isCancelled: () => boolean = () => false): Promise<Float32Array | undefined> {
    const longest = Math.max(...prompts.map((p) => p.length));
    if (longest === 0) throw new Error('cannot generate from an empty prompt');
    const padded = prompts.map((p) => [...new Array<null>(longest - p.length).fill(null), ...p]);
    let logits: Float32Array = new Float32Array(0);
    for (let at = 0; at < longest; at += this.prefillChunk) {
      if (isCancelled()) return undefined;
      logits = await this.feed(state, padded.map((r) => r.slice(at, at + this.prefillChunk)));
    }
    return logits;
  }

  async decode(req: DecodeRequest, control: DecodeControl): Promise<RowResult[]> {
    const V = this.shape.vocabSize;
    const results: RowResult[] = req.prompts.map(() => ({ tokens: 0, finishReason: 'length' }));
    for (const p of req.prompts) {
      if (p.length >= this.shape.maxPositions) throw new Error(`prompt of ${p.length} tokens exceeds the model's ${this.shape.maxPositions} positions`);
    }
    if (req.prompts.length === 0) return results;
    // Identical prompts (n samples of one conversation) are prefilled once.
    const unique: number[][] = [];
    const keyToUnique = new Map<string, number>();
    const rowToUnique = req.prompts.map((p) => {
      const key = p.join(',');
      let u = keyToUnique.get(key);
      if (u === undefined) {
        u = unique.length;
        unique.push(p);
        keyToUnique.set(key, u);
      }
      return u;
    });
    const state = this.newState(unique.length);
    const prefillLogits = await this.prefill(state, unique, () => control.isCancelled());
    if (!prefillLogits) {
      for (const r of results) r.finishReason = 'cancelled';
      return results;
    }
    state.cache.selectRows(rowToUnique);
    state.nextPosition = rowToUnique.map((u) => state.nextPosition[u]);
    let logits: Float32Array = new Float32Array(req.prompts.length * V);
    rowToUnique.forEach((u, row) => logits.set(prefillLogits.subarray(u * V, (u + 1) * V), row * V));

    const randoms = req.prompts.map((_, row) => rowRandom(req.seed, row));
    const limit = Math.min(V, req.vocabLimit ?? V);
    const eos = new Set(req.eosIds);
    let active = req.prompts.map((_, row) => row); // request row of each batch row
    while (active.length > 0) {
      if (control.isCancelled()) {
        for (const row of active) results[row].finishReason = 'cancelled';
        break;
      }
      const next: number[] = [];
      const emitted: number[] = [];
      const emittedRows: number[] = [];
      const keep: number[] = [];
      active.forEach((row, b) => {
        const token = sampleToken(logits.subarray(b * V, b * V + limit), req.temperature, req.topP, randoms[row]);
        if (eos.has(token)) {
          results[row].finishReason = 'stop';
          return;
        }
        results[row].tokens++;
        emitted.push(token);
        emittedRows.push(row);
        if (results[row].tokens >= req.maxTokens || state.nextPosition[b] + 1 >= this.shape.maxPositions) {
          results[row].finishReason = 'length';
          return;
        }
        keep.push(b);
        next.push(token);
      });
      if (emitted.length > 0) control.onTokens(emittedRows, emitted);
      // Rows the caller stopped (stop strings) leave the batch too.
      const still = keep.filter((b) => {
        const row = active[b];
        if (control.isStopped(row)) {
          results[row].finishReason = 'stop';
          return false;
        }
        return true;
      });
      if (still.length === 0) break;
      if (still.length < active.length) {
        state.cache.selectRows(still);
        state.nextPosition = still.map((b) => state.nextPosition[b]);
      }
      const tokens = still.map((b) => next[keep.indexOf(b)]);
      active = still.map((b) => active[b]);
      logits = await this.feed(state, tokens.map((t) => [t]));
    }
    return results;
  }
}
