// The job manager's scheduling and supervision rules, with a scripted launcher TEST DOUBLE in place of the
// Python trainer (exits are driven by the test): one run per GPU set, when-idle scheduling, crash restarts
// up to a limit, config refusals, state in SQLite.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GpuReport, TrainingPrompt } from '../../backend/protocol';
import { openDb } from '../../backend/store/db';
import { TrainingStore } from '../../backend/store/training';
import { TrainingJobs, type TrainingJobsOptions } from '../../backend/training/jobs';
import { readFileSync } from 'node:fs';
import type { TrainerExit, TrainerLaunch } from '../../backend/training/trainerProcess';

const PROMPTS: TrainingPrompt[] = ['a', 'b', 'c'].map((x) => ({
  id: x,
  prompt: [{ role: 'user', content: x }],
  formalStatement: `theorem ${x} : True := by`,
}));

/** TEST DOUBLE launcher: records launches; the test ends each "process" with the exit it chooses. */
class ScriptedLauncher {
  launches: { launch: TrainerLaunch; exit: (e: TrainerExit) => void; signals: string[] }[] = [];
  launcher = (launch: TrainerLaunch) => {
    let exit!: (e: TrainerExit) => void;
    const exited = new Promise<TrainerExit>((r) => {
      exit = r;
    });
    const entry = { launch, exit, signals: [] as string[] };
    this.launches.push(entry);
    return {
      pid: 100000 + this.launches.length,
      kill: (s: NodeJS.Signals) => {
        entry.signals.push(s);
        if (s === 'SIGKILL') exit({ code: null, signal: s });
      },
      exited,
    };
  };
}

function setup(gpu: GpuReport = { available: false, gpus: [] }, extra: Partial<TrainingJobsOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-jobs-'));
  const db = openDb(join(dir, 'k.db'));
  const store = new TrainingStore(db);
  const scripted = new ScriptedLauncher();
  let report = gpu;
  const jobs = new TrainingJobs({
    store,
    runsRoot: join(dir, 'runs'),
    backendUrl: () => 'http://127.0.0.1:1',
    scorer: async () => [],
    launcher: scripted.launcher,
    python: () => 'python3',
    sourceDir: () => dir,
    childEnv: process.env,
    gpuProbe: async () => report,
    restartDelayMs: 10,
    pollMs: 60_000,
    maxRestarts: 2,
    ...extra,
  });
  return {
    dir,
    db,
    store,
    jobs,
    scripted,
    setGpus: (r: GpuReport) => {
      report = r;
    },
    done: async () => {
      await jobs.close(10);
      db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const tick = (ms = 30) => new Promise((r) => setTimeout(r, ms));

test('one run per GPU set: a second run on the same GPUs waits, another GPU set starts at once', async () => {
  const t = setup({
    available: true,
    gpus: [0, 1].map((index) => ({ index, name: 'H100', memoryUsedMb: 0, memoryTotalMb: 80_000, utilizationPct: 0 })),
  });
  try {
    const a = await t.jobs.start({ preset: 'single-gpu-lora', model: 'm', prompts: PROMPTS, gpus: '0' });
    const b = await t.jobs.start({ preset: 'single-gpu-lora', model: 'm', prompts: PROMPTS, gpus: '0' });
    const c = await t.jobs.start({ preset: 'single-gpu-lora', model: 'm', prompts: PROMPTS, gpus: '1' });
    assert.deepEqual([a.state, b.state, c.state], ['running', 'queued', 'running']);
    assert.deepEqual(
      t.scripted.launches.map((l) => l.launch.gpus),
      ['0', '1'],
    );
    const d = await t.jobs.start({ preset: 'single-gpu-lora', model: 'm', prompts: PROMPTS });
    assert.equal(d.gpus, '0,1', 'default: every visible GPU');
    t.jobs.trainerEvent(a.id, { kind: 'finished', step: 400, finalDir: null });
    t.scripted.launches[0].exit({ code: 0, signal: null });
    await tick();
    assert.equal(t.jobs.get(a.id).state, 'completed');
    assert.equal(t.jobs.get(b.id).state, 'running', 'the queued run takes the freed GPU');
  } finally {
    await t.done();
  }
});

test('when-idle waits until the GPUs are idle', async () => {
  const busy: GpuReport = {
    available: true,
    gpus: [{ index: 0, name: 'A', memoryUsedMb: 20_000, memoryTotalMb: 24_000, utilizationPct: 97 }],
  };
  const t = setup(busy);
  try {
    const run = await t.jobs.start({
      preset: 'single-gpu-lora',
      model: 'm',
      prompts: PROMPTS,
      gpus: '0',
      schedule: 'when-idle',
    });
    assert.equal(run.state, 'queued');
    t.setGpus({ available: true, gpus: [{ ...busy.gpus[0], memoryUsedMb: 300, utilizationPct: 0 }] });
    await t.jobs.schedule();
    assert.equal(t.jobs.get(run.id).state, 'running');
  } finally {
    await t.done();
  }
});

test('crashes restart from the checkpoint up to the limit, then the run fails with the log tail', async () => {
  const t = setup();
  try {
    const run = await t.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: PROMPTS, gpus: 'cpu' });
    t.jobs.trainerEvent(run.id, { kind: 'checkpoint', step: 2, path: 'x' });
    for (let i = 0; i < 2; i++) {
      t.scripted.launches[i].exit({ code: 1, signal: null });
      await tick(60);
      assert.equal(t.jobs.get(run.id).state, 'running');
    }
    assert.equal(t.scripted.launches.length, 3);
    t.scripted.launches[2].exit({ code: 1, signal: null });
    await tick(60);
    const failed = t.jobs.get(run.id);
    assert.equal(failed.state, 'failed');
    assert.equal(failed.restarts, 2);
    assert.match(failed.error ?? '', /trainer exited \(code 1\)/);
    const resumed = await t.jobs.resume(run.id);
    assert.equal(resumed.state, 'running');
    assert.equal(resumed.restarts, 0);
  } finally {
    await t.done();
  }
});

test('a refused configuration (exit 2) fails at once; pause of a queued run and cancel of a paused one', async () => {
  const t = setup();
  try {
    const run = await t.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: PROMPTS, gpus: 'cpu' });
    t.scripted.launches[0].exit({ code: 2, signal: null });
    await tick();
    assert.equal(t.jobs.get(run.id).state, 'failed');
    assert.equal(t.scripted.launches.length, 1, 'no restart for a bad configuration');
    const blocker = await t.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: PROMPTS, gpus: 'cpu' });
    const queued = await t.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: PROMPTS, gpus: 'cpu' });
    assert.equal(t.jobs.get(blocker.id).state, 'running');
    assert.equal(queued.state, 'queued');
    assert.equal(t.jobs.pause(queued.id).state, 'paused');
    assert.equal(t.jobs.cancel(queued.id).state, 'cancelled');
    assert.throws(() => t.jobs.cancel(queued.id), /already cancelled/);
    t.jobs.pause(blocker.id);
    assert.deepEqual(t.scripted.launches[1].signals, ['SIGTERM']);
    t.scripted.launches[1].exit({ code: 0, signal: null });
    await tick();
    assert.equal(t.jobs.get(blocker.id).state, 'paused');
  } finally {
    await t.done();
  }
});

test('the preset for 8 GPUs is refused locally with a pointer to the verl export', async () => {
  const t = setup();
  try {
    await assert.rejects(t.jobs.start({ preset: 'recipe-8gpu', model: 'm', prompts: PROMPTS }), /export-verl/);
    await assert.rejects(
      t.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: PROMPTS, schedule: 'later' as never }),
      /schedule must be/,
    );
    await assert.rejects(
      t.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: [{ id: 1 } as never] }),
      /each prompt needs/,
    );
    assert.equal(t.jobs.list().length, 0);
  } finally {
    await t.done();
  }
});

test('eval metrics set the base and latest evaluation and whether the model improved', async () => {
  const t = setup();
  try {
    const run = await t.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: PROMPTS, gpus: 'cpu' });
    t.jobs.report(run.id, {
      step: 0,
      kind: 'eval',
      metrics: { 'eval/acc_turn_1/pass@8': 0.5, 'eval/acc_turn_2/pass@8': 0.6 },
    });
    t.jobs.report(run.id, {
      step: 5,
      kind: 'eval',
      metrics: { 'eval/acc_turn_1/pass@8': 0.55, 'eval/acc_turn_2/pass@8': 0.7 },
    });
    const r = t.jobs.get(run.id);
    assert.equal(r.baseEval?.step, 0);
    assert.equal(r.latestEval?.step, 5);
    assert.equal(r.improved, true);
    t.jobs.report(run.id, { step: 10, kind: 'eval', metrics: { 'eval/acc_turn_2/pass@8': 0.6 } });
    assert.equal(t.jobs.get(run.id).improved, false, 'equal is not better');
    assert.throws(() => t.jobs.report(run.id, { step: -1, kind: 'train', metrics: {} }), /metrics need step/);
    await assert.rejects(t.jobs.exportOnnx(run.id, true), /no final weights/);
  } finally {
    await t.done();
  }
});

test('win-rate filtering prepares the prompt set in the background, then queues the run', async () => {
  // TEST DOUBLES: the engine answers 'win' for prompt a, 'lose' otherwise; the scorer scores 'win' 1.
  const engine = async () => ({
    generate: async (convs: { content: string }[][]) =>
      convs.map((c) => ({ text: c[0].content === 'a' ? 'win' : 'lose', tokens: 1, finishReason: 'stop' as const })),
  });
  const scorer = async (items: { response: string }[]) =>
    items.map((it) => ({
      score: it.response === 'win' ? 1 : 0,
      acc: 0,
      formatError: 'NONE' as const,
      formatErrorText: 'No error.',
      verdict: null,
      feedback: null,
      code: null,
      think: '',
    }));
  const t = setup(undefined, { engine, scorer });
  try {
    const run = await t.jobs.start({
      preset: 'tiny-cpu',
      model: 'm',
      prompts: PROMPTS,
      heldOut: [],
      gpus: 'cpu',
      winRate: { samples: 2 },
    });
    assert.equal(run.state, 'preparing');
    await tick(100);
    const ready = t.jobs.get(run.id);
    assert.equal(ready.state, 'running');
    assert.equal(ready.trainPrompts, 4, 'a dropped, b and c repeated twice');
    const rows = readFileSync(join(t.dir, 'runs', run.id, 'train.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l).prompt_id);
    assert.deepEqual(rows, ['b', 'b#2', 'c', 'c#2']);
    await assert.rejects(
      t.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: PROMPTS, winRate: { samples: 0 } }),
      /winRate.samples/,
    );
  } finally {
    await t.done();
  }
  const noEngine = setup();
  try {
    await assert.rejects(
      noEngine.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: PROMPTS, winRate: { samples: 2 } }),
      /needs the prover engine/,
    );
  } finally {
    await noEngine.done();
  }
});

test('a missing trainer environment fails the run with the setup command to run', async () => {
  const t = setup(undefined, { python: () => '/nonexistent/venv/bin/python' });
  try {
    const run = await t.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: PROMPTS, gpus: 'cpu' });
    assert.equal(run.state, 'failed');
    assert.match(run.error ?? '', /\/nonexistent\/venv\/bin\/python does not exist: run `kimina trainer setup`/);
    assert.equal(t.scripted.launches.length, 0);
  } finally {
    await t.done();
  }
});

test('a run whose folder lost its prompts fails with a reason instead of hanging in the queue', async () => {
  const t = setup();
  try {
    const run = await t.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: PROMPTS, gpus: 'cpu' });
    t.jobs.pause(run.id);
    t.scripted.launches[0].exit({ code: 0, signal: null });
    await tick();
    rmSync(join(t.dir, 'runs', run.id, 'train.jsonl'));
    const resumed = await t.jobs.resume(run.id);
    assert.equal(resumed.state, 'failed');
    assert.match(resumed.error ?? '', /lost its prompts/);
  } finally {
    await t.done();
  }
});

test('held-out prompts are capped at evalPrompts; the rest go back to training', async () => {
  const t = setup();
  try {
    const many: TrainingPrompt[] = Array.from({ length: 40 }, (_, i) => ({
      id: `q${i}`,
      prompt: [{ role: 'user', content: String(i) }],
      formalStatement: `theorem q${i} : ${i} = ${i} := by`,
    }));
    const run = await t.jobs.start({
      preset: 'tiny-cpu',
      model: 'm',
      prompts: many,
      gpus: 'cpu',
      overrides: { heldOutShare: 0.5, evalPrompts: 3 },
    });
    assert.equal(run.heldOutPrompts, 3);
    assert.equal(run.trainPrompts, 37);
    await assert.rejects(
      t.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts: many, overrides: { evalSamples: 0 } }),
      /evalSamples >= 1/,
    );
  } finally {
    await t.done();
  }
});
