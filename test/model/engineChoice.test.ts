// kimina.engine = auto (engineChoice.ts, autoEngine.ts) on a scripted device. Test doubles: FakeEngine (an Engine
// whose schedule() calibrates the real cost model, schedule.ts's calibrate, over a TimeStep double that times a
// step by a known cost) and the AutoDeps' loaders and llama candidacy; the chooser, its store, the factory's
// override and, where no GPU is here, the real candidacy and the real onnx engine on the tiny model are real.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autoEngine, LLAMA_ABSENT, realAutoDeps, type AutoDeps } from '../../backend/model/autoEngine';
import { machineKey, type InProcessKind } from '../../backend/model/engineChoice';
import { aboutTime } from '../../backend/model/schedule';
import { createEngine, type EngineConfig } from '../../backend/model/index';
import { llamaGpuHere, runtimeDirOf } from '../../backend/model/llama/runtime';
import { calibrate, scheduleOf, type StepCost, type TimeStep } from '../../backend/model/schedule';
import type { Engine, Generation } from '../../backend/model/engine';
import { writeTinyModel } from '../../backend/demo/models/tinyModel';
import { ModelNotAvailable } from '../../backend/model/modelStore';
import { errorKindOf } from '../../backend/protocol/errors';
import type { LlamaDepends } from '../../backend/model/llamaRetry';
import type { SwitchingEngine } from '../../backend/model/switchingEngine';

/** auto's engine once its background comparison (if any) ended. */
async function settled(engine: Engine): Promise<Engine> {
  await (engine as Partial<SwitchingEngine>).background;
  return engine;
}

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-choice-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** TEST DOUBLE: a device whose decode step costs exactly `cost` (schedule.ts's form); counts the steps timed. */
function scriptedDevice(cost: StepCost): { timeStep: TimeStep; steps: number } {
  const device = {
    steps: 0,
    timeStep: async (rows: number, cachedPerRow: number) => {
      device.steps++;
      return cost.a + cost.m * (rows - 1) + cost.b * rows * cachedPerRow;
    },
  };
  return device;
}

/** TEST DOUBLE: an in-process engine that only schedules, from the real calibration over its scripted device. */
class FakeEngine implements Engine {
  closed = false;
  constructor(
    readonly name: InProcessKind,
    private readonly device: { timeStep: TimeStep },
    readonly backend?: string,
  ) {}
  readonly model = 'fake';
  readonly detail = 'fake detail';
  async schedule() {
    return scheduleOf(await calibrate(this.device.timeStep));
  }
  async generate(): Promise<Generation[]> {
    return [];
  }
  async countPromptTokens() {
    return 1;
  }
  async close() {
    this.closed = true;
  }
}

// A CPU-like device (every row and cached token costs) and a GPU-like one (rows almost free).
const CPU_LIKE: StepCost = { a: 25, m: 20, b: 8e-3 };
const GPU_LIKE: StepCost = { a: 8, m: 0.3, b: 2e-5 };
const config = { engine: 'auto', model: undefined, threads: 2, llamaGpu: 'auto', rowsAtOnce: 0 } as EngineConfig;

/** A model folder, AutoDeps doubles over two scripted devices, and what they were asked. */
function scripted(costs: Record<InProcessKind, StepCost>, llamaCandidate = true) {
  const home = tempDir();
  const dir = join(home, 'model');
  const devices = { onnx: scriptedDevice(costs.onnx), llama: scriptedDevice(costs.llama) };
  const loads: InProcessKind[] = [];
  const engines: FakeEngine[] = [];
  /** What llama.cpp depends on, as the scripted machine says (a test changes it to see a failure retried). */
  const depends: LlamaDepends = { nodeLlamaCpp: 'none', gpu: 'a scripted GPU', gguf: 'none' };
  const deps: AutoDeps = {
    llamaCandidacy: async () => ({ candidate: llamaCandidate, why: llamaCandidate ? 'a scripted GPU' : LLAMA_ABSENT }),
    llamaDepends: async () => ({ ...depends }),
    load: {
      onnx: async () => {
        loads.push('onnx');
        engines.push(new FakeEngine('onnx', devices.onnx));
        return engines.at(-1)!;
      },
      llama: async () => {
        loads.push('llama');
        engines.push(new FakeEngine('llama', devices.llama, 'cuda'));
        return engines.at(-1)!;
      },
    },
  };
  return { home, dir, devices, loads, engines, deps, depends, cfg: { ...config, model: dir } };
}

/** The expected first-proof seconds of a known cost at its own best rows (what the chooser should find). */
const expectedOf = (cost: StepCost) => scheduleOf(cost)!.expectedFirstProofSeconds!;

for (const [fast, slow] of [
  ['llama', 'onnx'],
  ['onnx', 'llama'],
] as const) {
  test(`the chooser picks the engine with the earlier expected first proof (${fast} on the GPU-like device), stores it and reads it back without calibrating`, async () => {
    const s = scripted({ [fast]: GPU_LIKE, [slow]: CPU_LIKE } as Record<InProcessKind, StepCost>);
    writeTinyModel(s.dir); // only a folder to store into: the doubles load nothing from it
    assert.ok(expectedOf(GPU_LIKE) < expectedOf(CPU_LIKE));
    const chosen = await settled(await autoEngine(s.cfg, { home: s.home, log: () => undefined }, s.deps));
    assert.equal(chosen.name, fast);
    assert.deepEqual(s.loads.slice(0, 2), ['onnx', 'llama'], 'both calibrated');
    assert.ok(s.devices.onnx.steps > 0 && s.devices.llama.steps > 0);
    assert.ok(
      s.engines.filter((e) => e !== (chosen as SwitchingEngine).current).every((e) => e.closed),
      'the losers are closed',
    );
    const fastLabel = fast === 'llama' ? 'llama \\(cuda\\)' : 'onnx';
    const slowLabel = slow === 'llama' ? 'llama \\(cuda\\)' : 'onnx';
    assert.match(
      chosen.detail ?? '',
      new RegExp(
        `^engine auto → ${fastLabel}: first proof ${aboutTime(expectedOf(GPU_LIKE))} vs ${slowLabel} ${aboutTime(expectedOf(CPU_LIKE))}; fake detail$`,
      ),
    );
    assert.equal(chosen.engineChoice, chosen.detail?.replace(/; fake detail$/, ''));
    // The prover's schedule line (kimina prove, the Proof view) says the choice after the rows.
    const { proveSchedule } = await import('../../backend/prover/waves');
    const { DEFAULT_SETTINGS } = await import('../../backend/prover/request');
    const line = await proveSchedule(chosen, DEFAULT_SETTINGS);
    assert.ok(line.text.startsWith(`${fast}: `) && line.text.endsWith(`; ${chosen.engineChoice}`), line.text);

    const stored = JSON.parse(readFileSync(join(s.dir, 'engine-choice.json'), 'utf8')) as Record<
      string,
      { engine: string; estimates: { engine: string; expectedFirstProofSeconds: number; rows: number }[] }
    >;
    const entry = stored[machineKey(s.cfg)];
    assert.equal(entry.engine, fast);
    for (const e of entry.estimates) {
      const cost = e.engine === fast ? GPU_LIKE : CPU_LIKE;
      assert.ok(Math.abs(e.expectedFirstProofSeconds - expectedOf(cost)) < 1e-6 * expectedOf(cost), JSON.stringify(e));
      assert.equal(e.rows, scheduleOf(cost)!.rows);
    }

    // Re-read: the stored choice's engine only, nothing timed.
    const steps = { onnx: s.devices.onnx.steps, llama: s.devices.llama.steps };
    const loaded = s.loads.length;
    const again = await autoEngine(s.cfg, { home: s.home, log: () => undefined }, s.deps);
    assert.equal(again.name, fast);
    assert.deepEqual(s.loads.slice(loaded), [fast]);
    assert.deepEqual({ onnx: s.devices.onnx.steps, llama: s.devices.llama.steps }, steps);
    assert.equal(again.engineChoice, chosen.engineChoice);

    // Other settings the speed depends on (threads): compared again.
    await settled(await autoEngine({ ...s.cfg, threads: 1 }, { home: s.home, log: () => undefined }, s.deps));
    assert.ok(s.devices.onnx.steps > steps.onnx && s.devices.llama.steps > steps.llama);
  });
}

test('llama.cpp not a candidate: onnx, nothing calibrated, the reason shown; a stored llama choice is not used then', async () => {
  const s = scripted({ onnx: CPU_LIKE, llama: GPU_LIKE }, false);
  writeTinyModel(s.dir);
  const e = await autoEngine(s.cfg, { home: s.home, log: () => undefined }, s.deps);
  assert.equal(e.name, 'onnx');
  assert.deepEqual(s.loads, ['onnx']);
  assert.equal(s.devices.onnx.steps + s.devices.llama.steps, 0);
  assert.equal(e.engineChoice, `engine auto → onnx: ${LLAMA_ABSENT}`);
  assert.equal(existsSync(join(s.dir, 'engine-choice.json')), false, 'nothing compared, nothing stored');
});

test('a candidate that does not load: the other runs, and the words say why', async () => {
  const s = scripted({ onnx: CPU_LIKE, llama: GPU_LIKE });
  writeTinyModel(s.dir);
  s.deps.load.llama = async () => {
    throw new Error('no llama.cpp build loads');
  };
  const e = await settled(await autoEngine(s.cfg, { home: s.home, log: () => undefined }, s.deps));
  assert.equal(e.name, 'onnx');
  assert.match(
    e.engineChoice ?? '',
    /^engine auto → onnx: first proof ~\d+ (s|min) vs llama: did not load \(no llama\.cpp build loads\)$/,
  );
});

test('the GPUs llama.cpp is considered for: Apple silicon, an NVIDIA driver on x64; none otherwise', () => {
  const driver = () => true;
  const none = () => false;
  assert.equal(llamaGpuHere({}, 'darwin', 'arm64', none), 'Apple silicon (Metal)');
  assert.equal(llamaGpuHere({}, 'linux', 'x64', driver), 'an NVIDIA driver (CUDA)');
  assert.equal(llamaGpuHere({}, 'win32', 'x64', driver), 'an NVIDIA driver (CUDA)');
  assert.equal(llamaGpuHere({}, 'linux', 'x64', none), undefined);
  assert.equal(llamaGpuHere({}, 'darwin', 'x64', driver), undefined);
});

test('the real auto on the tiny model without llama.cpp or a GPU: the onnx engine, nothing installed; naming an engine overrides a stored choice', async (t) => {
  if (llamaGpuHere(undefined)) return t.skip('a GPU llama.cpp could use is here: llama.cpp would be a candidate');
  const home = tempDir();
  const dir = writeTinyModel(join(home, 'tiny')).dir;
  const cfg = { ...config, model: dir, threads: 1 } as EngineConfig;
  const lines: string[] = [];
  const candidacy = await realAutoDeps.llamaCandidacy(cfg, { home }, dir);
  assert.deepEqual(candidacy, { candidate: false, why: LLAMA_ABSENT });
  const e = await createEngine(cfg, { home, log: (l) => lines.push(l) });
  try {
    assert.equal(e.name, 'onnx');
    assert.match(
      e.detail ?? '',
      /^engine auto → onnx: llama\.cpp not installed; `kimina model calibrate` compares both; /,
    );
    assert.ok(lines.includes(`engine auto → onnx: ${LLAMA_ABSENT}`), lines.join('\n'));
  } finally {
    await e.close();
  }
  assert.equal(existsSync(runtimeDirOf(home)), false, 'node-llama-cpp not installed');
  // A stored choice of llama.cpp is not used while it is not a candidate; kimina.engine = onnx never reads one.
  writeFileSync(
    join(dir, 'engine-choice.json'),
    JSON.stringify({
      [machineKey(cfg)]: {
        engine: 'llama',
        label: 'llama (cpu)',
        words: 'engine auto → llama (cpu): stored',
        estimates: [{ engine: 'llama' }],
        at: 'then',
      },
    }),
  );
  const named = await createEngine({ ...cfg, engine: 'onnx' }, { home, log: () => undefined });
  try {
    assert.equal(named.name, 'onnx');
    assert.equal(named.engineChoice, undefined);
    assert.doesNotMatch(named.detail ?? '', /engine auto/);
  } finally {
    await named.close();
  }
  const auto = await createEngine(cfg, { home, log: () => undefined });
  try {
    assert.equal(auto.engineChoice, `engine auto → onnx: ${LLAMA_ABSENT}`);
  } finally {
    await auto.close();
  }
});

test('the model not there: the error keeps its kind, so the editor offers to pull a model; nothing of llama.cpp set up', async () => {
  const s = scripted({ onnx: CPU_LIKE, llama: GPU_LIKE });
  s.deps.load.onnx = async () => {
    throw new ModelNotAvailable('the model is not pulled yet: run `kimina model pull`');
  };
  await assert.rejects(autoEngine(s.cfg, { home: s.home, log: () => undefined }, s.deps), (e: Error) => {
    assert.equal(errorKindOf(e), 'model-missing');
    assert.match(e.message, /not pulled yet/);
    return true;
  });
  assert.deepEqual(s.loads, [], 'llama.cpp is not installed for a model that is not there');
});
