// The part of node-llama-cpp 3.21's API the llama engine uses, typed structurally: the package is not a
// dependency of this project (runtime.ts installs it on first use), so its own .d.ts is not at hand.

export interface NodeLlamaCpp {
  getLlama(options: {
    gpu: false | 'auto' | 'cuda' | 'vulkan' | 'metal';
    build: 'never';
    logLevel?: 'error' | 'warn';
    logger?: (level: string, message: string) => void;
    maxThreads?: number;
  }): Promise<Llama>;
  getLlamaGpuTypes(include: 'supported' | 'allValid'): Promise<('metal' | 'cuda' | 'vulkan' | false)[]>;
  /** The base class of token predictors (a custom one extends it). */
  TokenPredictor: abstract new () => TokenPredictorBase;
}

export interface Llama {
  readonly gpu: false | 'cuda' | 'vulkan' | 'metal';
  readonly cpuMathCores: number;
  getGpuDeviceNames(): Promise<string[]>;
  /** The GPU's memory in bytes (on the CPU backend: zeros). */
  getVramState(): Promise<{ total: number; used: number; free: number }>;
  loadModel(options: { modelPath: string; gpuLayers?: 'auto' | 'max' | number }): Promise<LlamaModel>;
  dispose(): Promise<void>;
}

export interface LlamaModel {
  readonly trainContextSize: number;
  readonly gpuLayers: number;
  tokenize(text: string, specialTokens?: boolean): number[];
  createContext(options: {
    contextSize: number;
    sequences: number;
    threads?: number;
    flashAttention?: boolean | 'auto';
    batchSize?: number;
  }): Promise<LlamaContext>;
  dispose(): Promise<void>;
}

export interface LlamaContext {
  readonly contextSize: number;
  getSequence(options?: { tokenPredictor?: TokenPredictorBase }): LlamaSequence;
  dispose(): Promise<void>;
}

interface LlamaSequence {
  /** Where the next token goes: the tokens the sequence holds. */
  readonly nextTokenIndex: number;
  /** Evaluates tokens into the sequence's cache (no logits). */
  evaluateWithoutGeneratingNewTokens(tokens: number[]): Promise<void>;
  /** Evaluates tokens; those marked generate the next token (logits and sampling, as decoding does). */
  controlledEvaluate(input: (number | [number, { generateNext?: { token?: boolean } }])[]): Promise<unknown[]>;
  /** Removes cached tokens in [start, end). */
  eraseContextTokenRanges(ranges: { start: number; end: number }[]): Promise<void>;
  evaluate(
    tokens: number[],
    options: { temperature: number; topP?: number; seed?: number; yieldEogToken?: boolean },
  ): AsyncGenerator<number, void, void>;
  /** Token predictions that were validated / refuted so far (with a token predictor). */
  readonly tokenPredictions: { used: number; unused: number; validated: number; refuted: number };
}

/** node-llama-cpp's TokenPredictor contract (TokenPredictor.d.ts). */
export interface TokenPredictorBase {
  reset(params: { stateTokens: number[] }): void | Promise<void>;
  pushTokens(tokens: number[]): void;
  predictTokens(): number[] | Promise<number[]>;
}
