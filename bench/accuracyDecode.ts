// `node --import tsx bench/accuracyDecode.ts [tiny|0.6b|both]`: chooses the 4-bit MatMulNBits
// accuracy_level from measurements. For levels 0 (float activations) and 4 (int8 activations) on
// seeded random models: greedy agreement of each prompt decoded alone vs all prompts batched together
// (left-padded), vs a float reference (tiny: an fp32 graph of the same dequantized weights; 0.6B: level
// 0 alone), and decode speed at 32 and 512 cached tokens for 1 and 8 rows.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import type { Decoder } from '../backend/model/onnx/decoder';
import { writeOnnxGraph } from '../backend/model/onnx/modelFolder';
import { seededRandom } from '../backend/model/onnx/sampler';
import { CACHE_DIR, ensureOnnxModel } from './decodeModel';
import { measureOurs, openOurs } from './oursDecode';
import { writeTinyModel } from '../backend/demo/models/tinyModel';
import { cachedWeights, q4EffectiveWeights, randomWeights } from '../backend/demo/models/randomWeights';

const log = (s: string) => console.error(s);
const threads = 2;

async function greedy(decoder: Decoder, prompts: number[][], steps: number): Promise<number[][]> {
  const out = prompts.map(() => [] as number[]);
  await decoder.decode(
    { prompts, maxTokens: steps, temperature: 0, topP: 1, seed: 1, eosIds: [] },
    {
      onTokens: (rows, tokens) => rows.forEach((r, i) => out[r].push(tokens[i])),
      isStopped: () => false,
      isCancelled: () => false,
    },
  );
  return out;
}

async function alone(decoder: Decoder, prompts: number[][], steps: number): Promise<number[][]> {
  const out: number[][] = [];
  for (const p of prompts) out.push((await greedy(decoder, [p], steps))[0]);
  return out;
}

/** Rows identical over all steps, and the mean number of leading tokens that agree. */
function agreement(a: number[][], b: number[][]): string {
  let same = 0;
  let prefix = 0;
  a.forEach((row, i) => {
    let k = 0;
    while (k < row.length && row[k] === b[i][k]) k++;
    prefix += k;
    if (k === row.length) same++;
  });
  return `${same}/${a.length} rows identical, mean agreeing prefix ${(prefix / a.length).toFixed(1)}/${a[0].length}`;
}

function randomPrompts(count: number, vocab: number, seed: number): number[][] {
  const r = seededRandom(seed);
  return Array.from({ length: count }, () =>
    Array.from({ length: 4 + Math.floor(r() * 40) }, () => Math.floor(r() * vocab)),
  );
}

async function tiny(): Promise<void> {
  const dir = join(CACHE_DIR, 'accuracy-tiny');
  const steps = 64;
  const runs: Record<string, number[][][]> = {};
  for (const seed of [1, 2, 3]) {
    const prompts = randomPrompts(8, 300, seed);
    for (const level of [0, 4] as const) {
      const d = join(dir, `seed${seed}-acc${level}`);
      const { shape } = writeTinyModel(d, { seed, quant: 'q4', accuracyLevel: level });
      const { decoder, release } = await openOurs(d, threads);
      (runs[`acc${level} alone`] ??= []).push(await alone(decoder, prompts, steps));
      (runs[`acc${level} batched`] ??= []).push(await greedy(decoder, prompts, steps));
      await release();
      if (level === 0) {
        const f = join(dir, `seed${seed}-fp32`);
        mkdirSync(f, { recursive: true });
        writeTinyModel(f, { seed, quant: 'q4' });
        const eff = q4EffectiveWeights(shape, cachedWeights(randomWeights(shape, seed)));
        writeOnnxGraph(f, eff.shape, eff.weights, { quant: 'fp32' });
        const ref = await openOurs(f, threads);
        (runs['fp32 alone'] ??= []).push(await alone(ref.decoder, prompts, steps));
        await ref.release();
      }
    }
  }
  const flat = (k: string) => runs[k].flat();
  console.log(`tiny model (3 seeds x 8 prompts, ${steps} greedy steps):`);
  for (const level of [0, 4]) {
    console.log(
      `  acc${level}: alone vs batched: ${agreement(flat(`acc${level} alone`), flat(`acc${level} batched`))}`,
    );
    console.log(
      `  acc${level}: alone vs fp32 (dequantized weights): ${agreement(flat(`acc${level} alone`), flat('fp32 alone'))}`,
    );
    console.log(`  acc${level}: batched vs fp32: ${agreement(flat(`acc${level} batched`), flat('fp32 alone'))}`);
  }
}

async function large(): Promise<void> {
  const steps = 32;
  const prompts = randomPrompts(8, 150000, 7);
  const tokens: Record<string, number[][]> = {};
  const speed: Record<string, number[]> = {};
  for (let round = 0; round < 2; round++) {
    for (const level of [0, 4]) {
      const dir = ensureOnnxModel(level, log);
      const { decoder, release } = await openOurs(dir, threads);
      if (round === 0) {
        tokens[`acc${level} alone`] = await alone(decoder, prompts, steps);
        tokens[`acc${level} batched`] = await greedy(decoder, prompts, steps);
      }
      for (const [cached, batch] of [
        [32, 1],
        [512, 1],
        [32, 8],
        [512, 8],
      ]) {
        (speed[`acc${level} ${cached}x${batch}`] ??= []).push(
          (await measureOurs(decoder, cached, batch, 8)).tokensPerSecond,
        );
      }
      await release();
    }
  }
  console.log(`Qwen3-0.6B shapes, random weights (8 prompts, ${steps} greedy steps), load ${loadavg()[0].toFixed(1)}:`);
  for (const level of [0, 4])
    console.log(
      `  acc${level}: alone vs batched: ${agreement(tokens[`acc${level} alone`], tokens[`acc${level} batched`])}`,
    );
  console.log(`  acc4 alone vs acc0 alone: ${agreement(tokens['acc4 alone'], tokens['acc0 alone'])}`);
  for (const [k, v] of Object.entries(speed))
    console.log(`  ${k} (cached x rows): ${v.map((x) => x.toFixed(1)).join(', ')} tok/s`);
}

async function main(): Promise<void> {
  const which = process.argv[2] ?? 'both';
  log(
    `load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(' ')}`,
  );
  if (which !== '0.6b') await tiny();
  if (which !== 'tiny') await large();
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
