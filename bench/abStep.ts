// `node --expose-gc --import tsx bench/abStep.ts`: step-interleaved A/B of two graph variants on the
// benchmark's 0.6B-shaped 4-bit model: both sessions are open at once and their decode steps alternate
// (A, B, A, B, ...), so both meet the same machine load at the same moments; the figure is the median of
// the paired per-step ratios (A's step time / B's: above 1, B is faster), which survives a busy shared
// machine far better than separate runs (bench/abDecode.ts). Pairs and points from the environment:
// KIMINA_AB_PAIRS (default base:+norm,+norm:+rope,+rope:+shared,base:+shared), KIMINA_AB_POINTS
// (rows×cached, default 1x32,1x512,1x4096,8x32,8x512), KIMINA_AB_STEPS (24), and `shared` as B to compare
// rows sharing a prompt (+shared graph) against the same rows each with its own cache.
import { loadavg } from 'node:os';
import { ensureOnnxModel, QWEN3_06B, type GraphVariant } from './decodeModel';
import { openOurs, stateWithCached, stateWithShared } from './oursDecode';
import type { BatchState, Decoder } from '../backend/model/onnx/decoder';

const VARIANTS: Record<string, { graph: GraphVariant; shared?: boolean; spinning?: boolean }> = {
  base: { graph: { fusedNorm: false, fusedRope: false, sharedPrefix: false } },
  '+norm': { graph: { fusedRope: false, sharedPrefix: false } },
  '+rope': { graph: { sharedPrefix: false } },
  '+shared': { graph: {} },
  shared: { graph: {}, shared: true },
  spin: { graph: {}, shared: true, spinning: true },
};
const pairs = (process.env.KIMINA_AB_PAIRS ?? 'base:+norm,+norm:+rope,+rope:+shared,base:+shared')
  .split(',')
  .map((p) => p.split(':') as [string, string]);
const points = (process.env.KIMINA_AB_POINTS ?? '1x32,1x512,1x4096,8x32,8x512')
  .split(',')
  .map((p) => p.split('x').map(Number) as [number, number]);
const steps = Number(process.env.KIMINA_AB_STEPS ?? 24);
const threads = Number(process.env.KIMINA_BENCH_THREADS ?? 2);
const log = (s: string) => console.error(s);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

function state(decoder: Decoder, shared: boolean, rows: number, cached: number, room: number): BatchState {
  return shared ? stateWithShared(decoder, rows, cached, 0, room) : stateWithCached(decoder, rows, cached, room);
}

async function main(): Promise<void> {
  const load0 = loadavg()[0];
  const lines: string[] = [];
  for (const [a, b] of pairs) {
    const va = VARIANTS[a];
    const vb = VARIANTS[b];
    const A = await openOurs(ensureOnnxModel(4, log, QWEN3_06B, va.graph), threads, 'fp32', { spinning: va.spinning });
    const B = await openOurs(ensureOnnxModel(4, log, QWEN3_06B, vb.graph), threads, 'fp32', { spinning: vb.spinning });
    const cells: string[] = [];
    for (const [rows, cached] of points) {
      const n = rows * cached > 8 * 1024 ? Math.max(6, Math.floor(steps / 3)) : steps;
      let sa: BatchState | undefined = state(A.decoder, !!va.shared, rows, cached, n + 2);
      let sb: BatchState | undefined = state(B.decoder, !!vb.shared, rows, cached, n + 2);
      const token = () => Array.from({ length: rows }, (_, r) => [(r * 7919 + 13) % 150000]);
      await A.decoder.feed(sa, token()); // warm-up
      await B.decoder.feed(sb, token());
      const ratios: number[] = [];
      const ta: number[] = [];
      const tb: number[] = [];
      for (let i = 0; i < n; i++) {
        // Alternate which goes first, so neither always follows the other.
        const order = i % 2 === 0 ? ([0, 1] as const) : ([1, 0] as const);
        const t = [0, 0];
        for (const k of order) {
          const s0 = performance.now();
          if (k === 0) await A.decoder.feed(sa, token());
          else await B.decoder.feed(sb, token());
          t[k] = performance.now() - s0;
        }
        ta.push(t[0]);
        tb.push(t[1]);
        ratios.push(t[0] / t[1]);
      }
      sa = sb = undefined;
      gc();
      const cell = `${median(ratios).toFixed(3)} (A ${((1000 * rows) / median(ta)).toFixed(1)}, B ${((1000 * rows) / median(tb)).toFixed(1)} tok/s, ${n} pairs, load ${loadavg()[0].toFixed(1)})`;
      cells.push(cell); // the table's column names the point
      log(`  ${b} vs ${a}, ${rows}×${cached}: ${cell}`);
    }
    await A.release();
    await B.release();
    gc();
    lines.push(`| ${b} vs ${a} | ${cells.join(' | ')} |`);
  }
  console.log(
    `\nstep-interleaved A/B, ${threads} threads: median of paired step-time ratios A/B (> 1: B faster), B's and A's median tok/s; load average ${load0.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end\n`,
  );
  console.log(`| B vs A | ${points.map(([r, c]) => `${r}×${c}`).join(' | ')} |`);
  console.log(`|---|${points.map(() => '---').join('|')}|`);
  for (const l of lines) console.log(l);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
