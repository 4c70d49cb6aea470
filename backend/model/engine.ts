// The engine interface every inference backend implements (in-process ONNX, OpenAI-compatible server).
import type { ChatMessage } from '../protocol';
import type { Schedule } from './schedule';

export interface SamplingOptions {
  maxTokens: number;
  /** 0 means greedy. */
  temperature: number;
  topP: number;
  /** Generation stops when the text ends with one of these (the stop string is not included). */
  stop?: string[];
  seed?: number;
  signal?: AbortSignal;
}

export type FinishReason = 'stop' | 'length' | 'cancelled';

export interface Generation {
  text: string;
  /** Tokens generated. */
  tokens: number;
  finishReason: FinishReason;
  /**
   * With finishReason 'length', why the answer was cut short, in words (the token limit, or the server's context
   * filling up), when the engine knows more than the reason alone.
   */
  cut?: string;
}

/** Streaming callback: `index` is the prompt's position in the batch; `delta` new text (think tags included). */
export type OnDelta = (index: number, delta: string) => void;

export interface Engine {
  readonly name: 'onnx' | 'openai' | string;
  /** The model's id or folder, for logs and the store. */
  readonly model: string;
  /** The model's context limit in tokens, when known. */
  readonly maxContext?: number;
  /** How it runs, for status lines (onnx: the decoding path and why, KV cache, threads). */
  readonly detail?: string;
  /** How kimina.engine = auto chose this engine, in words (engineChoice.ts), when it did. */
  readonly engineChoice?: string;
  /**
   * How many samples to decode at once, from a calibrated cost model of the device (schedule.ts) or the
   * kimina.rowsAtOnce override; the prover decodes its samples in waves of that many. Engines without it (an
   * OpenAI-compatible server), or answering undefined, get every sample of a round at once.
   */
  schedule?(): Promise<Schedule | undefined>;
  /**
   * Generates one answer per conversation, all decoded together where the engine can batch.
   * n samples of one prompt = the same conversation n times. Rejects only on setup failures;
   * a cancelled signal resolves with what was generated so far and finishReason 'cancelled'.
   */
  generate(conversations: ChatMessage[][], options: SamplingOptions, onDelta?: OnDelta): Promise<Generation[]>;
  /** Tokens of the rendered prompt (chat template with the generation prompt), for length limits. */
  countPromptTokens(conversation: ChatMessage[]): Promise<number>;
  close(): Promise<void>;
}
