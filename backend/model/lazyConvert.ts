// The checkpoint converter `pullModel` needs, loaded on first use (it brings in the ONNX graph builder).
import type { ConvertCheckpoint } from './modelStore';

export const convertLazily: ConvertCheckpoint = async (src, out, { quantize, onProgress }) => {
  const { convertCheckpoint } = await import('./onnx/convert');
  return convertCheckpoint(src, out, {
    quantize,
    onProgress: (p) => onProgress?.({ done: p.done, total: p.total, stage: p.tensor }),
  });
};
