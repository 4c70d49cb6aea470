// Where decoding runs: in a worker thread (default: session.run blocks its thread for the whole
// forward pass, so the server's event loop must not host it) or in the calling thread.
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { Decoder, type DecodeControl, type DecodeRequest, type RowResult } from './decoder';
import { GqaDecoder } from './gqaDecoder';
import { OrtNative } from './ortNative';
import { createSession } from './session';
import type { BackendInfo, LoadSpec, WorkerReply, WorkerRequest } from './workerProtocol';

export type { BackendInfo, LoadSpec };

/** What a backend needs of a decoder (the split-cache Decoder and the C API's GqaDecoder). */
interface RowDecoder {
  decode(req: DecodeRequest, control: DecodeControl): Promise<RowResult[]>;
  close(): Promise<void>;
  timeStep?(rows: number, cachedPerRow: number): number;
}

/**
 * The C API path (GroupQueryAttention, the cache appended in place; gqaDecoder.ts) when the spec allows
 * it and it loads, else undefined with the reason. Not for CUDA (the cache would live in host memory and
 * this path is measured on CPUs only).
 */
function loadGqa(spec: LoadSpec, threads: number): { decoder: GqaDecoder; why: string } | { why: string } {
  if (spec.path === 'node-split') return { why: 'asked for the Node binding' };
  if (!spec.gqaPath)
    return {
      why: spec.gqaWhyNot ?? 'the model folder has no onnx/model.gqa.onnx (`kimina model pull` converts it again)',
    };
  if (spec.device === 'cuda') return { why: 'CUDA runs through the Node binding' };
  try {
    const ort = OrtNative.load();
    const session = ort.createSession(spec.gqaPath, { threads, spinning: spec.spinning });
    return {
      decoder: new GqaDecoder(ort, session, spec.shape, { int8: spec.gqaInt8 }),
      why: `onnxruntime ${ort.version} C API through koffi (${ort.libraryPath})`,
    };
  } catch (e) {
    return { why: `the C API path did not load: ${(e as Error).message.split('\n')[0]}` };
  }
}

export interface DecodeJob {
  stopRow(row: number): void;
  cancel(): void;
  done: Promise<RowResult[]>;
}

export interface DecodeBackend {
  readonly info: BackendInfo;
  /** One decode step's milliseconds on this device (the calibration's probe); only the C API path has it. */
  timeStep?(rows: number, cachedPerRow: number): Promise<number>;
  start(req: DecodeRequest, onTokens: (rows: number[], tokens: number[]) => void): DecodeJob;
  close(): Promise<void>;
}

/** Runs jobs one after another (one session, one cache at a time). */
class Queue {
  private tail: Promise<unknown> = Promise.resolve();
  add<T>(task: () => Promise<T>): Promise<T> {
    const run = this.tail.then(task, task);
    this.tail = run.catch(() => undefined);
    return run;
  }
}

export class InThreadBackend implements DecodeBackend {
  private queue = new Queue();
  private constructor(
    private decoder: RowDecoder,
    readonly info: BackendInfo,
  ) {}

  static async load(spec: LoadSpec, log?: (line: string) => void): Promise<InThreadBackend> {
    const threads = spec.threads && spec.threads > 0 ? Math.floor(spec.threads) : availableParallelism();
    const gqa = loadGqa(spec, threads);
    if ('decoder' in gqa) {
      log?.(`onnx: decoding through the C API with GroupQueryAttention (${gqa.why}), ${threads} threads`);
      return new InThreadBackend(gqa.decoder, { path: 'c-api-gqa', pathWhy: gqa.why, device: 'cpu', threads });
    }
    if (spec.path === 'c-api-gqa') throw new Error(`onnx: ${gqa.why}`);
    log?.(`onnx: decoding through onnxruntime-node with the split-cache graph (${gqa.why})`);
    const s = await createSession(spec.onnxPath, {
      device: spec.device,
      threads: spec.threads,
      spinning: spec.spinning,
      log,
    });
    const decoder = new Decoder(s.session, spec.shape, { padId: spec.padId });
    return new InThreadBackend(
      { decode: (req, control) => decoder.decode(req, control), close: () => s.session.release() },
      { path: 'node-split', pathWhy: gqa.why, device: s.device, threads: s.threads, fallbackReason: s.fallbackReason },
    );
  }

  start(req: DecodeRequest, onTokens: (rows: number[], tokens: number[]) => void): DecodeJob {
    const stopped = new Set<number>();
    let cancelled = false;
    const done = this.queue.add(() =>
      this.decoder.decode(req, {
        onTokens,
        isStopped: (row) => stopped.has(row),
        isCancelled: () => cancelled,
      }),
    );
    return {
      stopRow: (row) => stopped.add(row),
      cancel: () => {
        cancelled = true;
      },
      done,
    };
  }

  get timeStep(): ((rows: number, cachedPerRow: number) => Promise<number>) | undefined {
    const probe = this.decoder.timeStep?.bind(this.decoder);
    return probe && ((rows, cached) => this.queue.add(async () => probe(rows, cached)));
  }

  async close(): Promise<void> {
    await this.decoder.close();
  }
}

/** The worker script next to this module: worker.ts under tsx, onnx-worker.js next to a bundle. */
export function workerScript(): string | undefined {
  const candidates = __filename.endsWith('.ts')
    ? [join(__dirname, 'worker.ts')]
    : [join(__dirname, 'onnx-worker.js'), join(__dirname, 'worker.js')];
  return candidates.find((p) => existsSync(p));
}

/** Source checkouts (tests under tsx): the worker loads tsx's require hook before the .ts script. */
function tsWorker(script: string): Worker {
  // Resolved at run time only (tsx is a dev dependency; the bundle never takes this path).
  const hookModule = ['tsx', 'cjs'].join('/');
  const hook = require.resolve(hookModule);
  return new Worker(`require(${JSON.stringify(hook)}); require(${JSON.stringify(script)});`, { eval: true });
}

export class WorkerBackend implements DecodeBackend {
  private nextId = 1;
  private jobs = new Map<
    number,
    {
      onTokens: (rows: number[], tokens: number[]) => void;
      resolve: (r: RowResult[]) => void;
      timed?: (ms: number) => void;
      reject: (e: Error) => void;
    }
  >();
  private failure?: Error;
  private closing = false;

  private constructor(
    private worker: Worker,
    readonly info: BackendInfo,
    private log?: (line: string) => void,
  ) {
    worker.on('message', (msg: WorkerReply) => this.onMessage(msg));
    worker.on('error', (e) => this.failAll(e));
    worker.on('exit', (code) => {
      if (!this.closing) this.failAll(new Error(`ONNX worker exited (code ${code})`));
    });
    // An idle worker must not keep the process alive (a caller that never closes the engine still
    // exits); while a job runs it does, like any pending I/O.
    worker.unref();
  }

  private settle(id: number): void {
    this.jobs.delete(id);
    if (this.jobs.size === 0) this.worker.unref();
  }

  static async load(script: string, spec: LoadSpec, log?: (line: string) => void): Promise<WorkerBackend> {
    const worker = script.endsWith('.ts') ? tsWorker(script) : new Worker(script);
    let onMessage: (msg: WorkerReply) => void = () => undefined;
    let onError: (e: Error) => void = () => undefined;
    let onExit: (code: number) => void = () => undefined;
    try {
      const info = await new Promise<BackendInfo>((resolve, reject) => {
        onMessage = (msg) => {
          if (msg.type === 'log') log?.(msg.line);
          else if (msg.type === 'loaded') resolve(msg.info);
          else if (msg.type === 'error') reject(new Error(msg.message));
        };
        onError = reject;
        onExit = (code) => reject(new Error(`ONNX worker exited while loading (code ${code})`));
        worker.on('message', onMessage);
        worker.once('error', onError);
        worker.once('exit', onExit);
        worker.postMessage({ type: 'load', spec } satisfies WorkerRequest);
      });
      return new WorkerBackend(worker, info, log);
    } catch (e) {
      await worker.terminate();
      throw e;
    } finally {
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
    }
  }

  private onMessage(msg: WorkerReply): void {
    if (msg.type === 'log') this.log?.(msg.line);
    else if (msg.type === 'tokens') this.jobs.get(msg.id)?.onTokens(msg.rows, msg.tokens);
    else if (msg.type === 'timed') {
      this.jobs.get(msg.id)?.timed?.(msg.ms);
      this.settle(msg.id);
    } else if (msg.type === 'done') {
      this.jobs.get(msg.id)?.resolve(msg.results);
      this.settle(msg.id);
    } else if (msg.type === 'error' && msg.id !== undefined) {
      this.jobs.get(msg.id)?.reject(new Error(msg.message));
      this.settle(msg.id);
    }
  }

  private failAll(e: Error): void {
    this.failure ??= e;
    for (const job of this.jobs.values()) job.reject(e);
    this.jobs.clear();
    this.worker.unref();
  }

  start(req: DecodeRequest, onTokens: (rows: number[], tokens: number[]) => void): DecodeJob {
    const id = this.nextId++;
    const post = (m: WorkerRequest) => this.worker.postMessage(m);
    const done = new Promise<RowResult[]>((resolve, reject) => {
      if (this.failure) return reject(this.failure);
      this.jobs.set(id, { onTokens, resolve, reject });
      this.worker.ref();
      post({ type: 'generate', id, request: req });
    });
    return { stopRow: (row) => post({ type: 'stop', id, row }), cancel: () => post({ type: 'cancel', id }), done };
  }

  get timeStep(): ((rows: number, cachedPerRow: number) => Promise<number>) | undefined {
    if (this.info.path !== 'c-api-gqa') return undefined;
    return (rows, cachedPerRow) =>
      new Promise<number>((resolve, reject) => {
        if (this.failure) return reject(this.failure);
        const id = this.nextId++;
        this.jobs.set(id, { onTokens: () => undefined, resolve: () => undefined, reject, timed: resolve });
        this.worker.ref();
        this.worker.postMessage({ type: 'timeStep', id, rows, cachedPerRow } satisfies WorkerRequest);
      });
  }

  async close(): Promise<void> {
    this.closing = true;
    this.failAll(new Error('engine closed'));
    await this.worker.terminate();
  }
}
