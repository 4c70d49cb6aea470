// `kimina repair PATH…`: finds every declaration whose proof Lean rejects in the Lean files given (folders are
// walked), repairs each with the recipe's fix turn seeded with the user's proof (backend/editor/editorRepair.ts),
// writes a Markdown report, and with --apply writes the verified repairs into the files (nothing else), then
// checks each written file again. The queue is kept in the SQLite store (repair_jobs, repair_items).
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { applyRepairs, type PlannedRepair } from './repairApply';
import { join, relative, resolve } from 'node:path';
import type { EditorProveResult, ProofEdit, RepairItem } from '../protocol';
import { parseArgs, flagNumber, flagString } from './args';
import { openApp } from '../app/app';
import { createInProcessService } from '../editor/inProcess';
import { findBroken } from '../editor/editorRepair';
import { proveInEditor } from '../editor/editorProve';
import { offsetAt } from '../editor/leanSource';
import type { Settings } from '../settings/settings';

const HELP = `usage: kimina repair PATH… [options]

Finds the declarations whose proofs Lean rejects in the Lean files given (folders are searched for .lean
files) and repairs each from Lean's errors (and the deprecation warnings that name a replacement), with the
recipe's error-fix turn seeded with your proof. Only a repair Lean accepts in place, in the declaration's
body, counts as repaired.

  --apply            write the verified repairs into the files (the files are checked again afterwards)
  --report FILE      where the Markdown report goes (default kimina-repair.md)
  --samples N        answers per round (default 4)
  --fix-turns N      extra rounds of fresh answers to the same fix turn (default 1)
  --demo             run offline with TEST DOUBLES (scripted model, stand-in REPL): no real repairing

Engine and Lean come from KIMINA_ENGINE, KIMINA_MODEL, KIMINA_OPENAI_BASE_URL, KIMINA_LEAN_PROJECT, …
(docs/prover.md). Exit status: 0 when every broken proof was repaired (or none was broken), 1 otherwise,
2 bad usage.`;

const SKIP = new Set(['.lake', '.git', 'build', 'node_modules', 'lake-packages']);

function leanFiles(path: string, out: string[] = [], depth = 0): string[] {
  const st = statSync(path);
  if (st.isFile()) {
    if (path.endsWith('.lean')) out.push(path);
    return out;
  }
  if (!st.isDirectory() || depth > 24) return out;
  for (const e of readdirSync(path, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    if (e.isDirectory() && SKIP.has(e.name)) continue;
    if (e.isDirectory() || (e.isFile() && e.name.endsWith('.lean'))) leanFiles(join(path, e.name), out, depth + 1);
  }
  return out;
}

interface Outcome {
  file: string;
  item: RepairItem;
  result?: EditorProveResult;
  before?: string;
  after?: string;
}

function bodyLines(text: string, edit: ProofEdit): { before: string; after: string } {
  const from = offsetAt(text, edit.range.start.line, edit.range.start.character);
  const to = offsetAt(text, edit.range.end.line, edit.range.end.character);
  return { before: text.slice(from, to), after: edit.newText };
}

/** The lines both share at the start and end unmarked, the changed middle as `-` then `+` lines. */
export function lineDiff(before: string, after: string): string[] {
  const a = before.split('\n');
  const b = after.split('\n');
  let p = 0;
  while (p < a.length && p < b.length && a[p] === b[p]) p++;
  let s = 0;
  while (s < a.length - p && s < b.length - p && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  return [
    ...a.slice(0, p).map((l) => `  ${l}`),
    ...a.slice(p, a.length - s).map((l) => `- ${l}`),
    ...b.slice(p, b.length - s).map((l) => `+ ${l}`),
    ...a.slice(a.length - s).map((l) => `  ${l}`),
  ];
}

/** Why a repair did not come through, in words: the problem, else what Lean said about the last answer. */
export function whyNot(result: EditorProveResult): string {
  if (result.problem) return result.problem;
  const answers = result.attempts.filter((a) => !a.user);
  const last = answers.at(-1);
  const error = last?.verdict?.messages.find((m) => m.severity === 'error');
  const all = answers.length === 1 ? 'the answer' : `all ${answers.length} answers`;
  if (error) return `Lean rejects ${all}${answers.length > 1 ? '; the last' : ''}: ${error.data.split('\n')[0]}`;
  if (last?.verdict) return `Lean rejects ${all} (${last.verdict.reason})`;
  return answers.length ? `no answer held a proof Lean could check (${answers.length} answers)` : 'no answer';
}

function cell(s: string): string {
  return s.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

export function markdownReport(
  scope: string,
  outcomes: Outcome[],
  problems: { file: string; problem: string }[],
  applied: { file: string; verdict: string }[] | null,
): string {
  const count = (s: RepairItem['status']) => outcomes.filter((o) => o.item.status === s).length;
  const lines = [
    '# Kimina repair report',
    '',
    `Scope: ${scope}. ${outcomes.length} declaration${outcomes.length === 1 ? '' : 's'} with a proof Lean rejects: ` +
      `**${count('repaired') + count('accepted')} repaired**, ${count('broken')} still broken, ${count('skipped')} skipped.` +
      (applied ? ' The verified repairs were written into the files (--apply).' : ' Nothing was written (no --apply).'),
    '',
  ];
  if (problems.length) {
    lines.push('## Files Lean could not judge', '');
    for (const p of problems) lines.push(`- ${p.file}: ${p.problem}`);
    lines.push('');
  }
  if (outcomes.length) {
    lines.push('| File | Declaration | Line | Outcome | Details |', '|---|---|---|---|---|');
    for (const o of outcomes) {
      const outcome =
        o.item.status === 'repaired' || o.item.status === 'accepted'
          ? applied
            ? 'repaired, written'
            : 'repaired'
          : o.item.status === 'broken'
            ? 'still broken'
            : o.item.status;
      lines.push(
        `| ${cell(o.file)} | ${cell(o.item.declaration)} | ${o.item.line + 1} | ${outcome} | ${cell(o.item.reason ?? o.item.error)} |`,
      );
    }
    lines.push('');
  }
  for (const o of outcomes.filter((x) => x.after !== undefined)) {
    lines.push(`## ${o.file}: ${o.item.declaration}`, '', `Lean's first error before: ${o.item.error}`, '', '```diff');
    lines.push(...lineDiff(o.before!, o.after!));
    lines.push('```', '');
  }
  if (applied) {
    lines.push('## The files after --apply', '');
    for (const a of applied) lines.push(`- ${a.file}: ${a.verdict}`);
    lines.push('');
  }
  return lines.join('\n');
}

export async function run(argv: string[], settings: Settings): Promise<number> {
  const args = parseArgs(argv, ['apply', 'demo', 'help']);
  if (args.flags.has('help') || argv.includes('-h')) {
    console.log(HELP);
    return 0;
  }
  const known = new Set(['apply', 'report', 'samples', 'fix-turns', 'demo', 'help']);
  const unknown = [...args.flags.keys()].filter((k) => !known.has(k));
  if (unknown.length > 0) {
    console.error(`kimina repair: unknown option --${unknown[0]}\n\n${HELP}`);
    return 2;
  }
  if (args.positionals.length === 0) {
    console.error(`kimina repair: expected at least one PATH\n\n${HELP}`);
    return 2;
  }
  let files: string[] = [];
  let samples: number | undefined;
  let fixTurns: number | undefined;
  try {
    for (const p of args.positionals) files.push(...leanFiles(resolve(p)));
    samples = flagNumber(args, 'samples');
    fixTurns = flagNumber(args, 'fix-turns');
  } catch (err) {
    console.error(`kimina repair: ${(err as Error).message}`);
    return 2;
  }
  files = [...new Set(files)];
  if (files.length === 0) {
    console.error(`kimina repair: no .lean file in ${args.positionals.join(', ')}`);
    return 2;
  }
  const reportPath = resolve(flagString(args, 'report') ?? 'kimina-repair.md');
  const demo = args.flags.has('demo');
  const log = (line: string) => process.stderr.write(line + '\n');
  const app = openApp({ demo, log, settings });
  const service = await createInProcessService(app, (line) => log(demo ? `DEMO: ${line}` : line));
  const store = app.repairs();
  const controller = new AbortController();
  const onSigint = () => {
    log('\nCancelling… (the queue is kept: run the same command again to start over)');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  const shown = (f: string) => relative(process.cwd(), f) || f;
  try {
    // 1. Which declarations fail, per file.
    const texts = new Map<string, string>();
    const problems: { file: string; problem: string }[] = [];
    const planned: Omit<RepairItem, 'id' | 'status'>[] = [];
    for (const file of files) {
      const code = readFileSync(file, 'utf8');
      texts.set(file, code);
      const found = await findBroken({ uri: file, code }, (c, s) => service.check(c, s), controller.signal);
      if (found.problem) problems.push({ file: shown(file), problem: found.problem });
      for (const d of found.declarations) {
        const first = d.errors.find((e) => e.severity === 'error');
        planned.push({
          uri: file,
          declaration: d.name,
          line: d.range.start.line,
          error: first ? `line ${first.range.start.line + 1}: ${first.message.split('\n')[0]}` : '',
        });
      }
    }
    const scope = args.positionals.join(', ');
    let job = store.create(scope, planned);
    log(
      `${planned.length} broken declaration${planned.length === 1 ? '' : 's'} in ${files.length} file${files.length === 1 ? '' : 's'}`,
    );
    // 2. Repair them one by one.
    const outcomes: Outcome[] = [];
    for (const [k, item] of job.items.entries()) {
      if (controller.signal.aborted) break;
      const text = texts.get(item.uri)!;
      log(`[${k + 1}/${job.items.length}] ${shown(item.uri)}:${item.line + 1} ${item.declaration}: repairing…`);
      const result = await proveInEditor(
        {
          id: `repair-${job.id.slice(0, 8)}-${item.id}`,
          uri: item.uri,
          code: text,
          position: { line: item.line, character: 0 },
          mode: 'repair',
          samples,
          fixTurns,
        },
        text,
        service,
        () => {},
        controller.signal,
        { file: resolve(item.uri) }, // the user's file: checked in its own Lean project
      );
      const outcome: Outcome = { file: shown(item.uri), item, result };
      if (result.status === 'cancelled') break;
      if (result.status === 'proved' && result.edit) {
        const { before, after } = bodyLines(text, result.edit);
        outcome.before = before;
        outcome.after = after;
        job = store.update(job.id, item.id, 'repaired', {
          reason: 'verified in place',
          edit: result.edit,
          replaced: before,
        });
      } else {
        const why = whyNot(result);
        const skipped = result.repair?.conversation === null || result.repair === undefined;
        job = store.update(job.id, item.id, skipped ? 'skipped' : 'broken', { reason: why });
      }
      outcome.item = job.items.find((i) => i.id === item.id)!;
      log(`[${k + 1}/${job.items.length}] ${item.declaration}: ${outcome.item.status} (${outcome.item.reason ?? ''})`);
      outcomes.push(outcome);
    }
    // 3. --apply: only the verified repairs, and only over what was read: each file is read again and a repair
    // goes in only where its declaration still reads as when it was checked (repairApply.ts); then check again.
    let applied: { file: string; verdict: string }[] | null = null;
    if (args.flags.has('apply') && !controller.signal.aborted) {
      applied = [];
      for (const file of files) {
        const mine = outcomes.filter((o) => o.item.uri === file && o.item.status === 'repaired' && o.item.edit);
        if (mine.length === 0) continue;
        const original = texts.get(file)!;
        const planned: PlannedRepair[] = mine.map((o) => {
          const range = o.result!.declaration!.range;
          return {
            declaration: o.item.declaration,
            edit: o.item.edit!,
            span: {
              start: offsetAt(original, range.start.line, range.start.character),
              end: offsetAt(original, range.end.line, range.end.character),
            },
          };
        });
        const out = applyRepairs(file, original, planned);
        for (const s of out.skipped) {
          const o = mine.find((m) => m.item.declaration === s.declaration)!;
          job = store.update(job.id, o.item.id, 'skipped', { reason: `not written: ${s.reason}` });
          o.item = job.items.find((i) => i.id === o.item.id)!;
          log(`${shown(file)}: ${s.declaration}: not written (${s.reason})`);
        }
        const notWritten = out.skipped.length
          ? `; not written: ${out.skipped.map((s) => `${s.declaration} (${s.reason})`).join(', ')}`
          : '';
        if (out.written === null) {
          applied.push({
            file: shown(file),
            verdict: `nothing written: ${out.problem ?? 'no repair applies to the file as it is now'}${notWritten}`,
          });
          continue;
        }
        const n = out.applied.length;
        const after = await findBroken(
          { uri: file, code: out.written },
          (c, s) => service.check(c, s),
          controller.signal,
        );
        applied.push({
          file: shown(file),
          verdict:
            (after.problem
              ? after.problem
              : after.declarations.length
                ? `${n} repair${n === 1 ? '' : 's'} written; Lean still rejects ${after.declarations.map((d) => d.name).join(', ')}`
                : `${n} repair${n === 1 ? '' : 's'} written; Lean accepts every proof in the file`) + notWritten,
        });
      }
    }
    store.finish(job.id, controller.signal.aborted ? 'cancelled' : 'done');
    writeFileSync(reportPath, markdownReport(scope, outcomes, problems, applied));
    const repaired = outcomes.filter((o) => o.item.status === 'repaired').length;
    console.log(
      `Repaired ${repaired} of ${planned.length} broken declaration${planned.length === 1 ? '' : 's'}${applied ? ' (written)' : ''}; report: ${shown(reportPath)}`,
    );
    if (demo)
      log('DEMO: the answers came from a scripted test-double model and were checked by the stand-in REPL, not Lean.');
    return repaired === planned.length && problems.length === 0 ? 0 : 1;
  } finally {
    process.off('SIGINT', onSigint);
    await service.close();
  }
}
