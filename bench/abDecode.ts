// `node --import tsx bench/abDecode.ts`: interleaved A/B of the graph changes of issue 24 on the
// benchmark's 0.6B-shaped 4-bit model, 2 threads: each variant decodes 1 row and 8 rows at 32, 512 and
// 4096 cached tokens, the variants taking turns within every round (a shared machine's load changes
// from minute to minute; ratios within a round survive it better than absolute figures). Variants:
//   base     the graph before issue 24 (in-graph RMSNorm and RoPE, no shared-prefix inputs)
//   +norm    RMSNorm as SimplifiedLayerNormalization
//   +rope    and RoPE as com.microsoft RotaryEmbedding
//   +shared  and the shared-prefix inputs, rows each with their own cache (the cost of the inputs)
//   shared   the same graph, 8 rows continuing one shared prompt (pass@n); 1 row: its prompt as prefix
//   spin     the final graph with spinning threads (allow_spinning 1)
// Prints one table per point (median (min–max) over rounds) and the machine's load. Env:
// KIMINA_AB_ROUNDS (3), KIMINA_AB_STEPS (10), KIMINA_AB_VARIANTS (comma list), KIMINA_AB_POINTS, KIMINA_AB_ROWS.
import { loadavg } from 'node:os';
import { ensureOnnxModel, type GraphVariant, QWEN3_06B } from './decodeModel';
import { measureOurs, openOurs } from './oursDecode';

const rounds = Number(process.env.KIMINA_AB_ROUNDS ?? 3);
const steps = Number(process.env.KIMINA_AB_STEPS ?? 10);
const threads = Number(process.env.KIMINA_BENCH_THREADS ?? 2);
const points = (process.env.KIMINA_AB_POINTS ?? '32,512,4096').split(',').map(Number);
const rowCounts = (process.env.KIMINA_AB_ROWS ?? '1,8').split(',').map(Number);
const log = (s: string) => console.error(s);

interface Variant {
  name: string;
  graph: GraphVariant;
  shared?: boolean;
  spinning?: boolean;
}
const ALL: Variant[] = [
  { name: 'base', graph: { fusedNorm: false, fusedRope: false, sharedPrefix: false } },
  { name: '+norm', graph: { fusedRope: false, sharedPrefix: false } },
  { name: '+rope', graph: { sharedPrefix: false } },
  { name: '+shared', graph: {} },
  { name: 'shared', graph: {}, shared: true },
  { name: 'spin', graph: {}, shared: true, spinning: true },
];
const wanted = process.env.KIMINA_AB_VARIANTS?.split(',');
const variants = wanted ? ALL.filter((v) => wanted.includes(v.name)) : ALL;

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const range = (xs: number[]) =>
  xs.length > 1
    ? `${median(xs).toFixed(1)} (${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)})`
    : (xs[0]?.toFixed(1) ?? 'n/a');

async function main(): Promise<void> {
  const load0 = loadavg()[0];
  const dirs = new Map(variants.map((v) => [v.name, ensureOnnxModel(4, log, QWEN3_06B, v.graph)]));
  const results = new Map<string, number[]>(); // `${variant}|${rows}|${cached}`
  for (let r = 1; r <= rounds; r++) {
    log(`round ${r}/${rounds} (load ${loadavg()[0].toFixed(1)})`);
    // Rotate the order every round, so no variant always runs first (or right after another).
    const order = variants.map((_, i) => variants[(i + r - 1) % variants.length]);
    for (const v of order) {
      const { decoder, release } = await openOurs(dirs.get(v.name)!, threads, 'fp32', { spinning: v.spinning });
      const line: string[] = [];
      for (const rows of rowCounts)
        for (const cached of points) {
          const m = await measureOurs(
            decoder,
            cached,
            rows,
            rows * cached > 8 * 2048 ? Math.min(steps, 5) : steps,
            !!v.shared,
          );
          const key = `${v.name}|${rows}|${cached}`;
          results.set(key, [...(results.get(key) ?? []), m.tokensPerSecond]);
          line.push(`${rows}×${cached}: ${m.tokensPerSecond.toFixed(1)}`);
        }
      await release();
      log(`  ${v.name}: ${line.join(', ')}`);
    }
  }
  const load = `load average ${load0.toFixed(1)} at the start, ${loadavg()[0].toFixed(1)} at the end`;
  console.log(
    `\nA/B, tokens/s (aggregate), ${threads} threads, ${rounds} rounds interleaved, median (min–max); ${load}\n`,
  );
  const cols = rowCounts.flatMap((rows) => points.map((c) => `${rows} row${rows > 1 ? 's' : ''} @${c}`));
  console.log(`| variant | ${cols.join(' | ')} |`);
  console.log(`|---|${cols.map(() => '---').join('|')}|`);
  for (const v of variants)
    console.log(
      `| ${v.name} | ${rowCounts.flatMap((rows) => points.map((c) => range(results.get(`${v.name}|${rows}|${c}`) ?? []))).join(' | ')} |`,
    );
  // Each change against the variant before it, per round (paired ratios), median.
  console.log('\npaired ratios (median over rounds of variant / previous variant):');
  for (let i = 1; i < variants.length; i++) {
    const a = variants[i];
    const b = variants[i - 1];
    const ratios = rowCounts.flatMap((rows) =>
      points.map((c) => {
        const x = results.get(`${a.name}|${rows}|${c}`) ?? [];
        const y = results.get(`${b.name}|${rows}|${c}`) ?? [];
        return `${rows}×${c} ${median(x.map((v, k) => v / y[k])).toFixed(2)}`;
      }),
    );
    console.log(`  ${a.name} / ${b.name}: ${ratios.join(', ')}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
