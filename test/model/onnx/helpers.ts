// Shared helpers for the ONNX engine tests: temporary model folders and a loaded decoder.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { Decoder, type DecoderOptions } from '../../../backend/model/onnx/decoder';
import { graphPath, readModelFolder } from '../../../backend/model/onnx/modelFolder';
import { createSession } from '../../../backend/model/onnx/session';
import { GqaDecoder } from '../../../backend/model/onnx/gqaDecoder';
import { OrtNative } from '../../../backend/model/onnx/ortNative';

/** A temporary folder removed when the test file ends. */
export function tempDir(prefix = 'kimina-onnx-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A decoder over the folder's graph; `kvCache: 'fp16'` takes its float16-cache graph (model.kv16.onnx). */
export async function loadDecoder(
  modelDir: string,
  options: DecoderOptions = {},
  kvCache: 'fp32' | 'fp16' = 'fp32',
): Promise<Decoder> {
  const folder = readModelFolder(modelDir);
  const { session } = await createSession(graphPath(folder, kvCache), { threads: 1 });
  after(() => session.release());
  return new Decoder(session, folder.shape, options);
}

/** A decoder over the folder's GQA graph through onnxruntime's C API (the engine's default path). */
export function loadGqaDecoder(modelDir: string, threads = 1, int8 = false): GqaDecoder {
  const folder = readModelFolder(modelDir);
  const path = int8 ? folder.onnxGqaInt8Path : folder.onnxGqaPath;
  if (!path) throw new Error(`${modelDir} has no ${int8 ? 'int8-cache ' : ''}GQA graph`);
  const ort = OrtNative.load();
  const decoder = new GqaDecoder(ort, ort.createSession(path, { threads }), folder.shape, { int8 });
  after(() => decoder.close());
  return decoder;
}

export { q4EffectiveWeights } from '../../../backend/demo/models/randomWeights';

export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) throw new Error(`length ${a.length} vs ${b.length}`);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

export function argmaxOf(a: ArrayLike<number>, from = 0, to = a.length): number {
  let best = from;
  for (let i = from; i < to; i++) if (a[i] > a[best]) best = i;
  return best - from;
}
