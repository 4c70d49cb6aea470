// Run by processes.test.ts as a child under `ulimit -v` (a host whose hard address-space limit is below the
// cap), bundled by esbuild and run on plain Node (tsx's WebAssembly needs more address space than the limit):
// builds the real verifier over the stand-in REPL (test double for Lean; its command line is argv[2]) with
// KIMINA_REPL_MEMORY_MB's default, checks one snippet and prints {describe, status, reason} as JSON.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildVerifier, verifierSettingsOf } from '../../backend/lean/buildVerifier';
import { readSettings } from '../../backend/settings/settings';
import { defaultAllowedAxioms } from '../../backend/lean/verdict';

const built = buildVerifier({
  ...verifierSettingsOf(readSettings()),
  home: mkdtempSync(join(tmpdir(), 'kimina-hardhome-')),
  leanProject: mkdtempSync(join(tmpdir(), 'kimina-hard-')),
  replCommand: process.argv[2],
  maxRepls: 1,
  maxQueue: 4,
  replMaxUses: 0,
  replMaxRssMb: 0,
  replMemoryMb: 16384,
  sandbox: 'none',
  childEnv: process.env,
  allowedAxioms: defaultAllowedAxioms,
  allowNativeDecide: false,
  timeoutS: 20,
  initRepls: {},
});
void (async () => {
  const out = await built.verifier.check('theorem t : True := trivial');
  await built.verifier.close();
  const { status, reason } = out.verdict;
  process.stdout.write(JSON.stringify({ describe: built.describe, status, reason }));
})();
