// Reads Hugging Face safetensors checkpoints (one file or a sharded set with model.safetensors.index.json),
// tensor by tensor, converting F32 / F16 / BF16 to float32.
import { closeSync, existsSync, openSync, readFileSync, readSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { bfloat16ToFloat32, halfToFloat32 } from './numeric';
import type { WeightSource } from './qwen3Graph';

interface Entry {
  file: string;
  dtype: string;
  shape: number[];
  begin: number;
  end: number;
}

const BYTES: Record<string, number> = { F32: 4, F16: 2, BF16: 2 };

function readHeader(path: string): {
  dataStart: number;
  header: Record<string, { dtype: string; shape: number[]; data_offsets: [number, number] }>;
} {
  const fd = openSync(path, 'r');
  try {
    const lenBuf = Buffer.alloc(8);
    if (readSync(fd, lenBuf, 0, 8, 0) !== 8) throw new Error(`${path}: not a safetensors file (too short)`);
    const len = Number(lenBuf.readBigUInt64LE(0));
    if (len <= 0 || len > 100 * 1024 * 1024) throw new Error(`${path}: not a safetensors file (header length ${len})`);
    const json = Buffer.alloc(len);
    readSync(fd, json, 0, len, 8);
    try {
      return { dataStart: 8 + len, header: JSON.parse(json.toString('utf8')) };
    } catch {
      throw new Error(`${path}: safetensors header is not valid JSON`);
    }
  } finally {
    closeSync(fd);
  }
}

export class SafetensorsCheckpoint implements WeightSource {
  private entries = new Map<string, Entry>();
  private dataStart = new Map<string, number>();

  constructor(readonly dir: string) {
    const indexPath = join(dir, 'model.safetensors.index.json');
    let files: string[];
    if (existsSync(indexPath)) {
      const index = JSON.parse(readFileSync(indexPath, 'utf8')) as { weight_map?: Record<string, string> };
      files = [...new Set(Object.values(index.weight_map ?? {}))];
    } else {
      files = readdirSync(dir)
        .filter((f) => f.endsWith('.safetensors'))
        .sort();
    }
    if (files.length === 0) throw new Error(`no *.safetensors files in ${dir}`);
    for (const file of files) {
      const path = join(dir, file);
      if (!existsSync(path)) throw new Error(`checkpoint shard missing: ${path}`);
      const { dataStart, header } = readHeader(path);
      this.dataStart.set(path, dataStart);
      for (const [name, info] of Object.entries(header)) {
        if (name === '__metadata__') continue;
        this.entries.set(name, {
          file: path,
          dtype: info.dtype,
          shape: info.shape,
          begin: info.data_offsets[0],
          end: info.data_offsets[1],
        });
      }
    }
  }

  names(): string[] {
    return [...this.entries.keys()];
  }

  has(name: string): boolean {
    return this.entries.has(name);
  }

  shape(name: string): number[] {
    const e = this.entries.get(name);
    if (!e) throw new Error(`checkpoint has no tensor ${name}`);
    return e.shape;
  }

  get(name: string): Float32Array {
    const e = this.entries.get(name);
    if (!e) throw new Error(`checkpoint has no tensor ${name}`);
    const size = BYTES[e.dtype];
    if (!size) throw new Error(`${name}: dtype ${e.dtype} is not supported (F32, F16, BF16)`);
    const count = e.shape.reduce((a, b) => a * b, 1);
    if (e.end - e.begin !== count * size)
      throw new Error(`${name}: ${e.end - e.begin} bytes for shape [${e.shape}] ${e.dtype}`);
    const bytes = new Uint8Array(e.end - e.begin);
    const fd = openSync(e.file, 'r');
    try {
      let read = 0;
      const at = this.dataStart.get(e.file)! + e.begin;
      while (read < bytes.length) {
        const n = readSync(fd, bytes, read, bytes.length - read, at + read);
        if (n <= 0) throw new Error(`${e.file}: truncated while reading ${name}`);
        read += n;
      }
    } finally {
      closeSync(fd);
    }
    if (e.dtype === 'F32') return new Float32Array(bytes.buffer);
    const halves = new Uint16Array(bytes.buffer);
    return e.dtype === 'BF16' ? bfloat16ToFloat32(halves) : halfToFloat32(halves);
  }
}

/** Writes a safetensors file (tests and tools). Tensors are written in the given dtype. */
export function encodeSafetensors(
  tensors: { name: string; dtype: 'F32' | 'F16' | 'BF16'; shape: number[]; data: Uint8Array }[],
): Buffer {
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  let offset = 0;
  for (const t of tensors) {
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.data.length] };
    offset += t.data.length;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return Buffer.concat([
    len,
    Buffer.from(json),
    ...tensors.map((t) => Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength)),
  ]);
}
