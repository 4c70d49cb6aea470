// A GGUF v3 reader for the tests (a test tool, written from the format's description, not from our writer):
// the header, every metadata value, the tensor infos, and each tensor's values dequantized to float64.
import { readFileSync } from 'node:fs';
import { fromHalf } from '../../../backend/model/onnx/numeric';

export interface GgufTensorInfo {
  name: string;
  dims: number[];
  type: number;
  offset: number;
}

export interface ParsedGguf {
  version: number;
  metadata: Map<string, unknown>;
  tensors: GgufTensorInfo[];
  dataStart: number;
  bytes: Buffer;
}

export function readGguf(path: string): ParsedGguf {
  const bytes = readFileSync(path);
  let at = 0;
  const u32 = () => ((at += 4), bytes.readUInt32LE(at - 4));
  const u64 = () => ((at += 8), Number(bytes.readBigUInt64LE(at - 8)));
  const str = () => {
    const n = u64();
    at += n;
    return bytes.toString('utf8', at - n, at);
  };
  const value = (type: number): unknown => {
    switch (type) {
      case 0:
        return bytes.readUInt8(at++);
      case 4:
        return u32();
      case 5:
        return ((at += 4), bytes.readInt32LE(at - 4));
      case 6:
        return ((at += 4), bytes.readFloatLE(at - 4));
      case 7:
        return bytes.readUInt8(at++) !== 0;
      case 8:
        return str();
      case 9: {
        const inner = u32();
        const n = u64();
        return Array.from({ length: n }, () => value(inner));
      }
      default:
        throw new Error(`GGUF value type ${type} not handled by the test reader`);
    }
  };
  if (bytes.toString('latin1', 0, 4) !== 'GGUF') throw new Error('not a GGUF file');
  at = 4;
  const version = u32();
  const tensorCount = u64();
  const kvCount = u64();
  const metadata = new Map<string, unknown>();
  for (let i = 0; i < kvCount; i++) {
    const key = str();
    metadata.set(key, value(u32()));
  }
  const tensors: GgufTensorInfo[] = [];
  for (let i = 0; i < tensorCount; i++) {
    const name = str();
    const nd = u32();
    const dims = Array.from({ length: nd }, () => u64());
    tensors.push({ name, dims, type: u32(), offset: u64() });
  }
  const align = (metadata.get('general.alignment') as number | undefined) ?? 32;
  return { version, metadata, tensors, dataStart: Math.ceil(at / align) * align, bytes };
}

/** A tensor's values as float64, for ggml types F32 (0), F16 (1), Q4_0 (2) and Q8_0 (8). */
export function dequantize(g: ParsedGguf, t: GgufTensorInfo): Float64Array {
  const n = t.dims.reduce((a, b) => a * b, 1);
  const base = g.dataStart + t.offset;
  const b = g.bytes;
  const out = new Float64Array(n);
  switch (t.type) {
    case 0:
      for (let i = 0; i < n; i++) out[i] = b.readFloatLE(base + 4 * i);
      return out;
    case 1:
      for (let i = 0; i < n; i++) out[i] = fromHalf(b.readUInt16LE(base + 2 * i));
      return out;
    case 2:
      for (let k = 0; k < n / 32; k++) {
        const d = fromHalf(b.readUInt16LE(base + 18 * k));
        for (let j = 0; j < 16; j++) {
          const q = b[base + 18 * k + 2 + j];
          out[32 * k + j] = ((q & 15) - 8) * d;
          out[32 * k + 16 + j] = ((q >> 4) - 8) * d;
        }
      }
      return out;
    case 8:
      for (let k = 0; k < n / 32; k++) {
        const d = fromHalf(b.readUInt16LE(base + 34 * k));
        for (let j = 0; j < 32; j++) out[32 * k + j] = b.readInt8(base + 34 * k + 2 + j) * d;
      }
      return out;
    default:
      throw new Error(`ggml type ${t.type} not handled by the test reader`);
  }
}
