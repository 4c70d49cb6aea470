// Builds an ONNX graph node by node. Large initializers can be streamed to an external data file
// as they are added, so converting a real checkpoint never holds the whole model in memory.
import { closeSync, openSync, writeSync } from 'node:fs';
import { basename } from 'node:path';
import {
  DataType,
  encodeModel,
  type AttributeValue,
  type Dim,
  type GraphDef,
  type Initializer,
  type NodeDef,
  type TensorInfo,
} from './onnxProto';

export const attr = {
  int: (value: number): AttributeValue => ({ kind: 'int', value }),
  float: (value: number): AttributeValue => ({ kind: 'float', value }),
  ints: (value: number[]): AttributeValue => ({ kind: 'ints', value }),
  floats: (value: number[]): AttributeValue => ({ kind: 'floats', value }),
  string: (value: string): AttributeValue => ({ kind: 'string', value }),
};

export type TensorData = Float32Array | Uint8Array | Int32Array | BigInt64Array | Uint16Array;

function bytesOf(data: TensorData): Uint8Array {
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

/** Appends tensors to one external data file (offsets aligned to 64 bytes). */
export class ExternalDataFile {
  private fd: number;
  private offset = 0;
  readonly location: string;

  constructor(readonly path: string) {
    this.fd = openSync(path, 'w');
    this.location = basename(path);
  }

  append(bytes: Uint8Array): { location: string; offset: number; length: number } {
    const pad = (64 - (this.offset % 64)) % 64;
    if (pad > 0) {
      writeSync(this.fd, new Uint8Array(pad));
      this.offset += pad;
    }
    const at = this.offset;
    let written = 0;
    while (written < bytes.length) written += writeSync(this.fd, bytes, written, bytes.length - written);
    this.offset += bytes.length;
    return { location: this.location, offset: at, length: bytes.length };
  }

  get bytesWritten(): number {
    return this.offset;
  }

  close(): void {
    closeSync(this.fd);
  }
}

export interface NodeOptions {
  domain?: string;
  /** Number of outputs (default 1). */
  outputs?: number;
  /** Explicit output names (graph outputs). */
  outputNames?: string[];
}

export class GraphBuilder {
  private nodes: NodeDef[] = [];
  private initializers: Initializer[] = [];
  private inputs: TensorInfo[] = [];
  private outputs: TensorInfo[] = [];
  private counter = 0;
  private constants = new Map<string, string>();
  /** Initializers of another graph written to the same external data file, taken by name instead of written again. */
  private shared = new Map<string, Initializer>();

  /**
   * @param external where initializers of at least `externalMinBytes` go; inline when absent.
   */
  constructor(
    readonly name: string,
    private external?: ExternalDataFile,
    private externalMinBytes = 1024,
  ) {}

  input(name: string, type: DataType, dims: Dim[]): string {
    this.inputs.push({ name, type, dims });
    return name;
  }

  output(name: string, type: DataType, dims: Dim[]): void {
    this.outputs.push({ name, type, dims });
  }

  /** Lets this graph take `graph`'s external initializers by name (both graphs use one external data file). */
  shareInitializers(graph: GraphDef): void {
    for (const init of graph.initializers) if (init.external) this.shared.set(init.name, init);
  }

  /** Adds the shared initializer `name` when there is one (the caller then need not compute its values). */
  reuse(name: string): boolean {
    const init = this.shared.get(name);
    if (!init || this.initializers.includes(init)) return !!init;
    this.initializers.push(init);
    return true;
  }

  initializer(name: string, type: DataType, dims: number[], data: TensorData): string {
    const known = this.shared.get(name);
    if (known && known.type === type && known.dims.join('x') === dims.join('x')) {
      this.reuse(name);
      return name;
    }
    const expected = dims.reduce((a, b) => a * b, 1);
    const perElement =
      type === DataType.UINT8 || type === DataType.INT8
        ? 1
        : type === DataType.FLOAT16
          ? 2
          : type === DataType.INT64
            ? 8
            : 4;
    if (data.byteLength !== expected * perElement) {
      throw new Error(`initializer ${name}: ${data.byteLength} bytes for dims [${dims}] of type ${DataType[type]}`);
    }
    const bytes = bytesOf(data);
    const init: Initializer = { name, type, dims };
    if (this.external && bytes.length >= this.externalMinBytes) init.external = this.external.append(bytes);
    else init.raw = bytes.slice();
    this.initializers.push(init);
    return name;
  }

  /** A shared float32 or int64 constant initializer (deduplicated by value). */
  constFloat(values: number[], dims: number[] = [values.length]): string {
    return this.constant('f', values, dims, () => Float32Array.from(values), DataType.FLOAT);
  }

  constInt64(values: number[], dims: number[] = [values.length]): string {
    return this.constant('i', values, dims, () => BigInt64Array.from(values.map(BigInt)), DataType.INT64);
  }

  private constant(kind: string, values: number[], dims: number[], make: () => TensorData, type: DataType): string {
    const key = `${kind}:${dims.join('x')}:${values.join(',')}`;
    const known = this.constants.get(key);
    if (known) return known;
    const name = `const_${kind}_${this.constants.size}`;
    const saved = this.external;
    this.external = undefined; // constants stay inline
    this.initializer(name, type, dims, make());
    this.external = saved;
    this.constants.set(key, name);
    return name;
  }

  /** Adds a node and returns its output names. */
  nodeN(
    opType: string,
    inputs: string[],
    attributes: Record<string, AttributeValue> = {},
    options: NodeOptions = {},
  ): string[] {
    const id = this.counter++;
    const outputs =
      options.outputNames ?? Array.from({ length: options.outputs ?? 1 }, (_, i) => `${opType}_${id}_${i}`);
    this.nodes.push({ opType, domain: options.domain, name: `${opType}_${id}`, inputs, outputs, attributes });
    return outputs;
  }

  /** Adds a single-output node and returns its output name. */
  node(
    opType: string,
    inputs: string[],
    attributes: Record<string, AttributeValue> = {},
    options: NodeOptions = {},
  ): string {
    return this.nodeN(opType, inputs, attributes, options)[0];
  }

  graph(): GraphDef {
    return {
      name: this.name,
      nodes: this.nodes,
      initializers: this.initializers,
      inputs: this.inputs,
      outputs: this.outputs,
    };
  }

  /** Serialises the model (opset 17 plus com.microsoft for contrib ops); `graph`: a derived form of this graph. */
  encode(metadata?: Record<string, string>, graph: GraphDef = this.graph()): Uint8Array {
    return encodeModel({
      irVersion: 8,
      producer: 'kimina-prover',
      opsets: [
        { domain: '', version: 17 },
        { domain: 'com.microsoft', version: 1 },
      ],
      graph,
      metadata,
    });
  }
}
