// `kimina prove FILE[:THEOREM|:LINE]`: proves one theorem of a Lean file with the configured model and
// Lean, streaming the thinking and a progress line; exit 0 when a proof was verified, 1 otherwise.
import { existsSync, readFileSync } from 'node:fs';
import type { ProveRequest } from '../protocol';
import { parseArgs, flagNumber, flagString } from './args';
import { formalStatementOf, selectDeclaration } from '../lean/declarations';
import { prove } from '../prover/prove';
import { parseProveRequest } from '../prover/request';
import { openApp } from '../app/app';
import { TerminalView } from '../prover/terminal';
import type { Settings } from '../settings/settings';

const HELP = `usage: kimina prove FILE[:THEOREM|:LINE] [options]

Proves a theorem of a Lean file with a Kimina-Prover model, checking every attempt with Lean.
Without THEOREM: the file's only theorem, or its first one with a sorry.

  --samples N        answers decoded together (default 4)
  --fix-turns N      error-fix turns per failed answer (default 1; 0 turns them off)
  --temperature T    sampling temperature (default 1.0)   --top-p P   (default 0.95)
  --max-tokens N     tokens per answer (default 24576 as the recipe, cut to the model's context)
  --informal TEXT    the problem in words (default: the theorem's doc comment)
  --json             print the result as JSON instead of streaming
  --demo             run offline with TEST DOUBLES (scripted model, stand-in REPL): no real proving

Engine and Lean come from KIMINA_ENGINE, KIMINA_MODEL, KIMINA_OPENAI_BASE_URL, KIMINA_LEAN_PROJECT, …
(docs/prover.md). Exit status: 0 proved, 1 not proved or cancelled, 2 bad usage.`;

/** Splits FILE[:THEOREM|:LINE]; a path that exists as written wins over a suffix. */
export function parseTarget(arg: string): { file: string; theorem?: string; line?: number } {
  if (existsSync(arg)) return { file: arg };
  const colon = arg.lastIndexOf(':');
  if (colon <= 0) return { file: arg };
  const file = arg.slice(0, colon);
  const rest = arg.slice(colon + 1);
  if (rest === '') return { file };
  return /^\d+$/.test(rest) ? { file, line: Number(rest) } : { file, theorem: rest };
}

function requestFor(
  args: ReturnType<typeof parseArgs>,
  code: string,
  target: ReturnType<typeof parseTarget>,
): ProveRequest {
  const body: Record<string, unknown> = { code };
  if (target.theorem) {
    selectDeclaration(code, { name: target.theorem }); // says which theorems exist when the name is wrong
    body.theorem = target.theorem;
  }
  if (target.line !== undefined) {
    const decl = selectDeclaration(code, { line: target.line });
    if (decl.name) body.theorem = decl.namespace ? `${decl.namespace}.${decl.name}` : decl.name;
    else {
      const formal = formalStatementOf(code, decl);
      body.code = formal.text;
      if (formal.informal) body.informal = formal.informal;
    }
  }
  const numbers: [string, string][] = [
    ['samples', 'samples'],
    ['fix-turns', 'fixTurns'],
    ['temperature', 'temperature'],
    ['top-p', 'topP'],
    ['max-tokens', 'maxTokens'],
  ];
  for (const [flag, field] of numbers) {
    const v = flagNumber(args, flag);
    if (v !== undefined) body[field] = v;
  }
  const informal = flagString(args, 'informal');
  if (informal !== undefined) body.informal = informal;
  return parseProveRequest(body);
}

export async function run(argv: string[], settings: Settings): Promise<number> {
  const args = parseArgs(argv, ['json', 'demo', 'help']);
  if (args.flags.has('help') || argv.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const known = new Set([
    'samples',
    'fix-turns',
    'temperature',
    'top-p',
    'max-tokens',
    'informal',
    'json',
    'demo',
    'help',
  ]);
  const unknown = [...args.flags.keys()].filter((k) => !known.has(k));
  if (unknown.length > 0) {
    console.error(`kimina prove: unknown option --${unknown[0]}\n\n${HELP}`);
    return 2;
  }
  if (args.positionals.length !== 1) {
    console.error(`kimina prove: expected one FILE[:THEOREM]\n\n${HELP}`);
    return 2;
  }
  const target = parseTarget(args.positionals[0]);
  if (!existsSync(target.file)) {
    console.error(`kimina prove: no such file: ${target.file}`);
    return 2;
  }
  let request: ProveRequest;
  try {
    request = requestFor(args, readFileSync(target.file, 'utf8'), target);
  } catch (err) {
    console.error(`kimina prove: ${(err as Error).message}`);
    return 2;
  }

  const json = args.flags.has('json');
  const demo = args.flags.has('demo');
  const log = (line: string) => process.stderr.write(line + '\n');
  const app = openApp({ demo, log, settings });
  let deps;
  try {
    const verifier = app.verifier().verifier;
    deps = { engine: await app.engine(), verifier, store: app.attempts() };
    for (const line of await app.describe()) log(demo ? `DEMO: ${line}` : line);
  } catch (err) {
    await app.close();
    throw err;
  }

  const controller = new AbortController();
  let interrupts = 0;
  const onSigint = () => {
    if (++interrupts > 1) process.exit(130);
    log('\nCancelling… (Ctrl-C again to quit at once)');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  const view = json
    ? null
    : new TerminalView({
        out: process.stdout,
        err: process.stderr,
        color: Boolean(process.stdout.isTTY) && !app.settings.noColor,
      });
  try {
    const result = await prove(request, deps, (e) => view?.event(e), controller.signal);
    if (json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    else view?.finish(result);
    if (demo)
      log('DEMO: the answers came from a scripted test-double model and were checked by the stand-in REPL, not Lean.');
    return result.status === 'proved' ? 0 : 1;
  } finally {
    process.off('SIGINT', onSigint);
    await app.close();
  }
}
