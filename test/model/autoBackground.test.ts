// kimina.engine = auto's first start with llama.cpp a candidate (autoEngine.ts, llamaBackground.ts,
// switchingEngine.ts, llamaRetry.ts): the onnx engine answers at once while llama.cpp's setup is held back by a
// promise gate; the winner answers the next request; a request in flight finishes on onnx and llama.cpp's
// calibration waits for it; a failure is stored with what it depended on and tried again when that changes or
// after a week; closing cancels the setup. Test doubles: GatedEngine (an Engine whose schedule() calibrates the
// real cost model over a TimeStep double of a known cost, and whose generate can be held by a gate) and the
// AutoDeps (loaders, candidacy, dependencies); the chooser, the background, SwitchingEngine, the store and the
// retry rule are real.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { autoEngine, type AutoDeps } from '../../backend/model/autoEngine';
import { machineKey, readChoice, soleChoice, type InProcessKind } from '../../backend/model/engineChoice';
import type { CreateEngineOptions, EngineConfig } from '../../backend/model/engineConfig';
import type { Engine, Generation } from '../../backend/model/engine';
import { RETRY_AFTER_DAYS, retryWhy, type LlamaDepends } from '../../backend/model/llamaRetry';
import { calibrate, scheduleOf, type StepCost } from '../../backend/model/schedule';
import { SwitchingEngine } from '../../backend/model/switchingEngine';
import { writeTinyModel } from '../../backend/demo/models/tinyModel';

/** A promise and the function that resolves it. */
function gate<T = void>(): { promise: Promise<T>; open: (value: T) => void } {
  let open!: (value: T) => void;
  const promise = new Promise<T>((resolve) => (open = resolve));
  return { promise, open };
}

/** Lets pending promise callbacks and immediates run until `ready()` holds (no timers: at most 1000 turns). */
async function until(ready: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !ready(); i++) await new Promise((r) => setImmediate(r));
  assert.ok(ready(), `never: ${what}`);
}

/** TEST DOUBLE: an engine of a scripted device cost; generate answers its own name, held while `hold` is set. */
class GatedEngine implements Engine {
  closed = false;
  steps = 0;
  hold?: Promise<void>;
  readonly model = 'fake';
  readonly detail = 'fake detail';
  constructor(
    readonly name: InProcessKind,
    private readonly cost: StepCost,
    readonly backend?: string,
  ) {}
  async schedule() {
    const c = this.cost;
    return scheduleOf(
      await calibrate(async (rows, cached) => {
        this.steps++;
        return c.a + c.m * (rows - 1) + c.b * rows * cached;
      }),
    );
  }
  async generate(conversations: unknown[]): Promise<Generation[]> {
    await this.hold;
    return conversations.map(() => ({ text: `answered by ${this.name}`, tokens: 1, finishReason: 'stop' as const }));
  }
  async countPromptTokens() {
    return 1;
  }
  async close() {
    this.closed = true;
  }
}

const CPU_LIKE: StepCost = { a: 25, m: 20, b: 8e-3 };
const GPU_LIKE: StepCost = { a: 8, m: 0.3, b: 2e-5 };
const convo = [[{ role: 'user' as const, content: 'theorem' }]];
const sampling = { maxTokens: 8, temperature: 1, topP: 1 };

/** A model folder, AutoDeps doubles (llama.cpp a candidate, its load held by `llamaGate` when set), the log. */
function machine(costs: Record<InProcessKind, StepCost> = { onnx: CPU_LIKE, llama: GPU_LIKE }) {
  const home = mkdtempSync(join(tmpdir(), 'kimina-autobg-'));
  after(() => rmSync(home, { recursive: true, force: true }));
  const dir = writeTinyModel(join(home, 'model')).dir; // a folder to store into: the doubles load nothing from it
  const m = {
    home,
    dir,
    cfg: { engine: 'auto', model: dir, threads: 2, llamaGpu: 'auto', rowsAtOnce: 0 } as EngineConfig,
    lines: [] as string[],
    loads: [] as InProcessKind[],
    engines: [] as GatedEngine[],
    llamaOptions: [] as CreateEngineOptions[],
    llamaGate: undefined as Promise<void> | undefined,
    llamaReached: gate(),
    llamaFails: undefined as string | undefined,
    depends: { nodeLlamaCpp: 'none', gpu: 'a scripted GPU', gguf: 'none' } as LlamaDepends,
    deps: undefined as unknown as AutoDeps,
    start: () => autoEngine(m.cfg, { home, log: (l) => m.lines.push(l) }, m.deps) as Promise<SwitchingEngine>,
  };
  m.deps = {
    llamaCandidacy: async () => ({ candidate: true, why: 'a scripted GPU is here', install: true }),
    llamaDepends: async () => ({ ...m.depends }),
    load: {
      onnx: async () => {
        m.loads.push('onnx');
        m.engines.push(new GatedEngine('onnx', costs.onnx));
        return m.engines.at(-1)!;
      },
      llama: async (_config, options) => {
        m.loads.push('llama');
        m.llamaOptions.push(options);
        m.llamaReached.open();
        await m.llamaGate;
        if (m.llamaFails) throw new Error(m.llamaFails);
        m.engines.push(new GatedEngine('llama', costs.llama, 'cuda'));
        return m.engines.at(-1)!;
      },
    },
  };
  return m;
}

test('the first request is answered by onnx while llama.cpp is set up; the next one by llama.cpp once it won', async () => {
  const m = machine();
  const setup = gate();
  m.llamaGate = setup.promise;
  const engine = await m.start();
  await m.llamaReached.promise; // the background is inside llama.cpp's setup (install, GGUF), held there
  assert.equal(engine.name, 'onnx');
  assert.match(
    engine.engineChoice,
    /^engine auto → onnx: llama\.cpp \(a scripted GPU is here\) is set up and compared in the background: installing llama\.cpp and writing its GGUF where missing$/,
  );
  const [first] = await engine.generate(convo, sampling);
  assert.equal(first.text, 'answered by onnx', 'answered while the setup is held');
  assert.equal(existsSync(join(m.dir, 'engine-choice.json')), false, 'nothing stored before the comparison');
  assert.ok(m.llamaOptions[0].signal instanceof AbortSignal, 'the setup can be cancelled');
  assert.ok(
    m.lines.some((l) => /^engine auto: the onnx engine answers now; llama\.cpp .* in the background/.test(l)),
    m.lines.join('\n'),
  );

  setup.open();
  await engine.background;
  assert.equal(engine.name, 'llama');
  assert.match(engine.engineChoice, /^engine auto → llama \(cuda\): first proof ~\d+ (s|min) vs onnx ~\d+ (s|min)$/);
  const [next] = await engine.generate(convo, sampling);
  assert.equal(next.text, 'answered by llama');
  const [onnx, llama] = m.engines;
  assert.ok(onnx.closed && !llama.closed, 'onnx closed once switched away from');
  assert.equal(readChoice(m.dir, machineKey(m.cfg))?.engine, 'llama', 'the choice stored');
  assert.ok(m.lines.some((l) => /the next request runs on llama\.cpp\)$/.test(l)));

  // The next start loads the stored choice only: nothing in the background.
  const loads = m.loads.length;
  const again = await m.start();
  assert.equal(again.name, 'llama');
  assert.deepEqual(m.loads.slice(loads), ['llama']);
  await again.close();
  await engine.close();
});

test("a request in flight finishes on onnx; llama.cpp's calibration waits for it; onnx stays when it is faster", async () => {
  const m = machine({ onnx: GPU_LIKE, llama: CPU_LIKE });
  const setup = gate();
  m.llamaGate = setup.promise;
  const engine = await m.start();
  await m.llamaReached.promise;
  const onnx = m.engines[0];
  const decoding = gate();
  onnx.hold = decoding.promise;
  const inFlight = engine.generate(convo, sampling);
  setup.open();
  await until(() => engine.engineChoice.endsWith('calibrating the engines between requests'), 'waiting for idle');
  assert.equal(onnx.steps, 0, 'onnx is not timed while a request decodes on it');
  const llama = m.engines[1];
  assert.equal(llama.steps, 0, 'not timed while a request decodes');
  decoding.open();
  assert.equal((await inFlight)[0].text, 'answered by onnx');
  await engine.background;
  assert.ok(llama.steps > 0, 'timed after the request');
  assert.equal(engine.name, 'onnx');
  assert.match(engine.engineChoice, /^engine auto → onnx: first proof .* vs llama \(cuda\) /);
  assert.ok(llama.closed && !onnx.closed, 'the loser closed, the winner kept');
  await engine.close();
  assert.ok(onnx.closed);
});

test('a switch while a call is in flight: that call finishes on onnx, the next runs on llama.cpp, onnx closes after the call', async () => {
  const onnx = new GatedEngine('onnx', CPU_LIKE);
  const llama = new GatedEngine('llama', GPU_LIKE, 'cuda');
  const engine = new SwitchingEngine(onnx, soleChoice('onnx', 'onnx', 'being compared'));
  const decoding = gate();
  onnx.hold = decoding.promise;
  const inFlight = engine.generate(convo, sampling);
  let idle = false;
  void engine.whenIdle().then(() => (idle = true));
  engine.switchTo(llama, soleChoice('llama', 'llama (cuda)', 'won'));
  assert.equal((await engine.generate(convo, sampling))[0].text, 'answered by llama', 'the next call');
  assert.equal(onnx.closed, false, 'not closed under its call');
  assert.equal(idle, false);
  decoding.open();
  assert.equal((await inFlight)[0].text, 'answered by onnx');
  assert.ok(onnx.closed, 'closed after its last call');
  await until(() => idle, 'idle after the last call');
  assert.equal(engine.engineChoice, 'engine auto → llama (cuda): won');
  await engine.close();
  assert.ok(llama.closed);
});

test('a failed llama.cpp: onnx stays and the log says why; stored with what it depended on, tried again when that changes', async () => {
  const m = machine();
  m.llamaFails = 'npm install of node-llama-cpp failed (exit 1): offline';
  const engine = await m.start();
  await engine.background;
  assert.equal(engine.name, 'onnx');
  assert.ok(
    m.lines.some((l) =>
      /^engine auto: llama\.cpp did not load \(npm install .* offline\); the onnx engine stays \(llama\.cpp is tried again when/.test(
        l,
      ),
    ),
    m.lines.join('\n'),
  );
  const stored = readChoice(m.dir, machineKey(m.cfg))!;
  assert.equal(stored.engine, 'onnx');
  assert.deepEqual(stored.llamaFailure?.depends, m.depends);
  assert.match(stored.llamaFailure?.why ?? '', /^did not load \(npm install/);
  await engine.close();

  // Nothing changed: the stored onnx, llama.cpp not tried.
  let loads = m.loads.length;
  const same = await m.start();
  assert.deepEqual(m.loads.slice(loads), ['onnx']);
  assert.ok(!m.lines.some((l) => /trying llama\.cpp again/.test(l)));
  await same.close();

  // node-llama-cpp installed since (say by `kimina model calibrate --with-llama` of another model): tried again.
  m.depends.nodeLlamaCpp = '3.21.1 with @node-llama-cpp/linux-x64';
  m.llamaFails = undefined;
  loads = m.loads.length;
  const retried = await m.start();
  await retried.background;
  assert.deepEqual(m.loads.slice(loads), ['onnx', 'llama']);
  assert.ok(
    m.lines.some((l) =>
      /^engine auto: trying llama\.cpp again in the background \(it did not load \(npm install .*\) on .*\): node-llama-cpp installed is now 3\.21\.1 with @node-llama-cpp\/linux-x64 \(was none\)$/.test(
        l,
      ),
    ),
    m.lines.join('\n'),
  );
  assert.equal(retried.name, 'llama');
  assert.equal(readChoice(m.dir, machineKey(m.cfg))?.llamaFailure, undefined, 'the failure is gone with it');
  await retried.close();
});

test(`a failure older than ${RETRY_AFTER_DAYS} days is tried again though nothing changed; the GPU and the GGUF count`, async () => {
  const depends: LlamaDepends = { nodeLlamaCpp: 'none', gpu: 'an NVIDIA driver (CUDA)', gguf: 'none' };
  const at = '2026-01-01T00:00:00.000Z';
  const day = 86_400_000;
  const failure = { why: 'did not load (x)', at, depends };
  assert.equal(retryWhy(failure, depends, Date.parse(at) + (RETRY_AFTER_DAYS - 1) * day), undefined);
  assert.equal(retryWhy(failure, depends, Date.parse(at) + (RETRY_AFTER_DAYS + 1) * day), '8 days since it failed');
  assert.equal(
    retryWhy(failure, { ...depends, gpu: 'none' }, Date.parse(at)),
    'the GPU seen is now none (was an NVIDIA driver (CUDA))',
  );
  assert.match(
    retryWhy(failure, { ...depends, gguf: '/m/gguf/model.q8_0.gguf of 2026' }, Date.parse(at))!,
    /^the GGUF is now/,
  );

  // Through auto: a stored failure 8 days old is tried again.
  const m = machine();
  m.llamaFails = 'no llama.cpp build loads';
  await (await m.start()).background.then(() => undefined);
  const file = join(m.dir, 'engine-choice.json');
  const all = JSON.parse(readFileSync(file, 'utf8')) as Record<string, { llamaFailure: { at: string } }>;
  all[machineKey(m.cfg)].llamaFailure.at = new Date(Date.now() - (RETRY_AFTER_DAYS + 1) * day).toISOString();
  writeFileSync(file, JSON.stringify(all));
  m.llamaFails = undefined;
  const loads = m.loads.length;
  const retried = await m.start();
  await retried.background;
  assert.deepEqual(m.loads.slice(loads), ['onnx', 'llama']);
  assert.ok(
    m.lines.some((l) => /trying llama\.cpp again .*: 8 days since it failed$/.test(l)),
    m.lines.join('\n'),
  );
  await retried.close();
});

test('a stored llama.cpp that does not load: onnx now, stored as a failure, not tried at every start', async () => {
  const m = machine();
  const first = await m.start();
  await first.background;
  assert.equal(first.name, 'llama');
  await first.close();
  m.llamaFails = 'the CUDA build does not load';
  const fallback = await m.start();
  assert.equal(fallback.name, 'onnx');
  assert.match(fallback.engineChoice ?? '', /llama\.cpp was chosen on .* but did not load \(the CUDA build/);
  await fallback.close();
  const loads = m.loads.length;
  const next = await m.start();
  assert.deepEqual(m.loads.slice(loads), ['onnx'], 'llama.cpp not loaded again while nothing changed');
  await next.close();
});

test('closing the engine during the setup cancels it: the signal aborts, what it loaded is closed, nothing stored', async () => {
  const m = machine();
  const setup = gate();
  m.llamaGate = setup.promise;
  const engine = await m.start();
  await m.llamaReached.promise;
  const closing = engine.close();
  assert.equal(m.llamaOptions[0].signal?.aborted, true);
  setup.open(); // the loader ends (a real one would throw 'cancelled'; this one loads anyway)
  await closing;
  assert.ok(
    m.engines.every((e) => e.closed),
    'onnx and the llama.cpp loaded late are both closed',
  );
  assert.equal(existsSync(join(m.dir, 'engine-choice.json')), false);
  assert.ok(m.lines.some((l) => /background setup of llama\.cpp was cancelled/.test(l)));
});

test('a damaged engine-choice.json (hand-edited, another version, half written) is no choice: auto starts as on a first run', async () => {
  const m = machine();
  const file = join(m.dir, 'engine-choice.json');
  const key = machineKey(m.cfg);
  const at = new Date().toISOString();
  const damaged = [
    '{"half": ',
    'null',
    '[1, 2]',
    JSON.stringify({ [key]: 'llama' }),
    JSON.stringify({ [key]: { engine: 'llama', at } }),
    JSON.stringify({
      [key]: {
        engine: 'onnx',
        words: 'w',
        at,
        estimates: [{ engine: 'llama', label: 'llama', none: 'x' }],
        llamaFailure: {},
      },
    }),
    JSON.stringify({
      [key]: {
        engine: 'onnx',
        words: 'w',
        at,
        estimates: [{ engine: 'llama', label: 'llama', none: 'x' }],
        llamaFailure: { why: 'x', at: 'never', depends: m.depends }, // a time that never passes a week
      },
    }),
  ];
  for (const text of damaged) {
    writeFileSync(file, text);
    const engine = await m.start();
    await engine.background;
    assert.equal(engine.name, 'llama', `${text}: compared afresh, and llama.cpp won`);
    assert.equal(readChoice(m.dir, key)?.engine, 'llama', `${text}: the new choice is stored`);
    await engine.close();
  }
});
