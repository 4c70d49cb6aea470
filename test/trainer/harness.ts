// Shared pieces of the trainer suite: a real backend (express app, SQLite store, job manager, stand-in REPL
// verifier test double), the tiny random Qwen3 model, and small waiting helpers.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ChatMessage, TrainingPrompt, TrainingRun } from '../../backend/protocol';
import { createApp, listen, type Listening } from '../../backend/api/server';
import { trainingRouterOf } from '../../backend/api/trainingMount';
import { buildVerifier, verifierSettingsOf } from '../../backend/lean/buildVerifier';
import { readSettings } from '../../backend/settings/settings';
import { openDb, type Db } from '../../backend/store/db';
import { TrainingStore } from '../../backend/store/training';
import { AttemptStore } from '../../backend/store/attempts';
import { openTrainingService, type TrainingService } from '../../backend/training/service';
import type { RewardScorer } from '../../backend/training/rewardService';
import type { TrainingJobsOptions } from '../../backend/training/jobs';
import { standInReplCommand } from '../../backend/demo/stand-in-repl';
import { testPython, trainerSource } from './pythonSetup';

const execFileAsync = promisify(execFile);

export interface Backend {
  url: string;
  db: Db;
  service: TrainingService;
  runsRoot: string;
  dir: string;
  close(): Promise<void>;
}

/** A real backend on 127.0.0.1 with the stand-in REPL (TEST DOUBLE for Lean) behind the reward service. */
export async function startBackend(
  options: { scorer?: RewardScorer; jobs?: Partial<TrainingJobsOptions>; dir?: string; token?: string } = {},
): Promise<Backend> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'kimina-trainer-test-'));
  const python = await testPython();
  const db = openDb(join(dir, 'kimina.db'));
  const built = buildVerifier({
    ...verifierSettingsOf(readSettings()),
    replCommand: standInReplCommand(),
    sandbox: 'none',
    replMemoryMb: 0,
    initRepls: {},
    maxRepls: 2,
  });
  let url = '';
  const service = await openTrainingService({
    settings: readSettings(),
    store: new TrainingStore(db),
    attempts: new AttemptStore(db),
    verifier: built.verifier,
    backendUrl: () => url,
    token: () => options.token,
    runsRoot: join(dir, 'runs'),
    scorer: options.scorer,
    jobs: { python: () => python, sourceDir: () => trainerSource, restartDelayMs: 200, pollMs: 500, ...options.jobs },
  });
  const app = await createApp({ verifier: built.verifier }, [() => trainingRouterOf(service)], {
    token: options.token,
  });
  const listening: Listening = await listen(app, '127.0.0.1', 0, options.token);
  url = listening.url;
  return {
    url,
    db,
    service,
    runsRoot: join(dir, 'runs'),
    dir,
    close: async () => {
      await service.close();
      await listening.close();
      await built.verifier.close();
      db.close();
    },
  };
}

/** Writes the tiny random Qwen3 (character tokenizer, Qwen-style chat template) to `dir`. */
export async function makeTinyModel(dir: string, seed = 0): Promise<string> {
  const python = await testPython();
  await execFileAsync(python, ['-m', 'kimina_trainer.tiny', dir, '--seed', String(seed)], {
    cwd: trainerSource,
    env: { ...process.env, PYTHONPATH: trainerSource },
  });
  return dir;
}

const SYSTEM = 'You are an expert in mathematics and proving theorems in Lean 4.';

function prompt(id: string, theorem: string): TrainingPrompt {
  const formalStatement = `import Mathlib\n\ntheorem ${theorem} := by\n  sorry`;
  const messages: ChatMessage[] = [
    { role: 'system', content: SYSTEM },
    {
      role: 'user',
      content: `Think about and solve the following problems step by step in Lean 4.\n\n# Problem:\n\n\n# Formal Statement:\n\`\`\`lean4\n${formalStatement}\n\`\`\`\n`,
    },
  ];
  return { id, prompt: messages, formalStatement };
}

export const PROMPTS: TrainingPrompt[] = [
  prompt('p1', 't1 (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4'),
  prompt('p2', 't2 (a b : ℕ) (h : a = b) : b = a'),
  prompt('p3', 't3 (n : ℕ) : n + 0 = n'),
  prompt('p4', 't4 (x : ℤ) (h : x - 1 = 2) : x = 3'),
];

export async function waitFor<T>(
  what: string,
  fn: () => T | undefined | false | null,
  timeoutMs = 120_000,
  everyMs = 100,
): Promise<T> {
  const t0 = Date.now();
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() - t0 > timeoutMs) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

/** Waits (up to 9 minutes) for a run to complete; a failed run throws with its error. */
export function waitForCompletedRun(backend: Backend, id: string): Promise<TrainingRun> {
  return waitFor(
    'the run to finish',
    () => {
      const run = backend.service.jobs.get(id);
      if (run.state === 'failed') throw new Error(`run failed: ${run.error}`);
      return run.state === 'completed' ? run : undefined;
    },
    540_000,
    250,
  );
}

export async function api<T>(
  backend: Backend,
  method: string,
  path: string,
  body?: unknown,
  token?: string,
): Promise<{ status: number; body: T }> {
  const res = await fetch(backend.url + path, {
    method,
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: res.status, body: (await res.json()) as T };
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
