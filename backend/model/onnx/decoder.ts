// Batched decoding over the split-cache graph: left-padded prefill in chunks, one prompt's cache
// shared by its n samples, then one token per row per step until EOS, the token limit, a stop asked
// for by the caller, or cancellation. Finished rows are dropped from the batch.
import * as ort from 'onnxruntime-node';
import { KvCache, MASKED, type CacheArray } from './kvCache';
import { io } from './qwen3Graph';
import type { Qwen3Shape } from './qwen3Config';
import { rowRandom, sampleToken, verifyDraft, type ScoreKind } from './sampler';
import { PromptLookup } from './promptLookup';
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
  /** Speculative decoding by prompt lookup; off when absent (see SpeculationOptions). */
  speculation?: SpeculationOptions;
}

/**
 * Prompt-lookup speculative decoding: up to `maxDraft` tokens drafted from n-gram matches in the
 * row's context are verified in one forward pass. Greedy output is unchanged; sampled output has the
 * same distribution (speculative sampling with a point-mass draft), though not the same draws for a
 * seed as without speculation.
 */
export interface SpeculationOptions {
  maxDraft: number;
  ngramMax?: number;
  ngramMin?: number;
  /** Draft only while at most this many rows decode together (default: any). */
  maxRows?: number;
}

/** Counters of one decode call (speculation's drafted and accepted tokens, forward passes). */
export interface DecodeStats {
  steps: number;
  drafted: number;
  accepted: number;
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

/**
 * The cache plus each row's next position. `shared`: one copy (a batch-1 cache) of a prefix every row
 * continues (the prompt of n samples), read once per step for all rows; `cache` then holds each row's
 * own tokens after it (graphs with shared-prefix inputs only).
 */
export interface BatchState {
  cache: KvCache;
  nextPosition: number[];
  shared?: KvCache;
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
  private cacheFeeds?: { version: number; cache: KvCache; shared?: KvCache; sharedVersion: number; feeds: Feeds };
  /** Whether the graph has the shared-prefix inputs (shared_key.L, shared_value.L, shared_bias). */
  readonly sharedPrefix: boolean;
  /** Whether the graph returns logits for several trailing positions (logits_count input). */
  readonly multiLogits: boolean;
  /** Whether the graph also computes the softmax at a temperature (inv_temperature input, probs output). */
  readonly graphSoftmax: boolean;
  private readonly kvOutputs: string[];
  /** Whether the graph takes and returns the KV cache in float16 (onnx/model.kv16.onnx). */
  readonly halfCache: boolean;
  /** Counters of the latest decode call. */
  lastStats: DecodeStats = { steps: 0, drafted: 0, accepted: 0 };

  constructor(
    readonly session: ort.InferenceSession,
    readonly shape: Qwen3Shape,
    options: DecoderOptions = {},
  ) {
    if (!session.inputNames.includes(io.pastBias)) {
      throw new Error(
        'onnx/model.onnx is not in the split-cache layout this engine needs (an Optimum / transformers.js export?); convert the checkpoint with `kimina model pull` (convertCheckpoint)',
      );
    }
    this.prefillChunk = options.prefillChunk ?? 256;
    this.growStep = options.growStep ?? 128;
    this.padId = options.padId ?? 0;
    this.multiLogits = session.inputNames.includes(io.logitsCount);
    this.sharedPrefix = session.inputNames.includes(io.sharedBias);
    this.graphSoftmax = session.inputNames.includes(io.invTemperature) && session.outputNames.includes(io.probs);
    const pastKey = session.inputMetadata?.find((m) => m.name === io.pastKey(0));
    this.halfCache = !!pastKey && pastKey.isTensor && pastKey.type === 'float16';
    this.kvOutputs = Array.from({ length: shape.layers }, (_, l) => [io.newKey(l), io.newValue(l)]).flat();
  }

  newState(batch: number): BatchState {
    const cache = new KvCache(
      { layers: this.shape.layers, kvHeads: this.shape.kvHeads, headDim: this.shape.headDim, half: this.halfCache },
      batch,
      this.growStep,
      this.growStep,
    );
    return { cache, nextPosition: new Array(batch).fill(0) };
  }

  /**
   * Starts rows that all continue the one prompt prefilled into `state` (a batch-1 state): that cache
   * becomes the shared prefix (not copied), and each of the `rows` rows gets an empty cache of its own.
   * Without shared-prefix inputs in the graph, the prompt's cache is copied into every row instead.
   */
  shareRows(state: BatchState, rows: number): void {
    if (state.cache.batch !== 1 || state.shared) throw new Error('internal: shareRows needs one unshared row');
    const position = state.nextPosition[0];
    if (!this.sharedPrefix) {
      state.cache.selectRows(new Array(rows).fill(0));
    } else {
      state.shared = state.cache;
      state.cache = this.newState(rows).cache;
    }
    state.nextPosition = new Array(rows).fill(position);
  }

  private tensorsFor(cache: KvCache, shared: KvCache | undefined): Feeds {
    const f = this.cacheFeeds;
    if (
      f &&
      f.cache === cache &&
      f.version === cache.version &&
      f.shared === shared &&
      f.sharedVersion === (shared?.version ?? -1)
    )
      return f.feeds;
    const { kvHeads, headDim } = this.shape;
    const B = cache.batch;
    const P = cache.capacity;
    const feeds: Feeds = { [io.pastBias]: new ort.Tensor('float32', cache.bias, [B, P]) };
    const type = this.halfCache ? 'float16' : 'float32';
    const empty = () => (this.halfCache ? new Uint16Array(0) : new Float32Array(0));
    // A batch-1 cache's [1, kv, 1, D, P] is the shared input's [kv, D, P] (and V's [kv, P, D]).
    const Ps = shared ? shared.capacity : 0;
    if (this.sharedPrefix)
      feeds[io.sharedBias] = new ort.Tensor('float32', shared?.bias ?? new Float32Array(0), [1, Ps]);
    for (let l = 0; l < this.shape.layers; l++) {
      feeds[io.pastKey(l)] = new ort.Tensor(type, cache.keys[l], [B, kvHeads, 1, headDim, P]);
      feeds[io.pastValue(l)] = new ort.Tensor(type, cache.values[l], [B, kvHeads, 1, P, headDim]);
      if (this.sharedPrefix) {
        feeds[io.sharedKey(l)] = new ort.Tensor(type, shared?.keys[l] ?? empty(), [kvHeads, headDim, Ps]);
        feeds[io.sharedValue(l)] = new ort.Tensor(type, shared?.values[l] ?? empty(), [kvHeads, Ps, headDim]);
      }
    }
    this.cacheFeeds = { version: cache.version, cache, shared, sharedVersion: shared?.version ?? -1, feeds };
    return feeds;
  }

  /**
   * Runs the graph on one equal-length slice per row (null = padding: left padding of prompts, or
   * right padding of shorter drafts) and stores the new K/V. Returns the logits of each row's last
   * `logitsCount` positions, [batch, logitsCount, vocab].
   */
  async feed(state: BatchState, rows: (number | null)[][], logitsCount = 1): Promise<Float32Array> {
    return (await this.feedScores(state, rows, logitsCount, 0)).scores;
  }

  /**
   * `feed`, returning for temperature > 0 the softmax at that temperature computed in the graph
   * (`kind: 'probs'`) when the graph has it, else the logits.
   */
  async feedScores(
    state: BatchState,
    rows: (number | null)[][],
    logitsCount: number,
    temperature: number,
  ): Promise<{ scores: Float32Array; kind: ScoreKind }> {
    const B = rows.length;
    const S = rows[0]?.length ?? 0;
    if (B !== state.cache.batch) throw new Error(`internal: feed of ${B} rows into a batch of ${state.cache.batch}`);
    if (S === 0 || rows.some((r) => r.length !== S))
      throw new Error('internal: feed rows must be non-empty and of equal length');
    if (logitsCount < 1 || logitsCount > S) throw new Error(`internal: logits for ${logitsCount} of ${S} positions`);
    if (logitsCount > 1 && !this.multiLogits)
      throw new Error(
        "internal: this graph returns the last position's logits only (converted before logits_count existed)",
      );
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
      ...this.tensorsFor(state.cache, state.shared),
      [io.inputIds]: new ort.Tensor('int64', ids, [B, S]),
      [io.positionIds]: new ort.Tensor('int64', positions, [B, S]),
      [io.newBias]: new ort.Tensor('float32', newBias, [B, S, S]),
    };
    if (this.multiLogits) feeds[io.logitsCount] = new ort.Tensor('int64', BigInt64Array.of(BigInt(logitsCount)), [1]);
    const probs = temperature > 0 && this.graphSoftmax;
    if (this.graphSoftmax)
      feeds[io.invTemperature] = new ort.Tensor('float32', Float32Array.of(probs ? 1 / temperature : 1), [1]);
    // Only the scores the caller uses are fetched (every fetched output is copied by the binding).
    const out = this.graphSoftmax
      ? await this.session.run(feeds, [probs ? io.probs : io.logits, ...this.kvOutputs])
      : await this.session.run(feeds);
    const keys: CacheArray[] = [];
    const values: CacheArray[] = [];
    for (let l = 0; l < this.shape.layers; l++) {
      keys.push(out[io.newKey(l)].data as CacheArray);
      values.push(out[io.newValue(l)].data as CacheArray);
    }
    state.cache.append(keys, values, S, real);
    return probs
      ? { scores: out[io.probs].data as Float32Array, kind: 'probs' }
      : { scores: out[io.logits].data as Float32Array, kind: 'logits' };
  }

  /**
   * Prefills left-padded prompts in chunks; returns the last position's logits per row, or undefined
   * when `isCancelled` turned true between chunks.
   */
  async prefill(
    state: BatchState,
    prompts: number[][],
    isCancelled: () => boolean = () => false,
  ): Promise<Float32Array | undefined> {
    return (await this.prefillScores(state, prompts, isCancelled, 0))?.scores;
  }

  /** `prefill` whose last chunk returns the graph's softmax at `temperature` (> 0) when it has one. */
  async prefillScores(
    state: BatchState,
    prompts: number[][],
    isCancelled: () => boolean,
    temperature: number,
  ): Promise<{ scores: Float32Array; kind: ScoreKind } | undefined> {
    const longest = Math.max(...prompts.map((p) => p.length));
    if (longest === 0) throw new Error('cannot generate from an empty prompt');
    const padded = prompts.map((p) => [...new Array<null>(longest - p.length).fill(null), ...p]);
    // The whole prompt's slots at once: growing chunk by chunk would copy the cache every chunk.
    state.cache.reserve(longest);
    let out: { scores: Float32Array; kind: ScoreKind } = { scores: new Float32Array(0), kind: 'logits' };
    for (let at = 0; at < longest; at += this.prefillChunk) {
      if (isCancelled()) return undefined;
      const last = at + this.prefillChunk >= longest;
      out = await this.feedScores(
        state,
        padded.map((r) => r.slice(at, at + this.prefillChunk)),
        1,
        last ? temperature : 0,
      );
    }
    return out;
  }

  async decode(req: DecodeRequest, control: DecodeControl): Promise<RowResult[]> {
    const V = this.shape.vocabSize;
    const results: RowResult[] = req.prompts.map(() => ({ tokens: 0, finishReason: 'length' }));
    for (const p of req.prompts) {
      if (p.length >= this.shape.maxPositions)
        throw new Error(`prompt of ${p.length} tokens exceeds the model's ${this.shape.maxPositions} positions`);
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
    const prefilled = await this.prefillScores(state, unique, () => control.isCancelled(), req.temperature);
    if (!prefilled) {
      for (const r of results) r.finishReason = 'cancelled';
      return results;
    }
    if (unique.length === 1 && req.prompts.length > 1) {
      // One prompt (n samples of one proof, or of its fix turn): its cache is the rows' shared prefix.
      // A single row keeps its own cache: the shared path's extra operators cost it ~10% at 512 cached
      // (step-interleaved A/B, docs/onnx-engine.md), and there is nothing to share.
      this.shareRows(state, req.prompts.length);
    } else {
      state.cache.selectRows(rowToUnique);
      state.nextPosition = rowToUnique.map((u) => state.nextPosition[u]);
    }
    // Per row: logits, or the graph's softmax at the temperature when sampling (kind).
    let logits: Float32Array = new Float32Array(req.prompts.length * V);
    let kind = prefilled.kind;
    rowToUnique.forEach((u, row) => logits.set(prefilled.scores.subarray(u * V, (u + 1) * V), row * V));

    const randoms = req.prompts.map((_, row) => rowRandom(req.seed, row));
    const limit = Math.min(V, req.vocabLimit ?? V);
    const eos = new Set(req.eosIds);
    const spec = req.speculation && req.speculation.maxDraft > 0 && this.multiLogits ? req.speculation : undefined;
    // Each row's context (prompt, then every token produced) for drafting.
    const contexts = spec ? req.prompts.map((p) => [...p]) : [];
    const lookups = spec ? req.prompts.map(() => new PromptLookup(spec)) : [];
    const stats: DecodeStats = { steps: 0, drafted: 0, accepted: 0 };
    this.lastStats = stats;
    let active = req.prompts.map((_, row) => row); // request row of each batch row
    // Per batch row: the tokens fed in the last pass after the pending one (drafts), and how many
    // positions of logits each row has ([batch, S, V] with S = 1 + the longest draft).
    let drafts: number[][] = active.map(() => []);
    let S = 1;
    while (active.length > 0) {
      if (control.isCancelled()) {
        for (const row of active) results[row].finishReason = 'cancelled';
        break;
      }
      // Verify each row's drafts against its logits; produce the row's new tokens (accepted drafts,
      // then one sampled token) and how many of the fed positions stay in the cache.
      const produced: number[][] = [];
      const kept: number[] = [];
      const pending: (number | undefined)[] = [];
      active.forEach((row, b) => {
        const out: number[] = [];
        const base = b * S * V;
        let j = 0;
        for (; j < drafts[b].length; j++) {
          const at = base + j * V;
          const v = verifyDraft(
            logits.subarray(at, at + limit),
            drafts[b][j],
            req.temperature,
            req.topP,
            randoms[row],
            kind,
          );
          out.push(v.token);
          if (!v.accepted) break;
          stats.accepted++;
        }
        if (j === drafts[b].length) {
          const at = base + j * V;
          out.push(sampleToken(logits.subarray(at, at + limit), req.temperature, req.topP, randoms[row], kind));
        }
        kept.push(1 + Math.min(j, drafts[b].length));
        // Emit in order until the row ends (EOS, token limit, context); the last token stays pending.
        let last: number | undefined;
        for (const token of out) {
          if (eos.has(token)) {
            results[row].finishReason = 'stop';
            last = undefined;
            break;
          }
          results[row].tokens++;
          produced[b] ??= [];
          produced[b].push(token);
          last = token;
          if (results[row].tokens >= req.maxTokens) {
            results[row].finishReason = 'length';
            last = undefined;
            break;
          }
        }
        pending.push(last);
      });
      // Stream the new tokens: one call per token index (rows with fewer tokens drop out).
      const longest = Math.max(0, ...produced.map((p) => p?.length ?? 0));
      for (let i = 0; i < longest; i++) {
        const rows: number[] = [];
        const tokens: number[] = [];
        active.forEach((row, b) => {
          if (produced[b] && i < produced[b].length) {
            rows.push(row);
            tokens.push(produced[b][i]);
          }
        });
        control.onTokens(rows, tokens);
      }
      // Roll the cache back past rejected drafts: every row keeps its first kept[b] fed slots.
      if (S > 1) {
        const start = state.cache.length - S;
        const keep = Math.max(...kept);
        active.forEach((_, b) => {
          state.nextPosition[b] -= drafts[b].length + 1 - kept[b];
          state.cache.maskSlots(b, start + kept[b], start + S);
        });
        state.cache.length = start + keep;
      }
      // Rows that end here: EOS, limits, the model's context, or the caller's stop.
      const still: number[] = [];
      active.forEach((row, b) => {
        if (pending[b] === undefined) return;
        if (state.nextPosition[b] + 1 >= this.shape.maxPositions) {
          results[row].finishReason = 'length';
          return;
        }
        if (control.isStopped(row)) {
          results[row].finishReason = 'stop';
          return;
        }
        still.push(b);
      });
      if (still.length === 0) break;
      if (spec)
        active.forEach((row, b) => {
          if (produced[b]) contexts[row].push(...produced[b]);
        });
      if (still.length < active.length) {
        state.cache.selectRows(still);
        state.nextPosition = still.map((b) => state.nextPosition[b]);
      }
      const tokens = still.map((b) => pending[b]!);
      active = still.map((b) => active[b]);
      // Draft the next tokens after each row's pending token.
      drafts = active.map((row, b) => {
        if (!spec || active.length > (spec.maxRows ?? Infinity)) return [];
        const room = Math.min(
          req.maxTokens - results[row].tokens - 1,
          this.shape.maxPositions - state.nextPosition[b] - 2,
        );
        return lookups[row].draft(contexts[row], Math.min(spec.maxDraft, room));
      });
      S = 1 + Math.max(...drafts.map((d) => d.length));
      stats.drafted += drafts.reduce((a, d) => a + d.length, 0);
      stats.steps++;
      const fed = tokens.map((t, b) => [t, ...drafts[b], ...new Array<null>(S - 1 - drafts[b].length).fill(null)]);
      ({ scores: logits, kind } = await this.feedScores(state, fed, S, req.temperature));
    }
    return results;
  }
}
