// A minimal protobuf (proto3 wire format) writer: varints, fixed32 floats, length-delimited fields.
// Enough to serialise ONNX's ModelProto without a code generator.

const textEncoder = new TextEncoder();

export class ProtoWriter {
  private chunks: Uint8Array[] = [];
  private scratch: number[] = [];
  private size = 0;

  get length(): number {
    return this.size + this.scratch.length;
  }

  private flushScratch(): void {
    if (this.scratch.length === 0) return;
    this.chunks.push(Uint8Array.from(this.scratch));
    this.size += this.scratch.length;
    this.scratch = [];
  }

  private rawVarint(value: bigint | number): void {
    // Negative int64 values are written as their 64-bit two's complement (10 bytes), as protobuf does.
    let v = BigInt.asUintN(64, BigInt(value));
    while (v >= 0x80n) {
      this.scratch.push(Number(v & 0x7fn) | 0x80);
      v >>= 7n;
    }
    this.scratch.push(Number(v));
  }

  private tag(field: number, wireType: 0 | 2 | 5): void {
    this.rawVarint((field << 3) | wireType);
  }

  /** int32 / int64 / enum / bool field. */
  varint(field: number, value: number | bigint): this {
    this.tag(field, 0);
    this.rawVarint(value);
    return this;
  }

  float(field: number, value: number): this {
    this.tag(field, 5);
    const b = new Uint8Array(4);
    new DataView(b.buffer).setFloat32(0, value, true);
    this.scratch.push(...b);
    return this;
  }

  bytes(field: number, data: Uint8Array): this {
    this.tag(field, 2);
    this.rawVarint(data.length);
    this.flushScratch();
    if (data.length > 0) {
      this.chunks.push(data);
      this.size += data.length;
    }
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, textEncoder.encode(value));
  }

  message(field: number, inner: ProtoWriter): this {
    return this.bytes(field, inner.finish());
  }

  /** Packed repeated varints (repeated int64 in proto3 is packed by default). */
  packedVarints(field: number, values: readonly (number | bigint)[]): this {
    const inner = new ProtoWriter();
    for (const v of values) inner.rawVarint(v);
    return this.bytes(field, inner.finish());
  }

  packedFloats(field: number, values: readonly number[]): this {
    const b = new Uint8Array(values.length * 4);
    const view = new DataView(b.buffer);
    values.forEach((v, i) => view.setFloat32(i * 4, v, true));
    return this.bytes(field, b);
  }

  finish(): Uint8Array {
    this.flushScratch();
    if (this.chunks.length === 1) return this.chunks[0];
    const out = new Uint8Array(this.size);
    let at = 0;
    for (const c of this.chunks) {
      out.set(c, at);
      at += c.length;
    }
    this.chunks = [out];
    return out;
  }
}
