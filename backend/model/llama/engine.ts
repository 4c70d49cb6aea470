// LlamaEngine: llama.cpp in-process through node-llama-cpp (Metal, Vulkan, CUDA or the CPU), on a GGUF this
// project writes from the model folder's checkpoint (ggufConvert.ts). The prompt is the onnx engine's: rendered
// with the checkpoint's chat template (chatTemplate.ts), tokenized by our tokenizer and fed to llama.cpp as token
// ids, so the model sees the same tokens; answers are decoded by our tokenizer with the same stop-string rules
// (onnx/textStream.ts). Several conversations decode together as sequences of one context.
import { randomInt } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage } from '../../protocol';
import type { Engine, FinishReason, Generation, OnDelta, SamplingOptions } from '../engine';
import { loadTokenizer, type Tokenizer } from '../tokenizer';
import { chatTemplateOf, type ChatTemplate } from '../chatTemplate';
import { SampleText } from '../onnx/textStream';
import { qwen3ShapeFromConfig, type Qwen3Shape } from '../onnx/qwen3Config';
import { calibrate, scheduleOf, scheduleWords, settingWords, type Schedule } from '../schedule';
import { rowCandidates } from '../onnx/memoryPlan';
import { calibratedCost, llamaRowsThatFit } from '../calibrationFile';
import { llamaStepProbe } from './stepProbe';
import type { Llama, LlamaModel, NodeLlamaCpp } from './binding';
import type { GgufWeightType } from './ggufFormat';
import { ensureModelGguf } from './ggufConvert';
import { promptLookupPredictor } from './predictor';
import { LlamaUnavailable } from './runtime';

/** Which llama.cpp backend to ask for: node-llama-cpp's 'auto' takes Metal, else CUDA, else Vulkan, else the CPU. */
type LlamaGpuSetting = 'auto' | 'metal' | 'cuda' | 'vulkan' | 'cpu';

export interface LlamaEngineOptions {
  /** node-llama-cpp, loaded (runtime.ts). */
  runtime: NodeLlamaCpp;
  gpu?: LlamaGpuSetting;
  /** The GGUF's matrix type (default q8_0). */
  weights?: GgufWeightType;
  /** CPU threads (default: node-llama-cpp's, the cores useful for math). */
  threads?: number;
  /** Prompt-lookup drafts per step, or false for none (default). */
  speculation?: number | false;
  /** Samples decoded at once, overriding the calibration (kimina.rowsAtOnce); 0 or absent: from the calibration. */
  rowsAtOnce?: number;
  /** The memory the rows' caches are capped against on the CPU backend; default the machine's (a GPU: its own). */
  totalMemory?: number;
  log?: (line: string) => void;
  /** Cancels the GGUF write of a load in progress. */
  signal?: AbortSignal;
}

/** The folder that holds tokenizer.json and config.json: the model folder or its checkpoint/ subfolder. */
function metadataDir(modelDir: string): string {
  for (const d of [modelDir, join(modelDir, 'checkpoint')])
    if (existsSync(join(d, 'tokenizer.json')) && existsSync(join(d, 'config.json'))) return d;
  throw new Error(`${modelDir} has no tokenizer.json and config.json (a model folder in the Hugging Face layout)`);
}

export class LlamaEngine implements Engine {
  readonly name = 'llama';
  readonly model: string;
  readonly maxContext: number;

  private constructor(
    modelDir: string,
    private readonly llama: Llama,
    private readonly gguf: LlamaModel,
    private readonly tokenizer: Tokenizer,
    private readonly template: ChatTemplate,
    private readonly eosIds: Set<number>,
    private readonly options: LlamaEngineOptions,
    /** Which backend runs and why, the weights and threads: the status line's start. */
    private readonly runsOn: string,
    maxContext: number,
    /** What the calibration is keyed by and the rows are capped with. */
    private readonly facts: { shape: Qwen3Shape; ggufPath: string; weights: GgufWeightType; devices: string[] },
  ) {
    this.model = modelDir;
    this.maxContext = maxContext;
  }

  static async load(modelDir: string, options: LlamaEngineOptions): Promise<LlamaEngine> {
    const log = options.log ?? ((line: string) => console.error(line));
    const weights = options.weights ?? 'q8_0';
    const meta = metadataDir(modelDir);
    const shape = qwen3ShapeFromConfig(JSON.parse(readFileSync(join(meta, 'config.json'), 'utf8')));
    const tokenizer = await loadTokenizer(meta);
    const template = chatTemplateOf(tokenizer, modelDir);
    const ggufPath = await ensureModelGguf(modelDir, weights, log, { signal: options.signal });
    const mod = options.runtime;
    const asked = options.gpu ?? 'auto';
    let llama: Llama;
    try {
      llama = await mod.getLlama({
        gpu: asked === 'cpu' ? false : asked,
        build: 'never',
        logLevel: 'error',
        logger: (level, message) => log(`llama.cpp ${level}: ${message.trim()}`),
      });
    } catch (e) {
      throw new LlamaUnavailable(`no llama.cpp build loads for gpu '${asked}': ${(e as Error).message}`);
    }
    let why: string;
    if (asked === 'cpu') why = 'KIMINA_LLAMA_GPU=cpu';
    else if (asked !== 'auto') why = `KIMINA_LLAMA_GPU=${asked}`;
    else if (llama.gpu) why = "node-llama-cpp's 'auto': the first of Metal, CUDA, Vulkan whose prebuilt binary loads";
    else {
      const valid = (await mod.getLlamaGpuTypes('allValid')).filter((g) => g);
      const supported = (await mod.getLlamaGpuTypes('supported')).filter((g) => g);
      why =
        valid.length === 0
          ? 'node-llama-cpp has no GPU build for this platform'
          : supported.length === 0
            ? `no driver found for ${valid.join(' or ')}`
            : `${supported.join(', ')} found but no build of it loaded (installed with the engine only where a driver was seen)`;
    }
    let model: LlamaModel;
    try {
      model = await llama.loadModel({ modelPath: ggufPath });
    } catch (e) {
      await llama.dispose();
      throw e;
    }
    const devices = llama.gpu ? await llama.getGpuDeviceNames().catch(() => []) : [];
    const backend = llama.gpu
      ? `${llama.gpu}${devices.length ? ` on ${devices.join(', ')}` : ''}, ${model.gpuLayers} layers offloaded`
      : 'cpu';
    const threads = options.threads ?? llama.cpuMathCores;
    const detail = `llama.cpp ${backend} (${why}); ${weights} GGUF; ${threads} threads${options.speculation ? `; prompt lookup up to ${options.speculation} drafts` : ''}`;
    log(`llama: ${detail}`);
    const eosIds = new Set([...tokenizer.eosTokenIds, ...idList(readGenerationEos(meta))]);
    return new LlamaEngine(
      modelDir,
      llama,
      model,
      tokenizer,
      template,
      eosIds,
      { ...options, threads },
      detail,
      shape.maxPositions,
      { shape, ggufPath, weights, devices },
    );
  }

  /** One line for status output: the backend and why, the weights, threads, and the schedule once known. */
  get detail(): string {
    return `${this.runsOn}${this.scheduled ? `; ${scheduleWords(this.scheduled)}` : ''}`;
  }

  private scheduling?: Promise<Schedule | undefined>;
  private scheduled?: Schedule;

  /** Where the calibration is kept (calibration.json beside the model): per weights, backend, threads and device. */
  private calibrationKey(): string {
    const device = this.facts.devices.join('+') || (cpus()[0]?.model ?? 'cpu');
    return `llama/${this.facts.weights}/${this.backend}/${this.options.threads}t/${device}`;
  }

  /**
   * The device's cost model (schedule.ts) and the row count it implies, as the onnx engine's: three timed decode
   * steps the first time (stepProbe.ts; rows as sequences of one context), stored beside the model and read back
   * after; rows capped to what fits half the memory (the GPU's, or the machine's on the CPU) at the recipe's longest
   * answers in llama.cpp's float16 cache beside the GGUF; kimina.rowsAtOnce, when set, gives the rows. Asked twice
   * at once, it calibrates once.
   */
  schedule(): Promise<Schedule | undefined> {
    this.scheduling ??= this.findSchedule().then((s) => {
      this.scheduled = s;
      return s;
    });
    return this.scheduling;
  }

  private async findSchedule(): Promise<Schedule | undefined> {
    const gpuMemory = this.llama.gpu ? (await this.llama.getVramState()).total : 0;
    const { cost, calibratedNow } = await calibratedCost(this.model, this.calibrationKey(), async () => {
      const probe = llamaStepProbe(this.gguf, {
        threads: this.options.threads,
        flashAttention: this.flashAttention,
        vocabSize: this.tokenizer.vocabSize,
      });
      try {
        const measured = await calibrate(probe.timeStep, 3, Math.min(4096, this.maxContext - 8));
        return gpuMemory ? { ...measured, memory: gpuMemory } : measured;
      } finally {
        await probe.close();
      }
    });
    const memory = cost.memory ?? (gpuMemory || (this.options.totalMemory ?? totalmem()));
    const ggufBytes = statSync(this.facts.ggufPath, { throwIfNoEntry: false })?.size ?? 0;
    const fit = llamaRowsThatFit(this.facts.shape, ggufBytes, memory);
    const override = this.options.rowsAtOnce ?? 0;
    const { a, m, b } = cost;
    const schedule = scheduleOf({ a, m, b }, { candidates: rowCandidates(fit), override, fit, calibratedNow });
    if (schedule?.loweredFrom !== undefined) (this.options.log ?? console.error)(`llama: ${settingWords(schedule)}`);
    return schedule;
  }

  /** On a CPU flash attention slows long-context decoding about 2.7× (docs/llama-engine.md); GPUs: llama.cpp's choice. */
  private get flashAttention(): boolean | 'auto' {
    return this.llama.gpu ? 'auto' : false;
  }

  /** Which llama.cpp backend runs: 'metal', 'cuda', 'vulkan' or 'cpu'. */
  get backend(): 'metal' | 'cuda' | 'vulkan' | 'cpu' {
    return this.llama.gpu || 'cpu';
  }

  async promptIds(conversation: ChatMessage[]): Promise<number[]> {
    return this.tokenizer.encode(await this.template.render(conversation, { addGenerationPrompt: true }));
  }

  async countPromptTokens(conversation: ChatMessage[]): Promise<number> {
    return (await this.promptIds(conversation)).length;
  }

  /** llama.cpp's own tokenization of a text (special tokens parsed): a check that the GGUF's tokenizer is ours. */
  llamaTokenize(text: string): number[] {
    return [...this.gguf.tokenize(text, true)];
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
    if (options.signal?.aborted) return prompts.map(() => ({ text: '', tokens: 0, finishReason: 'cancelled' }));
    const longest = Math.max(...prompts.map((p) => p.length));
    const contextSize = Math.min(this.maxContext, longest + Math.floor(options.maxTokens) + 1);
    const context = await this.gguf.createContext({
      contextSize,
      sequences: prompts.length,
      threads: this.options.threads,
      flashAttention: this.flashAttention,
    });
    const seed = options.seed ?? randomInt(2 ** 31);
    try {
      return await Promise.all(
        prompts.map((prompt, row) => this.decodeRow(context, prompt, row, seed + row, contextSize, options, onDelta)),
      );
    } finally {
      await context.dispose();
    }
  }

  private async decodeRow(
    context: Awaited<ReturnType<LlamaModel['createContext']>>,
    prompt: number[],
    row: number,
    seed: number,
    contextSize: number,
    options: SamplingOptions,
    onDelta?: OnDelta,
  ): Promise<Generation> {
    const draft = this.options.speculation;
    const sequence = context.getSequence(
      draft ? { tokenPredictor: promptLookupPredictor(this.options.runtime, draft) } : undefined,
    );
    const sample = new SampleText(this.tokenizer.streamDecoder({ skipSpecialTokens: true }), options.stop ?? []);
    const emit = (delta: string) => {
      if (delta && onDelta) onDelta(row, delta);
    };
    const room = contextSize - prompt.length;
    const limit = Math.min(Math.floor(options.maxTokens), room);
    let finishReason: FinishReason = 'length';
    const signal = options.signal;
    const tokens = sequence.evaluate(prompt, {
      temperature: options.temperature,
      topP: options.topP,
      seed,
      yieldEogToken: true,
    });
    for await (const token of tokens) {
      if (signal?.aborted) {
        finishReason = 'cancelled';
        break;
      }
      if (this.eosIds.has(token)) {
        finishReason = 'stop';
        break;
      }
      emit(sample.push(token));
      if (sample.stopped) {
        finishReason = 'stop';
        break;
      }
      if (sample.tokens >= limit) break;
    }
    emit(sample.finish());
    const generation: Generation = { text: sample.text, tokens: sample.tokens, finishReason };
    if (finishReason === 'length' && limit < options.maxTokens)
      generation.cut = `the model's ${this.maxContext}-token context is full`;
    return generation;
  }

  async close(): Promise<void> {
    await this.gguf.dispose();
    await this.llama.dispose();
  }
}

function readGenerationEos(dir: string): unknown {
  try {
    return (JSON.parse(readFileSync(join(dir, 'generation_config.json'), 'utf8')) as { eos_token_id?: unknown })
      .eos_token_id;
  } catch {
    return undefined;
  }
}

function idList(v: unknown): number[] {
  if (typeof v === 'number') return [v];
  if (Array.isArray(v)) return v.filter((x): x is number => typeof x === 'number');
  return [];
}
