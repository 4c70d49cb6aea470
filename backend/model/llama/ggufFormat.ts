// GGUF v3 (llama.cpp's model file): the metadata value types, the tensor types this project writes, their
// block layouts, and a little-endian byte builder for the header. The format: "GGUF", version, tensor count,
// metadata count, metadata (key, type, value), tensor infos (name, dims, type, offset), then the aligned data.

/** Metadata value types (gguf.h's gguf_type). */
const GGUF_VALUE = { UINT32: 4, INT32: 5, FLOAT32: 6, BOOL: 7, STRING: 8, ARRAY: 9 } as const;

/** The tensor types written here, by ggml_type id, with their blocks: `block` values in `bytes` bytes. */
export const GGML_TYPES = {
  f32: { id: 0, block: 1, bytes: 4, fileType: 0 },
  f16: { id: 1, block: 1, bytes: 2, fileType: 1 },
  q4_0: { id: 2, block: 32, bytes: 18, fileType: 2 },
  q8_0: { id: 8, block: 32, bytes: 34, fileType: 7 },
} as const;

/** The matrices' type in a GGUF this project writes (norms stay float32, as llama.cpp's own converter does). */
export type GgufWeightType = keyof typeof GGML_TYPES;

export const GGUF_ALIGNMENT = 32;

export type GgufValue =
  | { type: 'u32' | 'f32' | 'i32'; value: number }
  | { type: 'bool'; value: boolean }
  | { type: 'str'; value: string }
  | { type: 'strs'; value: string[] }
  | { type: 'i32s'; value: number[] };

/** Bytes of a tensor of `count` values of a type. */
export function tensorBytes(type: GgufWeightType, count: number): number {
  const t = GGML_TYPES[type];
  if (count % t.block !== 0) throw new Error(`${type}: ${count} values is not a whole number of ${t.block}-blocks`);
  return (count / t.block) * t.bytes;
}

/** Collects little-endian header fields as buffers. */
export class HeaderBytes {
  readonly parts: Buffer[] = [];
  private fixed(size: number, write: (b: Buffer) => void): void {
    const b = Buffer.alloc(size);
    write(b);
    this.parts.push(b);
  }
  u32(v: number): void {
    this.fixed(4, (b) => b.writeUInt32LE(v));
  }
  i32(v: number): void {
    this.fixed(4, (b) => b.writeInt32LE(v));
  }
  u64(v: number): void {
    this.fixed(8, (b) => b.writeBigUInt64LE(BigInt(v)));
  }
  f32(v: number): void {
    this.fixed(4, (b) => b.writeFloatLE(v));
  }
  str(s: string): void {
    const b = Buffer.from(s, 'utf8');
    this.u64(b.length);
    this.parts.push(b);
  }
  value(v: GgufValue): void {
    switch (v.type) {
      case 'u32':
        this.u32(GGUF_VALUE.UINT32);
        this.u32(v.value);
        break;
      case 'i32':
        this.u32(GGUF_VALUE.INT32);
        this.i32(v.value);
        break;
      case 'f32':
        this.u32(GGUF_VALUE.FLOAT32);
        this.f32(v.value);
        break;
      case 'bool':
        this.u32(GGUF_VALUE.BOOL);
        this.parts.push(Buffer.from([v.value ? 1 : 0]));
        break;
      case 'str':
        this.u32(GGUF_VALUE.STRING);
        this.str(v.value);
        break;
      case 'strs':
        this.u32(GGUF_VALUE.ARRAY);
        this.u32(GGUF_VALUE.STRING);
        this.u64(v.value.length);
        for (const s of v.value) this.str(s);
        break;
      case 'i32s':
        this.u32(GGUF_VALUE.ARRAY);
        this.u32(GGUF_VALUE.INT32);
        this.u64(v.value.length);
        for (const n of v.value) this.i32(n);
        break;
    }
  }
}
