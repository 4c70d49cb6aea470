// ProveService with the engine, the verifier pool and the prove loop in this process, built by the prover's
// runtime factory from the KIMINA_* settings the extension passes (engine, model, Lean project, REPL command).
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { ProveService } from './service';

/** Whether Lean's build tool can be found: on PATH or in elan's default folder. */
function lakeAvailable(): boolean {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), join(homedir(), '.elan', 'bin')];
  return dirs.some((d) => d && existsSync(join(d, 'lake')));
}

export async function createInProcessService(log: (line: string) => void): Promise<ProveService> {
  const { openRuntime } = await import('../../prover/runtime');
  const { prove } = await import('../../prover/prove');
  const runtime = await openRuntime(log);
  for (const line of runtime.describe) log(line);
  const { engine, verifier } = runtime.deps;
  const verifierLine = runtime.describe.find((l) => l.startsWith('verifier:')) ?? '';
  // Without a REPL build the verifier falls back to `lake env lean`; without lake nothing can check proofs.
  const leanMissing = /no REPL build found/.test(verifierLine) && !lakeAvailable();
  return {
    kind: 'in-process',
    describe: async () => ({
      ...(leanMissing ? { setup: { model: false, lean: true, hints: ['Lean was not found: install elan (https://github.com/leanprover/elan), then run "Kimina: Set Up Lean Verifier".'] } } : {}),
      backend: 'in-process',
      engine: engine.name,
      model: engine.model,
      lean: verifierLine.slice('verifier:'.length).trim() || undefined,
      detail: runtime.describe.join('\n'),
    }),
    prove: (req, onEvent, signal) => prove(req, runtime.deps, onEvent, signal),
    check: (code, signal) => verifier.check(code, { signal }),
    close: () => runtime.close(),
  };
}
