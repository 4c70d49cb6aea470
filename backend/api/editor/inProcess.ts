// ProveService with the engine, the verifier pool and the prove loop in this process, built by the prover's
// runtime factory from the KIMINA_* settings the extension passes (engine, model, Lean project, REPL command).
import type { ProveService } from './service';

export async function createInProcessService(log: (line: string) => void): Promise<ProveService> {
  const { openRuntime } = await import('../../prover/runtime');
  const { prove } = await import('../../prover/prove');
  const runtime = await openRuntime(log);
  for (const line of runtime.describe) log(line);
  const { engine, verifier } = runtime.deps;
  return {
    kind: 'in-process',
    describe: async () => ({
      backend: 'in-process',
      engine: engine.name,
      model: engine.model,
      lean: runtime.describe.find((l) => l.startsWith('verifier:'))?.slice('verifier:'.length).trim(),
      detail: runtime.describe.join('\n'),
    }),
    prove: (req, onEvent, signal) => prove(req, runtime.deps, onEvent, signal),
    check: (code, signal) => verifier.check(code, { signal }),
    close: () => runtime.close(),
  };
}
