// The same graph with a float16 KV cache (onnx/model.kv16.onnx, sharing model.onnx_data): half the
// cache memory, at the cost of casting the cache to float32 inside the graph (onnxruntime's float16
// MatMul is slower still on AVX2 CPUs; docs/onnx-engine.md "KV cache precision").
//
// Derived from the float32 graph, never built from the weights again:
// - each `past_key.L` / `past_value.L` (and `shared_key.L` / `shared_value.L`) input becomes float16 and is cast to float32 where it is used;
// - the new tokens' K and V are rounded to float16 (Cast there and back) before anything uses them, so
//   the new tokens attend to the very values the cache will hold: a prompt prefilled at once, token by
//   token or with speculative drafts gives the same result, as with the float32 cache;
// - the `new_key.L` / `new_value.L` outputs are float16 (exact casts of the rounded values), copied
//   into the cache as they are.
import { DataType, type GraphDef, type NodeDef } from './onnxProto';
import { io } from './qwen3Graph';

export const HALF_CACHE_LAYOUT = 'qwen3-split-cache-v1+kv16';

const cast = (name: string, input: string, output: string, to: DataType): NodeDef => ({
  opType: 'Cast',
  name,
  inputs: [input],
  outputs: [output],
  attributes: { to: { kind: 'int', value: to } },
});

export function halfCacheGraph(graph: GraphDef): GraphDef {
  const layers = graph.inputs.filter((i) => i.name.startsWith('past_key.')).length;
  if (layers === 0) throw new Error('internal: halfCacheGraph needs the split-cache layout');
  const cacheInputs = new Set(
    Array.from({ length: layers }, (_, l) => [io.pastKey(l), io.pastValue(l), io.sharedKey(l), io.sharedValue(l)])
      .flat()
      .filter((name) => graph.inputs.some((i) => i.name === name)),
  );
  const newOutputs = new Set(Array.from({ length: layers }, (_, l) => [io.newKey(l), io.newValue(l)]).flat());

  // Renames applied to every node input: cache inputs -> their float32 casts, rounded tensors -> the
  // round trip, float16 outputs -> the float32 tensor they are cast from.
  const rename = new Map<string, string>();
  for (const name of cacheInputs) rename.set(name, `${name}.f32`);
  const nodes: NodeDef[] = [...cacheInputs].map((name) => cast(`${name}.cast`, name, `${name}.f32`, DataType.FLOAT));
  const rounded = new Set<string>(); // tensors feeding a new K/V output (kr, v), rounded once
  for (const node of graph.nodes) {
    for (const output of node.outputs) {
      if (newOutputs.has(output)) {
        if (node.opType !== 'Transpose' || node.inputs.length !== 1)
          throw new Error(`internal: ${output} is not a Transpose of the new K/V`);
        rounded.add(node.inputs[0]);
      }
    }
  }
  for (const name of rounded) rename.set(name, `${name}.r`);
  for (const name of newOutputs) rename.set(name, `${name}.f32`);

  for (const node of graph.nodes) {
    const copy: NodeDef = {
      ...node,
      inputs: node.inputs.map((i) => rename.get(i) ?? i),
      outputs: node.outputs.map((o) => (newOutputs.has(o) ? `${o}.f32` : o)),
    };
    nodes.push(copy);
    for (const output of node.outputs) {
      if (rounded.has(output)) {
        nodes.push(cast(`${output}.to16`, output, `${output}.h`, DataType.FLOAT16));
        nodes.push(cast(`${output}.to32`, `${output}.h`, `${output}.r`, DataType.FLOAT));
      }
      if (newOutputs.has(output)) nodes.push(cast(`${output}.out16`, `${output}.f32`, output, DataType.FLOAT16));
    }
  }
  return {
    ...graph,
    nodes,
    inputs: graph.inputs.map((i) => (cacheInputs.has(i.name) ? { ...i, type: DataType.FLOAT16 } : i)),
    outputs: graph.outputs.map((o) => (newOutputs.has(o.name) ? { ...o, type: DataType.FLOAT16 } : o)),
  };
}
