// `kimina prove FILE[:THEOREM|:LINE]`: proves one theorem of a Lean file with the configured model and
// Lean, streaming the thinking and a progress line; exit 0 when a proof was verified, 1 otherwise.
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ProveRequest } from '../protocol';
import { parseArgs, flagNumber, flagString } from './args';
import { formalStatementOf, selectDeclaration } from '../lean/declarations';
import { prove } from '../prover/prove';
import { openFileSession } from '../lean/fileSession';
import type { OpenFileSession } from '../prover/sessionVerifier';
import { parseProveRequest } from '../prover/request';
import { openApp } from '../app/app';
import { TerminalView } from '../prover/terminal';
import { findDeclarations as findEditorDeclarations, sorryHolderAt } from '../editor/leanSource';
import { proveInEditor } from '../editor/editorProve';
import { createInProcessService } from '../editor/inProcess';

/**
 * The sorry at 1-based `line` when the CLI proves its goal: a sorry on that line that is not the whole proof of
 * a theorem, lemma or example (that one is proved as the theorem, as before). 0-based position, or null.
 */
export function sorryTarget(code: string, line: number): { line: number; character: number } | null {
  const decl = sorryHolderAt(findEditorDeclarations(code), line - 1);
  const site = decl?.sorries.find((s) => s.line === line - 1);
  if (!decl || !site) return null;
  const provable = decl.kind === 'theorem' || decl.kind === 'lemma' || decl.kind === 'example';
  const body = decl.statementEnd === null ? '' : code.slice(decl.statementEnd, decl.end).trim();
  if (provable && decl.sorries.length === 1 && /^(by\s+)?sorry$/u.test(body)) return null;
  return { line: site.line, character: site.character };
}
import type { Settings } from '../settings/settings';

const HELP = `usage: kimina prove FILE[:THEOREM|:LINE] [options]

Proves a theorem of a Lean file with a Kimina-Prover model, checking every attempt with Lean.
Without THEOREM: the file's only theorem, or its first one with a sorry.
At a LINE holding a sorry (in a def, instance, abbrev, where clause, match arm or have, or one of several
sorries of a theorem): proves that sorry's goal, as Lean reports it, and prints the edit that puts the
proof at the sorry (checked by Lean in place; the file is not written).

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
    const text = readFileSync(target.file, 'utf8');
    request =
      target.line !== undefined && sorryTarget(text, target.line)
        ? requestFor(args, text, { file: target.file })
        : requestFor(args, text, target);
  } catch (err) {
    console.error(`kimina prove: ${(err as Error).message}`);
    return 2;
  }

  const json = args.flags.has('json');
  const demo = args.flags.has('demo');
  const code = readFileSync(target.file, 'utf8');
  const atSorry = target.line !== undefined ? sorryTarget(code, target.line) : null;
  if (atSorry) return proveSorry(request, code, target.file, atSorry, { json, demo, settings });
  const log = (line: string) => process.stderr.write(line + '\n');
  const app = openApp({ demo, log, settings });
  let deps;
  try {
    // FILE is the user's file: checked in its own project, its prefix elaborated once for every candidate
    const verifier = app.verifierForFile(target.file).verifier;
    const openSession: OpenFileSession = (file, line) => openFileSession(verifier, { file, line });
    deps = { engine: await app.engine(), verifier, store: app.attempts(), openFileSession: openSession };
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

/** Proves the goal of the sorry at `position` as the editor does (goal mode) and prints the edit; never writes. */
async function proveSorry(
  request: ProveRequest,
  code: string,
  file: string,
  position: { line: number; character: number },
  o: { json: boolean; demo: boolean; settings: Settings },
): Promise<number> {
  const log = (line: string) => process.stderr.write(line + '\n');
  const app = openApp({ demo: o.demo, log, settings: o.settings });
  const service = await createInProcessService(app, (line) => log(o.demo ? `DEMO: ${line}` : line));
  const controller = new AbortController();
  const onSigint = () => controller.abort();
  process.on('SIGINT', onSigint);
  const view = o.json ? null : new TerminalView({ out: process.stdout, err: process.stderr, color: false });
  try {
    const { code: _whole, theorem: _name, ...settings } = request;
    const result = await proveInEditor(
      { ...settings, id: request.id ?? `cli-${process.pid}`, uri: file, code, mode: 'goal', position },
      code,
      service,
      (e) => {
        if (e.type === 'stage' || e.type === 'goal')
          log(e.type === 'goal' ? `Goal:\n${e.goals.join('\n')}` : e.message);
        else if (e.type !== 'target') view?.event(e);
      },
      controller.signal,
      { file: resolve(file) }, // the user's file: checked in its own Lean project
    );
    if (o.json) process.stdout.write(JSON.stringify(result, null, 2) + '\n');
    else if (result.edit) {
      const { start, end } = result.edit.range;
      process.stdout.write(
        `\nProved the sorry at ${file}:${position.line + 1}. Edit (lines ${start.line + 1}:${start.character}-${end.line + 1}:${end.character}, checked by Lean in place):\n${result.edit.newText}\n`,
      );
    } else process.stdout.write(`\nNot proved: ${result.problem ?? 'no verified proof'}\n`);
    return result.status === 'proved' && result.edit ? 0 : 1;
  } finally {
    process.off('SIGINT', onSigint);
    await service.close();
  }
}
