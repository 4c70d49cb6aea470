// ONNX protobuf messages (onnx.proto field numbers) as plain objects, and their serialisation.
import { ProtoWriter } from './protobuf';

export enum DataType {
  FLOAT = 1,
  UINT8 = 2,
  INT8 = 3,
  INT32 = 6,
  INT64 = 7,
  BOOL = 9,
  FLOAT16 = 10,
}

export type Dim = number | string;

export interface TensorInfo {
  name: string;
  type: DataType;
  dims: Dim[];
}

/** An initializer: inline bytes or a range of the external data file. */
export interface Initializer {
  name: string;
  type: DataType;
  dims: number[];
  raw?: Uint8Array;
  external?: { location: string; offset: number; length: number };
}

export type AttributeValue =
  | { kind: 'int'; value: number }
  | { kind: 'float'; value: number }
  | { kind: 'ints'; value: number[] }
  | { kind: 'floats'; value: number[] }
  | { kind: 'string'; value: string }
  | { kind: 'tensor'; value: Initializer };

export interface NodeDef {
  opType: string;
  domain?: string;
  name: string;
  inputs: string[];
  outputs: string[];
  attributes: Record<string, AttributeValue>;
}

export interface GraphDef {
  name: string;
  nodes: NodeDef[];
  initializers: Initializer[];
  inputs: TensorInfo[];
  outputs: TensorInfo[];
}

export interface ModelDef {
  irVersion: number;
  opsets: { domain: string; version: number }[];
  producer: string;
  graph: GraphDef;
  metadata?: Record<string, string>;
}

const ATTR_TYPE = { float: 1, int: 2, string: 3, tensor: 4, floats: 6, ints: 7 } as const;

function tensorProto(t: Initializer): ProtoWriter {
  const w = new ProtoWriter();
  w.packedVarints(1, t.dims);
  w.varint(2, t.type);
  w.string(8, t.name);
  if (t.external) {
    const entry = (k: string, v: string) => new ProtoWriter().string(1, k).string(2, v);
    w.message(13, entry('location', t.external.location));
    w.message(13, entry('offset', String(t.external.offset)));
    w.message(13, entry('length', String(t.external.length)));
    w.varint(14, 1);
  } else {
    w.bytes(9, t.raw ?? new Uint8Array(0));
  }
  return w;
}

function valueInfo(t: TensorInfo): ProtoWriter {
  const shape = new ProtoWriter();
  for (const d of t.dims) {
    const dim = new ProtoWriter();
    if (typeof d === 'number') dim.varint(1, d);
    else dim.string(2, d);
    shape.message(1, dim);
  }
  const tensorType = new ProtoWriter().varint(1, t.type).message(2, shape);
  const type = new ProtoWriter().message(1, tensorType);
  return new ProtoWriter().string(1, t.name).message(2, type);
}

function attribute(name: string, a: AttributeValue): ProtoWriter {
  const w = new ProtoWriter().string(1, name);
  switch (a.kind) {
    case 'float':
      w.float(2, a.value);
      break;
    case 'int':
      w.varint(3, a.value);
      break;
    case 'string':
      w.string(4, a.value);
      break;
    case 'tensor':
      w.message(5, tensorProto(a.value));
      break;
    case 'floats':
      w.packedFloats(7, a.value);
      break;
    case 'ints':
      w.packedVarints(8, a.value);
      break;
  }
  w.varint(20, ATTR_TYPE[a.kind]);
  return w;
}

function nodeProto(n: NodeDef): ProtoWriter {
  const w = new ProtoWriter();
  for (const i of n.inputs) w.string(1, i);
  for (const o of n.outputs) w.string(2, o);
  w.string(3, n.name);
  w.string(4, n.opType);
  for (const [k, v] of Object.entries(n.attributes)) w.message(5, attribute(k, v));
  if (n.domain) w.string(7, n.domain);
  return w;
}

function graphProto(g: GraphDef): ProtoWriter {
  const w = new ProtoWriter();
  for (const n of g.nodes) w.message(1, nodeProto(n));
  w.string(2, g.name);
  for (const t of g.initializers) w.message(5, tensorProto(t));
  for (const i of g.inputs) w.message(11, valueInfo(i));
  for (const o of g.outputs) w.message(12, valueInfo(o));
  return w;
}

/** Serialises a ModelProto. */
export function encodeModel(m: ModelDef): Uint8Array {
  const w = new ProtoWriter();
  w.varint(1, m.irVersion);
  w.string(2, m.producer);
  w.message(7, graphProto(m.graph));
  for (const o of m.opsets) w.message(8, new ProtoWriter().string(1, o.domain).varint(2, o.version));
  for (const [k, v] of Object.entries(m.metadata ?? {})) {
    w.message(14, new ProtoWriter().string(1, k).string(2, v));
  }
  return w.finish();
}
