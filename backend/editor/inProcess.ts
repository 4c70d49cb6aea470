// ProveService with the engine, the verifier pool and the prove loop in this process: the parts come from the
// composition root (backend/app), built from the KIMINA_* settings the extension passes (engine, model, Lean project, REPL command).
import type { BuiltVerifier } from '../lean/buildVerifier';
import type { Engine } from '../model/engine';
import { scheduleWords } from '../model/schedule';
import type { ProveDeps } from '../prover/prove';
import { inSnippetLines, type OpenFileSession } from '../prover/sessionVerifier';
import { modelText, userSource } from '../lean/authorship';
import type { CheckOutcome } from '../lean/types';
import { openFileSession } from '../lean/fileSession';
import type { ProveOrigin } from '../protocol';
import type { AttemptStore } from '../store/attempts';
import type { ProveService } from './service';

/** What the service takes from the composition root (backend/app/app.ts's App); closing it closes them. */
export interface InProcessParts {
  verifier(): BuiltVerifier;
  /** The verifier of the user's file's own Lean project (App.verifierForFile). */
  verifierForFile(file: string): BuiltVerifier;
  engine(): Promise<Engine>;
  attempts(): AttemptStore;
  describe(): Promise<string[]>;
  /** What is there, as data: whether the verifier runs a REPL build, whether lake can be found. */
  state(): { lean: { replBuilt: boolean; lakeFound: boolean } };
  close(): Promise<void>;
}

export async function createInProcessService(app: InProcessParts, log: (line: string) => void): Promise<ProveService> {
  const { prove } = await import('../prover/prove');
  let deps: ProveDeps;
  let describe: string[];
  try {
    deps = { engine: await app.engine(), verifier: app.verifier().verifier, store: app.attempts() };
    describe = await app.describe();
  } catch (err) {
    await app.close();
    throw err;
  }
  const verifierOf = (origin?: ProveOrigin) =>
    (origin?.file ? app.verifierForFile(origin.file) : app.verifier()).verifier;
  /**
   * The editor's requests are the user's file: each candidate is checked in a file session on its prefix (the user's
   * code), in the file's own project when its path is known (else the app's). A file an agent edited since its last
   * commit is not the user's code: no trusted session, each candidate checked as one whole strict snippet.
   */
  const depsFor = (origin?: ProveOrigin): ProveDeps => {
    const verifier = verifierOf(origin);
    if (origin?.untrustedPrefix) return { ...deps, verifier };
    const openSession: OpenFileSession = (file, line) => openFileSession(verifier, { file, line });
    return { ...deps, verifier, openFileSession: openSession };
  };
  for (const line of describe) log(line);
  const { engine } = deps;
  const verifierLine = describe.find((l) => l.startsWith('verifier:')) ?? '';
  // Without a REPL build the verifier falls back to `lake env lean`; without lake nothing can check proofs.
  const { lean } = app.state();
  const leanMissing = !lean.replBuilt && !lean.lakeFound;
  return {
    kind: 'in-process',
    describe: async () => ({
      ...(leanMissing
        ? {
            setup: {
              model: false,
              lean: true,
              hints: [
                'Lean was not found: install elan (https://github.com/leanprover/elan), then run "Kimina: Set Up Lean Verifier".',
              ],
            },
          }
        : {}),
      backend: 'in-process',
      engine: engine.name,
      model: engine.model,
      ...(await scheduleLine(engine)),
      lean: verifierLine.slice('verifier:'.length).trim() || undefined,
      detail: describe.join('\n'),
    }),
    prove: (req, onEvent, signal, origin) => prove(req, depsFor(origin), onEvent, signal),
    check: (code, signal, origin) => verifierOf(origin).check(code, { signal }),
    async checkInFile(code, userLength, signal, origin): Promise<CheckOutcome> {
      const verifier = verifierOf(origin);
      // a file an agent edited since its last commit is not the user's code: all of it strict
      if (origin?.untrustedPrefix || userLength <= 0) return verifier.check(code, { signal });
      if (userLength >= code.length) return verifier.checkUserFile(userSource(code), { signal });
      // the prefix must end a line: the file session's target starts one (else all of it strict, as before)
      if (code[userLength - 1] !== '\n') return verifier.check(code, { signal });
      const prefixLines = code.slice(0, userLength).split('\n').length - 1;
      const session = await openFileSession(verifier, { file: userSource(code), line: prefixLines + 1 }, { signal });
      try {
        return inSnippetLines(await session.check(modelText(code.slice(userLength)), { signal }), prefixLines);
      } finally {
        await session.close();
      }
    },
    close: () => app.close(),
  };
}

/**
 * The engine's schedule in words for the status (calibrated at first use; read back after), when it has one, after
 * how kimina.engine = auto chose the engine.
 */
async function scheduleLine(engine: Engine): Promise<{ schedule?: string }> {
  const s = await engine.schedule?.().catch(() => undefined);
  const line = [engine.engineChoice, s && scheduleWords(s)].filter(Boolean).join('; ');
  return line ? { schedule: line } : {};
}
