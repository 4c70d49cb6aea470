// How long the event loop stalls while OnnxEngine generates: decoding on the calling thread versus in
// the worker thread (session.run blocks its thread for a whole forward pass).
import { OnnxEngine } from '../backend/model/onnx/engine';

export async function maxEventLoopStall(
  modelDir: string,
  inThread: boolean,
  tokens: number,
  threads: number,
): Promise<{ stallMs: number; tokensPerSecond: number }> {
  const engine = await OnnxEngine.load(modelDir, { inThread, threads, log: () => undefined });
  try {
    let last = performance.now();
    let worst = 0;
    const timer = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last);
      last = now;
    }, 1);
    const t = performance.now();
    const [g] = await engine.generate([[{ role: 'user', content: 'Prove that 2 + 2 = 4 in Lean 4.' }]], {
      maxTokens: tokens,
      temperature: 0,
      topP: 1,
    });
    const seconds = (performance.now() - t) / 1000;
    clearInterval(timer);
    return { stallMs: worst, tokensPerSecond: g.tokens / seconds };
  } finally {
    await engine.close();
  }
}
