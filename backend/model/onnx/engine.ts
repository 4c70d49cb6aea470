// OnnxEngine: the in-process engine. Loads a model folder (config.json, generation_config.json,
// tokenizer files, onnx/model.onnx in our split-cache layout), renders conversations with the
// checkpoint's chat template and decodes all of them together in a worker thread.
import { randomInt } from 'node:crypto';
import { statSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { calibrate, scheduleOf, scheduleWords, settingWords, RECIPE_ANSWERS, type Schedule } from '../schedule';
import { defaultPlan, recipeRowsThatFit, rowCandidates } from './memoryPlan';
import { calibratedCost } from '../calibrationFile';
import { GqaCache } from './gqaCache';
import type { ChatMessage } from '../../protocol';
import type { Engine, Generation, OnDelta, SamplingOptions } from '../engine';
import { loadTokenizer, type Tokenizer } from '../tokenizer';
import { chatTemplateOf, type ChatTemplate } from '../chatTemplate';
import { graphPath, ONNX_DATA_FILE, readModelFolder, type ModelFolderInfo } from './modelFolder';
import {
  InThreadBackend,
  WorkerBackend,
  workerScript,
  type BackendInfo,
  type DecodeBackend,
  type LoadSpec,
} from './backends';
import { SampleText } from './textStream';
import type { Device } from './session';
import type { SpeculationOptions } from './decoder';
import { chooseKvCache, type KvCacheChoice, type KvCacheSetting } from './kvPrecision';

/** Speculation used when the caller does not choose (see docs/onnx-engine.md for the measurements). */
export const DEFAULT_SPECULATION: SpeculationOptions | false = false;
/** The drafts KIMINA_SPECULATION turns on (the benchmark's setting: up to 8 drafts, 4- to 2-grams). */
export const SPECULATION_WHEN_ON: SpeculationOptions = { maxDraft: 8 };

export interface OnnxEngineOptions {
  device?: Device;
  /** CPU threads for onnxruntime; default: every core. */
  threads?: number;
  /** onnxruntime's threads spin between operators (session.ts). */
  spinning?: boolean;
  /** Decode on the calling thread instead of a worker (tests, tools without an event loop to protect). */
  inThread?: boolean;
  /**
   * Speculative decoding by prompt lookup (docs/onnx-engine.md): options, or false for none.
   * Default: DEFAULT_SPECULATION.
   */
  speculation?: SpeculationOptions | false;
  /** KV cache precision; default 'auto' (kvPrecision.ts). */
  kvCache?: KvCacheSetting;
  /**
   * Decoding path: 'auto' (default) onnxruntime's C API with the GroupQueryAttention graph where it loads
   * (float32 cache), else the Node binding with the split-cache graph; or one of them only.
   */
  path?: LoadSpec['path'];
  /** Samples decoded at once, overriding the calibration (kimina.rowsAtOnce); 0 or absent: from the calibration. */
  rowsAtOnce?: number;
  /** Total memory 'auto' plans against; default the machine's. */
  totalMemory?: number;
  log?: (line: string) => void;
}

function idList(v: unknown): number[] {
  if (typeof v === 'number') return [v];
  if (Array.isArray(v)) return v.filter((x): x is number => typeof x === 'number');
  return [];
}

export class OnnxEngine implements Engine {
  readonly name = 'onnx';
  readonly model: string;
  readonly maxContext: number;
  private readonly eosIds: number[];
  private speculation: SpeculationOptions | undefined;

  private constructor(
    private readonly folder: ModelFolderInfo,
    private readonly tokenizer: Tokenizer,
    private readonly template: ChatTemplate,
    private readonly backend: DecodeBackend,
    /** The KV cache decoding uses, and why. */
    readonly kvCache: KvCacheChoice,
  ) {
    this.model = folder.dir;
    this.maxContext = folder.shape.maxPositions;
    this.eosIds = [...new Set([...tokenizer.eosTokenIds, ...idList(folder.generationConfig.eos_token_id)])];
  }

  static async load(modelDir: string, options: OnnxEngineOptions = {}): Promise<OnnxEngine> {
    const log = options.log ?? ((line: string) => console.error(line));
    const folder = readModelFolder(modelDir);
    const tokenizer = await loadTokenizer(modelDir);
    const template = chatTemplateOf(tokenizer, modelDir);
    if (tokenizer.vocabSize > folder.shape.vocabSize) {
      throw new Error(
        `model folder ${modelDir}: the tokenizer has ${tokenizer.vocabSize} tokens but the model only ${folder.shape.vocabSize}`,
      );
    }
    const padId = tokenizer.padTokenId ?? tokenizer.eosTokenIds[0] ?? 0;
    const setting = options.kvCache ?? 'auto';
    const totalMemory = options.totalMemory ?? totalmem();
    // The split path's cache: as chosen before the C API path existed (and its fallback).
    let splitCache = chooseKvCache(setting === 'int8' ? 'fp16' : setting, folder.shape, totalMemory);
    if (setting === 'int8')
      splitCache = {
        precision: 'fp16',
        why: folder.onnxGqaInt8Path
          ? "int8 runs on the C API path only; where it does not load, the split graph's float16 cache"
          : "int8 was asked for, but the model folder has no onnx/model.gqa8.onnx (its calibration needs the C API path at conversion); the split graph's float16 cache instead",
      };
    if (splitCache.precision === 'fp16' && !folder.onnxHalfCachePath) {
      splitCache = {
        precision: 'fp32',
        why: `${splitCache.why}, but the model folder has no onnx/model.kv16.onnx (converted before it existed; \`kimina model pull\` converts it again)`,
      };
    }
    // The C API path's cache: int8 when asked for; float32 when asked for, or under 'auto' where one answer of
    // the recipe's 24,576 tokens fits half the memory (how many rows decode at once is then the scheduler's
    // choice, schedule.ts); never with speculation (off by default), which runs on the split graph only.
    const speculation = options.speculation === undefined ? DEFAULT_SPECULATION : options.speculation;
    const fp32PerToken = GqaCache.bytesPerToken({ ...folder.shape });
    const weightBytes = statSync(join(folder.dir, 'onnx', ONNX_DATA_FILE), { throwIfNoEntry: false })?.size ?? 0;
    const oneAnswerFits = defaultPlan(folder.shape, weightBytes, totalMemory).cache === 'fp32';
    let capi: { path: string; cache: KvCacheChoice; int8: boolean } | undefined;
    if (setting === 'int8' && folder.onnxGqaInt8Path)
      capi = { path: folder.onnxGqaInt8Path, cache: { precision: 'int8', why: 'KIMINA_KV_CACHE' }, int8: true };
    else if (folder.onnxGqaPath && !speculation && (setting === 'fp32' || (setting === 'auto' && oneAnswerFits)))
      capi = {
        path: folder.onnxGqaPath,
        int8: false,
        cache: {
          precision: 'fp32',
          why:
            setting === 'fp32'
              ? 'KIMINA_KV_CACHE'
              : `the C API path's float32 cache: one ${RECIPE_ANSWERS.maxTokens}-token answer takes ${(
                  (fp32PerToken * RECIPE_ANSWERS.maxTokens) /
                  2 ** 30
                ).toFixed(2)} GiB, within half of ${(totalMemory / 2 ** 30).toFixed(1)} GiB`,
        },
      };
    else if (setting === 'auto' && folder.onnxGqaPath && !speculation)
      splitCache = {
        ...splitCache,
        why: `${splitCache.why}; the split path, as one ${RECIPE_ANSWERS.maxTokens}-token answer in the C API path's float32 cache would not fit half the memory`,
      };
    const spec: LoadSpec = {
      onnxPath: graphPath(folder, splitCache.precision === 'int8' ? 'fp16' : splitCache.precision),
      gqaPath: capi?.path,
      gqaInt8: capi?.int8,
      gqaWhyNot: capi
        ? undefined
        : !folder.onnxGqaPath
          ? undefined
          : setting === 'int8'
            ? 'the model folder has no onnx/model.gqa8.onnx for the int8 cache'
            : speculation
              ? 'speculation runs on the split graph'
              : setting === 'fp16'
                ? 'KIMINA_KV_CACHE=fp16 runs on the split graph'
                : `one ${RECIPE_ANSWERS.maxTokens}-token answer in the C API path's float32 cache would not fit half the memory`,
      path: options.path,
      shape: folder.shape,
      device: options.device,
      threads: options.threads,
      spinning: options.spinning,
      padId,
    };
    let backend: DecodeBackend;
    const script = options.inThread ? undefined : workerScript();
    if (script) backend = await WorkerBackend.load(script, spec, log);
    else {
      if (!options.inThread) log('onnx: no worker script found next to the engine; decoding on the main thread');
      backend = await InThreadBackend.load(spec, log);
    }
    const kvCache = backend.info.path === 'c-api-gqa' && capi ? capi.cache : splitCache;
    log(`onnx: ${kvCache.precision} KV cache (${kvCache.why})`);
    const engine = new OnnxEngine(folder, tokenizer, template, backend, kvCache);
    engine.totalMemory = totalMemory;
    engine.rowsAtOnce = options.rowsAtOnce ?? 0;
    engine.log = log;
    engine.speculation = speculation || undefined;
    return engine;
  }

  /** Whether generate() drafts by prompt lookup. */
  get speculating(): boolean {
    return this.speculation !== undefined;
  }

  /** One line for status output: the decoding path and why, the KV cache, threads and device, the schedule. */
  get detail(): string {
    const r = this.backend.info;
    return `${r.path} (${r.pathWhy}); ${this.kvCache.precision} KV cache; ${r.threads} threads on the ${r.device}${this.scheduled ? `; ${scheduleWords(this.scheduled)}` : ''}`;
  }

  private totalMemory = totalmem();
  private rowsAtOnce = 0;
  private log: (line: string) => void = (line) => console.error(line);
  private scheduling?: Promise<Schedule | undefined>;
  private scheduled?: Schedule;

  /** Where the calibration is kept: beside the model, one entry per decoding path, cache, threads and CPU. */
  private calibrationKey(): string {
    const r = this.backend.info;
    return `${r.path}/${this.kvCache.precision}/${r.threads}t/${r.device}/${cpus()[0]?.model ?? 'cpu'}`;
  }

  /**
   * The device's cost model (schedule.ts) and the row count it implies: measured by a short calibration the
   * first time (three timed decode steps, stored in the model folder's calibration.json), read back after; the
   * kimina.rowsAtOnce override, when set, gives the rows. Undefined on a path without a step probe (the split
   * path) and no override. Asked twice at once, it calibrates once.
   */
  schedule(): Promise<Schedule | undefined> {
    this.scheduling ??= this.findSchedule().then((s) => {
      this.scheduled = s;
      return s;
    });
    return this.scheduling;
  }

  private async findSchedule(): Promise<Schedule | undefined> {
    // Only rows whose caches at the recipe's longest answer fit half the memory beside the weights: the
    // calibration's candidates, and the most kimina.rowsAtOnce may ask for.
    const weights = statSync(join(this.folder.dir, 'onnx', ONNX_DATA_FILE), { throwIfNoEntry: false })?.size ?? 0;
    const fit = recipeRowsThatFit(this.folder.shape, this.kvCache.precision, weights, this.totalMemory);
    const probe = this.backend.timeStep;
    if (!probe) return this.said(scheduleOf(undefined, { override: this.rowsAtOnce, fit }));
    const { cost, calibratedNow } = await calibratedCost(this.folder.dir, this.calibrationKey(), () =>
      calibrate(probe, 3, Math.min(4096, this.maxContext - 8)),
    );
    return this.said(
      scheduleOf(cost, { candidates: rowCandidates(fit), override: this.rowsAtOnce, fit, calibratedNow }),
    );
  }

  /** The schedule, logged when it lowered kimina.rowsAtOnce. */
  private said(schedule: Schedule | undefined): Schedule | undefined {
    if (schedule?.loweredFrom !== undefined) this.log(`onnx: ${settingWords(schedule)}`);
    return schedule;
  }

  /** Where decoding runs (the path and why, device, threads, why CUDA fell back). */
  get runtime(): BackendInfo {
    return this.backend.info;
  }

  async promptIds(conversation: ChatMessage[]): Promise<number[]> {
    return this.tokenizer.encode(await this.template.render(conversation, { addGenerationPrompt: true }));
  }

  async countPromptTokens(conversation: ChatMessage[]): Promise<number> {
    return (await this.promptIds(conversation)).length;
  }

  async generate(conversations: ChatMessage[][], options: SamplingOptions, onDelta?: OnDelta): Promise<Generation[]> {
    if (conversations.length === 0) return [];
    if (!(options.maxTokens >= 1)) throw new Error(`maxTokens must be at least 1, got ${options.maxTokens}`);
    const prompts: number[][] = [];
    for (const c of conversations) prompts.push(await this.promptIds(c));
    prompts.forEach((p, i) => {
      if (p.length >= this.maxContext)
        throw new Error(
          `conversation ${i}: prompt of ${p.length} tokens does not fit the model's ${this.maxContext}-token context`,
        );
    });
    const samples = prompts.map(
      () => new SampleText(this.tokenizer.streamDecoder({ skipSpecialTokens: true }), options.stop ?? []),
    );
    const emit = (row: number, delta: string) => {
      if (delta && onDelta) onDelta(row, delta);
    };
    const signal = options.signal;
    if (signal?.aborted) return samples.map(() => ({ text: '', tokens: 0, finishReason: 'cancelled' }));

    const job = this.backend.start(
      {
        prompts,
        maxTokens: Math.floor(options.maxTokens),
        temperature: options.temperature,
        topP: options.topP,
        seed: options.seed ?? randomInt(2 ** 31),
        eosIds: this.eosIds,
        vocabLimit: this.tokenizer.vocabSize,
        speculation: this.speculation,
      },
      (rows, tokens) => {
        rows.forEach((row, i) => {
          const sample = samples[row];
          if (sample.stopped) return;
          emit(row, sample.push(tokens[i]));
          if (sample.stopped) job.stopRow(row);
        });
      },
    );
    const onAbort = () => job.cancel();
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const results = await job.done;
      return results.map((r, row) => {
        const sample = samples[row];
        emit(row, sample.finish());
        return { text: sample.text, tokens: sample.tokens, finishReason: sample.stopped ? 'stop' : r.finishReason };
      });
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async close(): Promise<void> {
    await this.backend.close();
  }
}
