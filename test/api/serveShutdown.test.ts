// Shutdown hooks of the routers `kimina serve` mounts, in process: the prove router cancels its running
// requests and closes the engine it made; the training service stops supervising without touching trainers.
// TEST DOUBLES: a slow engine, an instant verifier, a launcher that records signals instead of spawning Python.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage, TrainingPrompt } from '../../backend/protocol';
import type { Engine, Generation, SamplingOptions } from '../../backend/model/engine';
import type { LeanVerifier } from '../../backend/lean/types';
import express from 'express';
import { CloseHooks, listen } from '../../backend/api/server';
import { createProveRouter } from '../../backend/api/proveRoutes';
import { RunningProofs } from '../../backend/prover/running';
import { openDb } from '../../backend/store/db';
import { readSettings } from '../../backend/settings/settings';
import { TrainingStore } from '../../backend/store/training';
import { AttemptStore } from '../../backend/store/attempts';
import { openTrainingService } from '../../backend/training/service';
import type { TrainerExit, TrainerLaunch } from '../../backend/training/trainerProcess';

/** TEST DOUBLE engine: decodes until cancelled; records close(). */
class StallingEngine implements Engine {
  readonly name = 'stalling-test-double';
  readonly model = 'stalling';
  closed = 0;
  private markStarted!: () => void;
  /** Resolves once a generation is under way. */
  readonly started = new Promise<void>((r) => {
    this.markStarted = r;
  });
  async generate(conversations: ChatMessage[][], options: SamplingOptions): Promise<Generation[]> {
    this.markStarted();
    await new Promise<void>((r) => {
      if (options.signal?.aborted) r();
      else options.signal?.addEventListener('abort', () => r(), { once: true });
    });
    return conversations.map(() => ({ text: '', tokens: 0, finishReason: 'cancelled' as const }));
  }
  async countPromptTokens(): Promise<number> {
    return 10;
  }
  async close(): Promise<void> {
    this.closed++;
  }
}

/** TEST DOUBLE verifier: never reached here (the engine only stops when cancelled). */
const verifier: LeanVerifier = {
  async check() {
    throw new Error('not used');
  },
  async close() {},
};

test('prove router: shutdown cancels the running proof (answered as cancelled), refuses new ones, closes the engine it made', async () => {
  const engine = new StallingEngine();
  const hooks = new CloseHooks();
  const app = express();
  app.use(createProveRouter(async () => ({ engine, verifier }), { onClose: hooks.add, proofs: new RunningProofs() }));
  const http = await listen(app, '127.0.0.1', 0, undefined);
  try {
    const body = JSON.stringify({ code: 'theorem t : True := by\n  sorry\n', samples: 2 });
    const pending = fetch(`${http.url}/v1/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    await engine.started; // the proof is running (a fixed delay was too short on a loaded machine)
    const closing = hooks.run();
    const refused = await fetch(`${http.url}/v1/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    assert.equal(refused.status, 503);
    await closing;
    const answer = (await (await pending).json()) as { status: string };
    assert.equal(answer.status, 'cancelled');
    assert.equal(engine.closed, 1);
  } finally {
    await http.close();
  }
});

test('prove router: an engine passed in belongs to the caller and is not closed', async () => {
  const engine = new StallingEngine();
  const hooks = new CloseHooks();
  createProveRouter({ engine, verifier }, { onClose: hooks.add, proofs: new RunningProofs() });
  await hooks.run();
  assert.equal(engine.closed, 0);
});

test('training service: detach leaves running trainers alone (no signal, run stays running with its pid) and stops scheduling', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-detach-'));
  const db = openDb(join(dir, 'k.db'));
  const signals: string[] = [];
  const launches: TrainerLaunch[] = [];
  // TEST DOUBLE launcher: a "trainer" that runs until the test ends it, recording the signals it gets.
  let exit!: (e: TrainerExit) => void;
  const launcher = (launch: TrainerLaunch) => {
    launches.push(launch);
    const exited = new Promise<TrainerExit>((r) => {
      exit = r;
    });
    return {
      pid: 424242,
      kill: (s: NodeJS.Signals) => {
        signals.push(s);
      },
      exited,
    };
  };
  const service = await openTrainingService({
    settings: readSettings(),
    store: new TrainingStore(db),
    attempts: new AttemptStore(db),
    verifier,
    backendUrl: () => 'http://127.0.0.1:1',
    runsRoot: join(dir, 'runs'),
    scorer: async () => [],
    jobs: {
      launcher,
      python: () => 'python3',
      sourceDir: () => dir,
      gpuProbe: async () => ({ available: false, gpus: [] }),
      pollMs: 60_000,
    },
  });
  const prompts: TrainingPrompt[] = ['a', 'b'].map((x) => ({
    id: x,
    prompt: [{ role: 'user', content: x }],
    formalStatement: `theorem ${x} : True := by`,
  }));
  try {
    const run = await service.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts, gpus: 'cpu' });
    assert.equal(run.state, 'running');
    service.detach();
    await new Promise((r) => setTimeout(r, 50));
    assert.deepEqual(signals, [], 'the trainer gets no signal');
    const after = service.jobs.get(run.id);
    assert.equal(after.state, 'running');
    assert.equal(service.store.pidOf(run.id), 424242, 'the pid stays for the next backend to take over');
    const queued = await service.jobs.start({ preset: 'tiny-cpu', model: 'm', prompts, gpus: 'cpu' });
    exit({ code: null, signal: 'SIGKILL' });
    await service.jobs.schedule();
    assert.equal(launches.length, 1, 'nothing new is launched once detached');
    assert.equal(service.jobs.get(queued.id).state, 'queued');
  } finally {
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
