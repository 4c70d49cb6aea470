// The backend owns its trainers' lives, with the real Python trainer (tiny random Qwen3 on the CPU) under a live
// `kimina serve` process (stand-in REPL, a TEST DOUBLE for Lean): the trainer runs in its own process group (a Ctrl-C
// in the terminal reaches the backend only); `kill -9` of the backend leaves no orphan (the trainer is gone within
// seconds, by the parent-death signal or its stdin lifeline); the next backend resumes the run from its checkpoint
// (on the same port) and sees no step posted after the kill; a trainer naming another launch is refused (409).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { StepMetrics, TrainingRun } from '../../backend/protocol';
import { startServe, TOKEN, type LiveServe } from '../security/liveServe';
import { makeTinyModel, PROMPTS, removeDir, tempDir, waitFor } from './harness';
import { testPython } from './pythonSetup';

let dir: string;
let modelDir: string;
let python: string;
const children: ChildProcess[] = [];

before(async () => {
  dir = tempDir('kimina-lifeline-');
  python = await testPython();
  modelDir = await makeTinyModel(join(dir, 'tiny-model'));
});
after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  removeDir(dir);
});

async function serve(home: string, port = 0): Promise<LiveServe> {
  const served = await startServe({ KIMINA_TRAINER_PYTHON: python }, { home, port });
  children.push(served.child);
  return served;
}

async function call<T>(
  url: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: T }> {
  const res = await fetch(url + path, {
    method,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}`, ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

/** Running (not gone, not a zombie). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}
/** Live trainer processes of a run, found by their command line (…kimina_trainer.worker --config …/<run>/run.json). */
function trainerPids(runId: string): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => {
      try {
        const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
        return cmd.includes('kimina_trainer.worker') && cmd.includes(runId) && alive(pid);
      } catch {
        return false;
      }
    });
}
function processGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

test(
  'kill -9 of the backend leaves no orphan trainer; the next backend resumes and gets no stale steps',
  { timeout: 600_000 },
  async () => {
    const home = join(dir, 'home');
    const first = await serve(home);
    const overrides = {
      saveSteps: 2,
      evalSteps: 0,
      maxCompletionLength: 16,
      promptsPerStep: 2,
      numGenerations: 2,
      perDeviceBatch: 4,
      maxSteps: 400,
    };
    const made = await call<TrainingRun>(first.url, 'POST', '/v1/training/runs', {
      preset: 'tiny-cpu',
      model: modelDir,
      prompts: PROMPTS,
      heldOut: [],
      gpus: 'cpu',
      name: 'lifeline',
      overrides,
    });
    assert.equal(made.status, 201, JSON.stringify(made.body));
    const id = made.body.id;
    const get = async (url: string) => (await call<TrainingRun>(url, 'GET', `/v1/training/runs/${id}`)).body;
    let run = await get(first.url);
    const t0 = Date.now();
    while (
      !(run.state === 'running' && run.checkpointStep >= 2 && run.step >= run.checkpointStep + 1) &&
      Date.now() - t0 < 300_000
    ) {
      if (run.state === 'failed') throw new Error(`run failed: ${run.error}`);
      await new Promise((r) => setTimeout(r, 200));
      run = await get(first.url);
    }
    const [trainer, ...others] = trainerPids(id);
    assert.ok(trainer && others.length === 0, `one trainer runs: ${[trainer, ...others].join(',')}`);
    assert.notEqual(processGroup(trainer), processGroup(first.child.pid!), 'the trainer has its own process group');

    // a post naming another launch (a stale trainer) is refused and changes nothing
    const stale = await call<{ detail: string }>(
      first.url,
      'POST',
      `/v1/training/runs/${id}/metrics`,
      { step: 999, kind: 'train', metrics: { loss: 1 } },
      { 'x-kimina-launch': 'not-the-current-launch' },
    );
    assert.equal(stale.status, 409, JSON.stringify(stale.body));

    const trainSteps = async (url: string) =>
      (await call<{ steps: StepMetrics[] }>(url, 'GET', `/v1/training/runs/${id}/metrics?kind=train`)).body.steps.map(
        (s) => s.step,
      );
    const before = await trainSteps(first.url);
    first.child.kill('SIGKILL');
    const killedAt = Date.now();
    await waitFor('the trainer to die with its backend', () => !alive(trainer) || undefined, 15_000, 50);
    console.log(
      `trainer ${trainer} gone ${Date.now() - killedAt} ms after kill -9 of the backend (was at step ${run.step}, checkpoint ${run.checkpointStep})`,
    );

    // the next backend on the same port: where an orphan would keep posting its steps
    const second = await serve(home, Number(new URL(first.url).port));
    try {
      let resumed = await get(second.url);
      const t1 = Date.now();
      while (!(resumed.state === 'running' && trainerPids(id).length === 1) && Date.now() - t1 < 60_000) {
        await new Promise((r) => setTimeout(r, 100));
        resumed = await get(second.url);
      }
      assert.equal(resumed.state, 'running');
      await new Promise((r) => setTimeout(r, 3000)); // time enough for an orphan's next step to arrive
      const steps = await trainSteps(second.url);
      // nothing posted after the kill (one step may have landed between reading `before` and the kill)
      assert.ok(
        Math.max(...steps) <= Math.max(...before) + 1,
        `steps after the kill: ${steps.join(',')} (before: ${before.join(',')})`,
      );
      assert.ok(!steps.includes(999));
      const log = (
        await call<{ lines: { message: string }[] }>(second.url, 'GET', `/v1/training/runs/${id}/log?limit=200`)
      ).body.lines
        .map((l) => l.message)
        .join('\n');
      assert.match(log, /backend restarted: resuming/);
      const [newTrainer] = trainerPids(id);
      assert.notEqual(newTrainer, trainer);
      await call(second.url, 'POST', `/v1/training/runs/${id}/cancel`);
      await waitFor('the resumed trainer to stop', () => !alive(newTrainer) || undefined, 30_000, 100);
    } finally {
      second.child.kill('SIGTERM');
    }
  },
);
