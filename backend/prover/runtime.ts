// Building the prove loop's dependencies for a face (CLI, server): the configured engine, the verifier
// from KIMINA_* settings and the attempt store; or, for `--demo`, the test doubles: the scripted ONNX
// model (greedy decoding writes fixed Kimina answers) and the stand-in REPL (text rules, not Lean).
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { kiminaHome } from '../config';
import { createEngine, engineConfigFromEnv } from '../model/index';
import { buildVerifier, verifierSettingsFromEnv } from '../lean/settings';
import { openDb } from '../store/db';
import { AttemptStore } from '../store/attempts';
import type { ProveDeps } from './prove';

export interface ProveRuntime {
  deps: ProveDeps;
  /** One line per part, for people: which engine, model and verifier run. */
  describe: string[];
  close(): Promise<void>;
}

/** KIMINA_DB (`:memory:` allowed), default ~/.kimina/kimina.db. */
export function storePath(): string {
  const configured = process.env.KIMINA_DB;
  if (configured === ':memory:') return configured;
  return resolve(configured || join(kiminaHome(), 'kimina.db'));
}

/** The real thing: KIMINA_ENGINE / KIMINA_MODEL engine, the Lean verifier, the store at KIMINA_DB. */
export async function openRuntime(log: (line: string) => void): Promise<ProveRuntime> {
  const built = buildVerifier(verifierSettingsFromEnv());
  let engine;
  try { engine = await createEngine(engineConfigFromEnv(), { log }); }
  catch (err) { await built.verifier.close(); throw err; }
  const db = openDb(storePath());
  return {
    deps: { engine, verifier: built.verifier, store: new AttemptStore(db) },
    describe: [`engine: ${engine.name} (${engine.model})`, `verifier: ${built.describe}`, `store: ${storePath()}`],
    close: async () => { await engine.close(); await built.verifier.close(); db.close(); },
  };
}

/** The folder holding test/fixtures (the repository root), looked up from this file's location. */
function repoRoot(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'test', 'fixtures', 'stand-in-repl', 'repl.mjs'))) return dir;
    if (dirname(dir) === dir) throw new Error('--demo needs the repository checkout (test/fixtures/stand-in-repl was not found)');
  }
}

/**
 * TEST DOUBLES for `kimina prove --demo`: a freshly generated scripted model (its first answer uses a lemma
 * that does not exist, its fix-turn answer is correct) and the stand-in REPL. Nothing here is a real model
 * or Lean; attempts go to an in-memory store so the demo never feeds training data.
 */
export async function openDemoRuntime(log: (line: string) => void): Promise<ProveRuntime> {
  const root = repoRoot();
  const dir = mkdtempSync(join(tmpdir(), 'kimina-demo-model-'));
  const { writeScriptedModel } = await import('../../test/fixtures/models/scriptedModel');
  writeScriptedModel(dir, { variant: 'fix' });
  const replScript = join(root, 'test', 'fixtures', 'stand-in-repl', 'repl.mjs');
  const built = buildVerifier({ ...verifierSettingsFromEnv(), replCommand: `'${process.execPath}' '${replScript}'`, sandbox: 'none', memoryLimitMb: 0, initRepls: {} });
  const engine = await createEngine({ ...engineConfigFromEnv({}), engine: 'onnx', model: dir, device: 'cpu', threads: 1 }, { log });
  const db = openDb(':memory:');
  return {
    deps: { engine, verifier: built.verifier, store: new AttemptStore(db) },
    describe: ['running with test doubles: a scripted ONNX model (fixed answers) and the stand-in REPL (text rules, not Lean).',
      'Nothing is proved for real; see docs/prover.md for a real model and Lean.'],
    close: async () => { await engine.close(); await built.verifier.close(); db.close(); rmSync(dir, { recursive: true, force: true }); },
  };
}
