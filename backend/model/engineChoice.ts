// kimina.engine = auto (issue 32): the in-process engine is chosen per machine by the engines' calibrated cost
// models (schedule.ts): the expected time to the first verified proof over the recipe's answers at each engine's
// chosen rows; the earlier wins. The choice and why are stored beside the model's calibrations
// (`engine-choice.json`, keyed by machine and the settings speed depends on), read back on later starts, shown in
// the engine's status line and `kimina model list`; `kimina model calibrate` compares again. Naming an engine in
// kimina.engine overrides it.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { errorKindOf, type ChatMessage, type ErrorKind } from '../protocol';
import type { Engine, Generation, OnDelta, SamplingOptions } from './engine';
import type { LlamaFailure } from './llamaRetry';
import { aboutTime, type Schedule, type StepCost } from './schedule';

/** The engines auto chooses between. */
export type InProcessKind = 'onnx' | 'llama';

/** One candidate's result: its estimate, or why it has none. */
export interface EngineEstimate {
  engine: InProcessKind;
  /** The engine and where it runs: 'onnx', 'llama (cuda)'. */
  label: string;
  rows?: number;
  expectedFirstProofSeconds?: number;
  /** The cost model the estimate comes from, and whether it was timed now (else read back). */
  cost?: StepCost;
  calibratedNow?: boolean;
  /** Why there is no estimate: it did not load, or has no calibrated cost model. */
  none?: string;
}

export interface EngineChoice {
  engine: InProcessKind;
  label: string;
  /** The choice in words: "engine auto → llama (cuda): first proof ~12 min vs onnx ~58 min". */
  words: string;
  /** Every candidate compared (none: only one was a candidate). */
  estimates: EngineEstimate[];
  /** When it was chosen (ISO time). */
  at: string;
  /** llama.cpp failed (to install, load or calibrate): why, and what it depended on (llamaRetry.ts). */
  llamaFailure?: LlamaFailure;
}

const FILE = 'engine-choice.json';

/** The machine and the settings the engines' speeds depend on: a stored choice holds for these only. */
export function machineKey(c: {
  threads?: number;
  device?: string;
  kvCache?: string;
  llamaGpu?: string;
  llamaWeights?: string;
  rowsAtOnce?: number;
}): string {
  const cpu = cpus();
  return [
    `${process.platform}-${process.arch}`,
    `${cpu[0]?.model ?? 'cpu'} × ${cpu.length}`,
    `${c.threads ?? 'all'} threads`,
    `onnx ${c.device ?? 'cpu'} ${c.kvCache ?? 'auto'}`,
    `llama ${c.llamaGpu ?? 'auto'} ${c.llamaWeights ?? 'q8_0'}`,
    `rows ${c.rowsAtOnce ?? 0}`,
  ].join('/');
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readChoices(dir: string): Record<string, unknown> {
  try {
    const file = join(dir, FILE);
    const all: unknown = existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')) : {};
    return isRecord(all) ? all : {};
  } catch {
    return {};
  }
}

/** Whether a stored entry has what auto reads (a hand-edited or half-written file holds anything). */
function isChoice(v: unknown): v is EngineChoice {
  if (!isRecord(v) || (v.engine !== 'onnx' && v.engine !== 'llama') || typeof v.at !== 'string') return false;
  if (typeof v.words !== 'string' || !Array.isArray(v.estimates) || !v.estimates.every(isRecord)) return false;
  const f = v.llamaFailure;
  if (f === undefined) return true;
  const d = isRecord(f) ? f.depends : undefined;
  return (
    isRecord(f) &&
    typeof f.why === 'string' &&
    typeof f.at === 'string' &&
    !Number.isNaN(Date.parse(f.at)) &&
    isRecord(d) &&
    ['nodeLlamaCpp', 'gpu', 'gguf'].every((k) => typeof d[k] === 'string')
  );
}

/** The stored choice for this machine and settings, if any (one auto cannot read is none: it compares again). */
export function readChoice(dir: string, key: string): EngineChoice | undefined {
  const choice = readChoices(dir)[key];
  return isChoice(choice) ? choice : undefined;
}

/** Stores a choice (a read-only model folder keeps nothing: the next start compares again). */
export function storeChoice(dir: string, key: string, choice: EngineChoice): void {
  try {
    writeFileSync(join(dir, FILE), JSON.stringify({ ...readChoices(dir), [key]: choice }, null, 2) + '\n');
  } catch {
    /* read-only */
  }
}

/** Forgets every stored choice of a model (`kimina model calibrate --again`). */
export function forgetChoices(dir: string): void {
  try {
    if (existsSync(join(dir, FILE))) writeFileSync(join(dir, FILE), '{}\n');
  } catch {
    /* read-only */
  }
}

function estimateWords(e: EngineEstimate): string {
  return e.expectedFirstProofSeconds === undefined
    ? `${e.label}: ${e.none ?? 'no estimate'}`
    : `${e.label} ${aboutTime(e.expectedFirstProofSeconds)}`;
}

/** The label of a loaded in-process engine: 'onnx', or 'llama (cuda)' with llama.cpp's backend. */
function labelOf(kind: InProcessKind, engine: Engine): string {
  const backend = (engine as { backend?: unknown }).backend;
  return kind === 'llama' && typeof backend === 'string' ? `llama (${backend})` : kind;
}

/** A choice with one candidate: no comparison, the reason the other is not one. */
export function soleChoice(engine: InProcessKind, label: string, why: string): EngineChoice {
  return { engine, label, words: `engine auto → ${label}: ${why}`, estimates: [], at: new Date().toISOString() };
}

/** The choice among estimates: the least expected time to the first verified proof; without any, the first. */
export function choose(estimates: EngineEstimate[]): EngineChoice {
  if (estimates.length === 0) throw new Error('internal: no engine to choose from');
  const timed = estimates.filter((e) => e.expectedFirstProofSeconds !== undefined);
  const best = timed.length
    ? timed.reduce((x, y) => (y.expectedFirstProofSeconds! < x.expectedFirstProofSeconds! ? y : x))
    : estimates[0];
  const others = estimates.filter((e) => e !== best).map(estimateWords);
  const first =
    best.expectedFirstProofSeconds === undefined
      ? `no calibrated cost model (${estimates.map(estimateWords).join('; ')})`
      : `first proof ${aboutTime(best.expectedFirstProofSeconds)}${others.length ? ` vs ${others.join(', ')}` : ''}`;
  return {
    engine: best.engine,
    label: best.label,
    words: `engine auto → ${best.label}: ${first}`,
    estimates,
    at: new Date().toISOString(),
  };
}

/** A candidate: how to load it (a LlamaUnavailable or any other error drops it, saying why). */
export interface Candidate {
  kind: InProcessKind;
  load(): Promise<Engine>;
}

/** The estimate of a loaded engine: its schedule (calibrating now on first use on this device). */
export async function estimateOf(kind: InProcessKind, engine: Engine): Promise<EngineEstimate> {
  const label = labelOf(kind, engine);
  let schedule: Schedule | undefined;
  try {
    schedule = await engine.schedule?.();
  } catch (err) {
    return { engine: kind, label, none: `the calibration failed (${(err as Error).message})` };
  }
  if (schedule?.expectedFirstProofSeconds === undefined)
    return { engine: kind, label, none: 'no calibrated cost model on its decoding path' };
  return {
    engine: kind,
    label,
    rows: schedule.rows,
    expectedFirstProofSeconds: schedule.expectedFirstProofSeconds,
    cost: schedule.cost,
    calibratedNow: schedule.calibratedNow,
  };
}

/**
 * Loads and calibrates every candidate, one at a time (each closed before the next loads), and chooses. Returns
 * the choice and the winner, loaded again unless it was the last one compared. Throws only when none loads.
 */
export async function compareEngines(
  candidates: Candidate[],
  log: (line: string) => void,
): Promise<{ choice: EngineChoice; engine: Engine }> {
  const estimates: EngineEstimate[] = [];
  const errors: string[] = [];
  /** The first failure's kind (a model not there), kept on the error when none loads: the caller's remedy. */
  let kind: ErrorKind | undefined;
  let last: { kind: InProcessKind; engine: Engine } | undefined;
  for (const c of candidates) {
    if (last) await last.engine.close();
    last = undefined;
    let engine: Engine;
    try {
      engine = await c.load();
    } catch (err) {
      const why = (err as Error).message;
      errors.push(`${c.kind}: ${why}`);
      kind ??= errorKindOf(err);
      log(`engine auto: ${c.kind} did not load (${why})`);
      estimates.push({ engine: c.kind, label: c.kind, none: `did not load (${why})` });
      continue;
    }
    const estimate = await estimateOf(c.kind, engine);
    log(
      `engine auto: ${estimate.label} ${estimate.none ?? `${estimate.rows} rows, first proof ${aboutTime(estimate.expectedFirstProofSeconds!)}`}`,
    );
    estimates.push(estimate);
    last = { kind: c.kind, engine };
  }
  const loaded = estimates.filter((e) => !e.none?.startsWith('did not load'));
  if (loaded.length === 0)
    throw Object.assign(new Error(`no in-process engine loads: ${errors.join('; ')}`), kind ? { kind } : {});
  const choice = choose([...loaded, ...estimates.filter((e) => !loaded.includes(e))]); // untimed: a loaded one first
  if (last && last.kind === choice.engine) return { choice, engine: last.engine };
  if (last) await last.engine.close();
  const winner = candidates.find((c) => c.kind === choice.engine)!;
  return { choice, engine: await winner.load() };
}

/** The chosen engine, as itself, with the choice in its status line (and the prover's schedule line). */
export class ChosenEngine implements Engine {
  readonly schedule?: () => Promise<Schedule | undefined>;

  constructor(
    private readonly inner: Engine,
    readonly choice: EngineChoice,
  ) {
    if (inner.schedule) this.schedule = () => inner.schedule!();
  }

  get name(): string {
    return this.inner.name;
  }
  get model(): string {
    return this.inner.model;
  }
  get maxContext(): number | undefined {
    return this.inner.maxContext;
  }
  /** The choice's words, then the engine's own line. */
  get detail(): string {
    return this.inner.detail ? `${this.choice.words}; ${this.inner.detail}` : this.choice.words;
  }
  /** The choice in words, for the lines that show the schedule (status bar, Proof view). */
  get engineChoice(): string {
    return this.choice.words;
  }

  generate(conversations: ChatMessage[][], options: SamplingOptions, onDelta?: OnDelta): Promise<Generation[]> {
    return this.inner.generate(conversations, options, onDelta);
  }
  countPromptTokens(conversation: ChatMessage[]): Promise<number> {
    return this.inner.countPromptTokens(conversation);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
