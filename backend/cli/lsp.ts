// `kimina lsp --stdio`: the language-server face for the editor, speaking LSP over stdin/stdout.
import {
  ProposedFeatures,
  StreamMessageReader,
  StreamMessageWriter,
  createConnection,
} from 'vscode-languageserver/node';
import { startLspFace } from '../api/lsp';
import { chooseService } from '../editor/chooseService';
import type { InProcessParts } from '../editor/inProcess';
import { openApp } from '../app/app';
import type { Settings } from '../settings/settings';
import { parseArgs } from './args';

const usage = `usage: kimina lsp --stdio

Runs the language-server face the VS Code extension starts: code lenses, code actions and the
kimina/* requests (prove, cancel, status, setup, and the Training Monitor's kimina/training/*,
relayed to the attached \`kimina serve\`). Proofs are forwarded to a running
\`kimina serve\` when KIMINA_SERVER_URL is set or <KIMINA_HOME>/serve.json names one; otherwise the
engine and the Lean verifier run in this process (settings: KIMINA_* environment variables;
KIMINA_PROVE_TIMEOUT stops a proof after that many seconds).`;

export async function run(args: string[], settings: Settings): Promise<number> {
  const parsed = parseArgs(args, ['stdio', 'help']);
  if (parsed.flags.has('help')) {
    console.log(usage);
    return 0;
  }
  if (!parsed.flags.has('stdio')) {
    console.error(`kimina lsp: only --stdio is supported\n\n${usage}`);
    return 2;
  }
  // stdout carries LSP frames only: anything else printed by a module goes to stderr (the extension's log).
  const toStderr = (...parts: unknown[]) => process.stderr.write(parts.map(String).join(' ') + '\n');
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
  const log = (line: string) => process.stderr.write(`[kimina lsp] ${line}\n`);
  const connection = createConnection(
    ProposedFeatures.all,
    new StreamMessageReader(process.stdin),
    new StreamMessageWriter(process.stdout),
  );
  // One app per process (one database handle). The in-process services are its parts; when they end (after a
  // failed start or a setup request, kimina/setup/*, the face starts them afresh) the app reloads its engine and
  // verifier instead of closing, so the next start loads the model and the REPL that are there now. The Repair All
  // queue and the running proofs stay in the app throughout.
  const app = openApp({ log, settings });
  const parts: InProcessParts = {
    verifier: () => app.verifier(),
    verifierForFile: (file) => app.verifierForFile(file),
    engine: () => app.engine(),
    attempts: () => app.attempts(),
    describe: () => app.describe(),
    state: () => app.state(),
    close: () => app.reload(),
  };
  const face = startLspFace({
    connection,
    settings,
    proofs: app.runningProofs(),
    createService: () => chooseService(parts, settings, log),
    log,
    proveTimeoutS: settings.proveTimeoutS,
    repairStore: () => app.repairs(),
    // agents' jobs live with the face (in the app's database and registry, kept across reloads), over the face's services
    agents: (service, roots) => app.agentsOver(service, () => [...roots(), settings.leanProject]),
  });
  const shutdown = async (): Promise<void> => {
    await face.close();
    await app.close();
  };
  const closed = new Promise<number>((resolve) => {
    connection.onShutdown(shutdown);
    connection.onExit(() => resolve(0));
    process.stdin.on('end', () => {
      void shutdown().then(() => resolve(0));
    });
  });
  connection.listen();
  log(`listening on stdio (pid ${process.pid})`);
  const code = await closed;
  setTimeout(() => process.exit(code), 100).unref();
  return code;
}
