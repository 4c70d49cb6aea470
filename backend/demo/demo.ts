// TEST DOUBLES for `--demo` (README command 1), also used by the tests and the benchmarks: a freshly
// generated scripted model (its first answer uses a lemma that does not exist, its fix-turn answer is
// correct) and the stand-in REPL (text rules, not Lean). Nothing here is a real model or Lean. The
// composition root (backend/app/app.ts) puts these in place of the configured engine and verifier.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { EngineConfig } from '../model/index';
import type { VerifierSettings } from '../lean/buildVerifier';
import { writeScriptedModel } from './models/scriptedModel';

export interface DemoParts {
  engine: Partial<EngineConfig>;
  verifier: Partial<VerifierSettings>;
  /** Removes the generated model folder. */
  cleanup(): void;
}

/** The repository root (it holds backend/demo/stand-in-repl), looked up from this file's location. */
function repoRoot(): string {
  for (let dir = __dirname; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'backend', 'demo', 'stand-in-repl', 'repl.mjs'))) return dir;
    if (dirname(dir) === dir)
      throw new Error('--demo needs the repository checkout (backend/demo/stand-in-repl was not found)');
  }
}

/** Verifier settings that run the stand-in REPL (no sandbox or memory cap: it is a Node script). */
export function standInVerifier(): Partial<VerifierSettings> {
  const replScript = join(repoRoot(), 'backend', 'demo', 'stand-in-repl', 'repl.mjs');
  return { replCommand: `'${process.execPath}' '${replScript}'`, sandbox: 'none', replMemoryMb: 0, initRepls: {} };
}

/** Writes the scripted model to a temporary folder and names the stand-in REPL as the verifier's command. */
export function prepareDemo(): DemoParts {
  const verifier = standInVerifier();
  const dir = mkdtempSync(join(tmpdir(), 'kimina-demo-model-'));
  writeScriptedModel(dir, { variant: 'fix' });
  return {
    engine: { engine: 'onnx', model: dir, device: 'cpu', threads: 1 },
    verifier,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
