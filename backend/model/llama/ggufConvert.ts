// The llama engine's GGUF, written lazily from the model folder's safetensors checkpoint (the folder itself, or
// its checkpoint/ subfolder that `kimina model pull` keeps) and cached beside the model as gguf/model.<type>.gguf;
// written again when the checkpoint or config.json is newer than it. Written to a temporary name of this process
// and thread and renamed, so an interrupted conversion never leaves a loadable half file. No Python. The write
// (quantizing every matrix: tens of seconds for a 1.7B checkpoint) runs in a worker thread (ggufWorker.ts;
// dist/gguf-worker.js next to a bundle), so the backend's event loop keeps answering meanwhile.
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { threadId, Worker } from 'node:worker_threads';
import { SafetensorsCheckpoint } from '../onnx/safetensors';
import { qwen3ShapeFromConfig, qwen3TensorShapes } from '../onnx/qwen3Config';
import { loadTokenizer } from '../tokenizer';
import type { GgufWeightType } from './ggufFormat';
import { ggufTokenizerOf } from './ggufTokenizer';
import { writeQwen3Gguf } from './ggufWriter';
import { LlamaUnavailable } from './runtime';

const hasSafetensors = (d: string) => existsSync(d) && readdirSync(d).some((f) => f.endsWith('.safetensors'));

/** The folder holding the model's *.safetensors: the model folder or its checkpoint/ subfolder. */
export function checkpointDir(modelDir: string): string {
  for (const d of [modelDir, join(modelDir, 'checkpoint')]) if (hasSafetensors(d)) return d;
  throw new LlamaUnavailable(
    `${modelDir} has no safetensors checkpoint (in the folder or its checkpoint/ subfolder) to write the llama engine's GGUF from; a model pulled as a ready ONNX export has none: use the onnx engine, or a checkpoint folder`,
  );
}

/** Where the GGUF of a model folder and weight type is cached. */
export function ggufPathOf(modelDir: string, weights: GgufWeightType): string {
  return join(modelDir, 'gguf', `model.${weights}.gguf`);
}

function newestInput(ckpt: string, modelDir: string): number {
  const files = [
    ...readdirSync(ckpt)
      .filter((f) => f.endsWith('.safetensors'))
      .map((f) => join(ckpt, f)),
    join(modelDir, 'config.json'),
  ].filter((f) => existsSync(f));
  return Math.max(...files.map((f) => statSync(f).mtimeMs));
}

/** The folder with the model's config.json and tokenizer.json (the model folder, else the checkpoint's). */
function metadataDir(modelDir: string, ckpt: string): string {
  return existsSync(join(modelDir, 'tokenizer.json')) && existsSync(join(modelDir, 'config.json')) ? modelDir : ckpt;
}

/** Whether the model folder's GGUF in a weight type is written and newer than the checkpoint and config.json. */
function ggufUpToDate(modelDir: string, weights: GgufWeightType): boolean {
  const path = ggufPathOf(modelDir, weights);
  return existsSync(path) && statSync(path).mtimeMs >= newestInput(checkpointDir(modelDir), modelDir);
}

/** What the GGUF worker is asked, and what it posts: log lines, then the end (the error's message and kind). */
export interface GgufJob {
  modelDir: string;
  weights: GgufWeightType;
}
export type GgufMessage = { log: string } | { end: true; error?: string; unavailable?: boolean };

function workerScript(): string | undefined {
  const candidates = __filename.endsWith('.ts')
    ? [join(__dirname, 'ggufWorker.ts')]
    : [join(__dirname, 'gguf-worker.js'), join(__dirname, 'ggufWorker.js')];
  return candidates.find((p) => existsSync(p));
}

function startWorker(script: string): Worker {
  if (!script.endsWith('.ts')) return new Worker(script);
  // source checkouts (tests under tsx): the worker loads tsx's require hook first; the bundle never comes here
  const hook = require.resolve(['tsx', 'cjs'].join('/'));
  return new Worker(`require(${JSON.stringify(hook)}); require(${JSON.stringify(script)});`, { eval: true });
}

/** Writes the GGUF in a worker thread; an abort terminates the worker (its partial file is removed). */
function writeInWorker(script: string, job: GgufJob, log: (line: string) => void, signal?: AbortSignal): Promise<void> {
  const worker = startWorker(script);
  const partials = () => `${ggufPathOf(job.modelDir, job.weights)}.${process.pid}-${worker.threadId}.partial`;
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => {
      reject(new Error('the GGUF write was cancelled'));
      void worker.terminate().then(() => rmSync(partials(), { force: true }));
    };
    if (signal?.aborted) return onAbort();
    signal?.addEventListener('abort', onAbort, { once: true });
    worker.on('message', (m: GgufMessage) => {
      if ('log' in m) return log(m.log);
      signal?.removeEventListener('abort', onAbort);
      if (m.error === undefined) resolve();
      else reject(m.unavailable ? new LlamaUnavailable(m.error) : new Error(m.error));
      void worker.terminate();
    });
    worker.once('error', (e) => {
      signal?.removeEventListener('abort', onAbort);
      rmSync(partials(), { force: true });
      reject(e);
    });
    worker.once('exit', (code) => reject(new Error(`the GGUF worker exited (code ${code})`)));
    worker.postMessage(job);
  });
}

/**
 * The model folder's GGUF in a weight type: the cached one when up to date, else written now, in a worker thread
 * (on this thread only where no worker script ships, or with `inThread`).
 */
export async function ensureModelGguf(
  modelDir: string,
  weights: GgufWeightType,
  log: (line: string) => void = () => undefined,
  options: { signal?: AbortSignal; inThread?: boolean } = {},
): Promise<string> {
  const path = ggufPathOf(modelDir, weights);
  if (ggufUpToDate(modelDir, weights)) return path;
  const script = options.inThread ? undefined : workerScript();
  if (!script) return writeModelGguf({ modelDir, weights }, log);
  log('llama: the GGUF is written in a worker thread (the backend keeps answering)');
  await writeInWorker(script, { modelDir, weights }, log, options.signal);
  return path;
}

/** Writes the model folder's GGUF on this thread (the worker runs exactly this). */
export async function writeModelGguf({ modelDir, weights }: GgufJob, log: (line: string) => void): Promise<string> {
  const ckpt = checkpointDir(modelDir);
  const path = ggufPathOf(modelDir, weights);
  const meta = metadataDir(modelDir, ckpt);
  const shape = qwen3ShapeFromConfig(JSON.parse(readFileSync(join(meta, 'config.json'), 'utf8')));
  const checkpoint = new SafetensorsCheckpoint(ckpt);
  for (const [name, dims] of qwen3TensorShapes(shape)) {
    if (!checkpoint.has(name)) throw new Error(`checkpoint ${ckpt} lacks tensor ${name}`);
    if (checkpoint.shape(name).join('x') !== dims.join('x'))
      throw new Error(`${name}: shape [${checkpoint.shape(name)}] in the checkpoint, [${dims}] from config.json`);
  }
  const tokenizer = await loadTokenizer(meta);
  const tokenJson = JSON.parse(readFileSync(join(meta, 'tokenizer.json'), 'utf8')) as unknown;
  const eos = tokenizer.eosToken ?? '<|im_end|>';
  const gguf = ggufTokenizerOf(tokenJson, shape.vocabSize, { eos, pad: tokenizer.templateTokens.pad_token ?? eos });
  try {
    mkdirSync(join(modelDir, 'gguf'), { recursive: true });
  } catch (e) {
    // a read-only model folder (or a file in the way): the engine factory falls back to onnx and says why
    throw new LlamaUnavailable(`the GGUF cannot be written beside the model (${(e as Error).message})`);
  }
  // This process's own temporary name: two backends converting at once (two windows) never write into one file.
  const partial = `${path}.${process.pid}-${threadId}.partial`;
  const t0 = Date.now();
  log(`llama: writing ${path} (${weights} matrices) from ${ckpt}`);
  try {
    writeQwen3Gguf(partial, shape, checkpoint, gguf, {
      weights,
      name: basename(modelDir),
      chatTemplate: tokenizer.chatTemplate,
    });
    renameSync(partial, path);
  } catch (e) {
    rmSync(partial, { force: true });
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS' || code === 'ENOSPC')
      throw new LlamaUnavailable(`the GGUF cannot be written beside the model (${(e as Error).message})`);
    throw e;
  }
  log(`llama: GGUF written in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  return path;
}
