// `kimina`: the command-line face of the backend. Each subcommand lives in backend/cli/<name>.ts.
import { version } from '../package.json';
import { readSettings, setting, type Settings } from './settings/settings';
import { ensurePrivateDir } from './store/safePaths';

type Command = { summary: string; load: () => Promise<{ run(args: string[], settings: Settings): Promise<number> }> };

const commands: Record<string, Command> = {
  serve: { summary: 'start the backend (HTTP API and verifier pool)', load: () => import('./cli/serve') },
  check: { summary: 'verify Lean files: a verdict per declaration', load: () => import('./cli/check') },
  prove: { summary: 'prove a theorem: kimina prove FILE[:THEOREM]', load: () => import('./cli/prove') },
  repair: {
    summary: 'repair proofs Lean rejects: kimina repair PATH… [--apply]',
    load: () => import('./cli/repair'),
  },
  'format-check': { summary: 'check Kimina answers (JSON Lines on stdin)', load: () => import('./cli/formatCheck') },
  model: { summary: 'pull or list models', load: () => import('./cli/model') },
  lean: { summary: 'set up the Lean REPL for a project', load: () => import('./cli/lean') },
  train: {
    summary: 'fine-tune on your proofs: start|status|pause|resume|cancel|export-verl',
    load: () => import('./cli/train'),
  },
  trainer: {
    summary: "set up the trainer's Python environment: kimina trainer setup [--gpu]",
    load: async () => ({ run: (await import('./cli/train')).runTrainer }),
  },
  eval: { summary: 'evaluate a model on a benchmark (pass@k)', load: () => import('./cli/evaluate') },
  lsp: { summary: 'language-server face for the editor (stdio)', load: () => import('./cli/lsp') },
  mcp: {
    summary: 'the prover and the strict verifier as MCP tools for agents (stdio)',
    load: () => import('./cli/mcp'),
  },
};

function usage(): string {
  const width = Math.max(...Object.keys(commands).map((c) => c.length));
  return [
    `kimina ${version}`,
    '',
    'usage: kimina <command> [options]',
    '',
    ...Object.entries(commands).map(([name, c]) => `  ${name.padEnd(width)}  ${c.summary}`),
    '',
    "Run `kimina <command> --help` for a command's options.",
  ].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '--help' || name === '-h' || name === 'help') {
    console.log(usage());
    return 0;
  }
  if (name === '--version' || name === '-v') {
    console.log(version);
    return 0;
  }
  const command = commands[name];
  if (!command) {
    console.error(`kimina: unknown command '${name}'\n\n${usage()}`);
    return 2;
  }
  const settings = readSettings(); // once per command: each receives them (and hands its parts their slice)
  ensurePrivateDir(settings.home); // KIMINA_HOME holds proof history, tokens and logs: 0700
  return (await command.load()).run(rest, settings);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    console.error(`kimina: ${err instanceof Error ? err.message : String(err)}`);
    if (setting('debug')) console.error(err);
    process.exitCode = 1;
  },
);
