// `node --import tsx bench/profileNative.ts [cached=12288] [steps=8] [threads=2]`: one decode step of the C API
// path (backend/model/onnx/gqaDecoder.ts) and one of onnxruntime-genai (bench/genai/profile.py), each under
// onnxruntime's own profiler, on the benchmark's random Qwen3-0.6B weights: kernel time per operator type
// per step, side by side, and each one's step wall time (min / median). KIMINA_ORT_LIBRARY points the C API
// path at another libonnxruntime (the A/B of onnxruntime versions); KIMINA_PROFILE_ONLY=ours|genai runs one.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GqaDecoder } from '../backend/model/onnx/gqaDecoder';
import { ONNX_GQA_FILE, readModelFolder } from '../backend/model/onnx/modelFolder';
import { ensureOnnxModel } from './decodeModel';
import { ensureGenaiModel, GENAI_PYTHON } from './genaiDecode';
import { loadNative, nativeStateWithCached } from './nativeDecode';

interface StepProfile {
  who: string;
  /** Kernel microseconds per operator type, summed over the timed steps. */
  opUs: Record<string, number>;
  modelRunUs: number;
  stepMs: number[];
  steps: number;
}

interface ProfileEvent {
  cat: string;
  name: string;
  ts: number;
  dur: number;
  args?: { op_name?: string };
}

/** Kernel time per operator type inside the last `steps` model runs of an onnxruntime profile. */
function opTotals(events: ProfileEvent[], steps: number): { opUs: Record<string, number>; modelRunUs: number } {
  const timed = events.filter((e) => e.cat === 'Session' && e.name === 'model_run').slice(-steps);
  const opUs: Record<string, number> = {};
  for (const e of events) {
    if (e.cat !== 'Node' || !e.name.endsWith('_kernel_time')) continue;
    if (!timed.some((r) => r.ts <= e.ts && e.ts <= r.ts + r.dur)) continue;
    const op = e.args?.op_name ?? '?';
    opUs[op] = (opUs[op] ?? 0) + e.dur;
  }
  return { opUs, modelRunUs: timed.reduce((a, r) => a + r.dur, 0) };
}

function profileOurs(cached: number, steps: number, threads: number): StepProfile {
  const dir = ensureOnnxModel(4, (s) => console.error(s));
  const folder = readModelFolder(dir);
  const ort = loadNative();
  const tmp = mkdtempSync(join(tmpdir(), 'kimina-native-profile-'));
  const session = ort.createSession(join(dir, ONNX_GQA_FILE), { threads, profilePrefix: join(tmp, 'ort') });
  const decoder = new GqaDecoder(ort, session, folder.shape);
  const state = nativeStateWithCached(decoder, 1, cached, steps + 2);
  const stepMs: number[] = [];
  try {
    decoder.run(state, [[13]]); // warm-up step
    for (let i = 0; i < steps; i++) {
      const t = performance.now();
      decoder.run(state, [[14 + i]]);
      stepMs.push(performance.now() - t);
    }
    const file = session.endProfiling();
    const totals = opTotals(JSON.parse(readFileSync(file, 'utf8')) as ProfileEvent[], steps);
    return { who: `ours, C API path, onnxruntime ${ort.version}`, ...totals, stepMs, steps };
  } finally {
    state.cache.release();
    void decoder.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

function profileGenai(cached: number, steps: number, threads: number): StepProfile | string {
  const model = ensureGenaiModel((s) => console.error(s));
  if (!model.dir) return model.error ?? 'no onnxruntime-genai model';
  const args = JSON.stringify({ dir: model.dir, threads, cached, steps });
  const r = spawnSync(GENAI_PYTHON, [join('bench', 'genai', 'profile.py'), args], {
    encoding: 'utf8',
    maxBuffer: 64 << 20,
    env: { ...process.env, PYTHONNOUSERSITE: '1' },
  });
  if (r.status !== 0) return `onnxruntime-genai profile failed (exit ${r.status}): ${String(r.stderr).slice(-1500)}`;
  const out = JSON.parse(String(r.stdout).trim().split('\n').at(-1)!) as {
    version: string;
    ort_library: string;
    folder: string;
    step_ms: number[];
  };
  try {
    const file = readdirSync(out.folder).find((f) => f.startsWith('ort') && f.endsWith('.json'));
    if (!file) return `onnxruntime-genai wrote no profile in ${out.folder}`;
    const totals = opTotals(JSON.parse(readFileSync(join(out.folder, file), 'utf8')) as ProfileEvent[], steps);
    const ortVersion = /libonnxruntime\.so\.([\d.]+)/.exec(out.ort_library)?.[1] ?? out.ort_library;
    return {
      who: `onnxruntime-genai ${out.version}, onnxruntime ${ortVersion}`,
      ...totals,
      stepMs: out.step_ms,
      steps,
    };
  } finally {
    rmSync(out.folder, { recursive: true, force: true });
  }
}

const ms = (us: number, steps: number) => (us / 1000 / steps).toFixed(1);
const minMedian = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return `${s[0].toFixed(1)} / ${s[Math.floor(s.length / 2)].toFixed(1)}`;
};

function main(): void {
  const cached = Number(process.argv[2] ?? 12288);
  const steps = Number(process.argv[3] ?? 8);
  const threads = Number(process.argv[4] ?? 2);
  const only = process.env.KIMINA_PROFILE_ONLY;
  const load = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  const profiles: StepProfile[] = [];
  for (const [name, run] of [
    ['ours', () => profileOurs(cached, steps, threads)],
    ['genai', () => profileGenai(cached, steps, threads)],
  ] as const) {
    if (only && only !== name) continue;
    const before = load();
    const p = run();
    if (typeof p === 'string') console.log(`${name}: ${p}`);
    else {
      profiles.push(p);
      console.log(`${p.who}: load average ${before} before, ${load()} after`);
    }
  }
  console.log(`\nms per decode step at ${cached} cached, one row, ${threads} threads (${steps} steps):`);
  console.log(`| op | ${profiles.map((p) => p.who).join(' | ')} |`);
  console.log(`|---|${profiles.map(() => '---|').join('')}`);
  const ops = [...new Set(profiles.flatMap((p) => Object.keys(p.opUs)))].sort(
    (a, b) => (profiles[0].opUs[b] ?? 0) - (profiles[0].opUs[a] ?? 0),
  );
  for (const op of ops) console.log(`| ${op} | ${profiles.map((p) => ms(p.opUs[op] ?? 0, p.steps)).join(' | ')} |`);
  const sum = (p: StepProfile) => Object.values(p.opUs).reduce((a, b) => a + b, 0);
  console.log(`| all kernels | ${profiles.map((p) => ms(sum(p), p.steps)).join(' | ')} |`);
  console.log(`| model_run | ${profiles.map((p) => ms(p.modelRunUs, p.steps)).join(' | ')} |`);
  console.log(`| step wall, min / median | ${profiles.map((p) => minMedian(p.stepMs)).join(' | ')} |`);
}

main();
