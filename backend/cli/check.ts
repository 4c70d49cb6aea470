// `kimina check FILE…`: a verdict per declaration and per file; exit 1 if any is not valid.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { verdictsPerDeclaration, type DeclarationVerdict } from '../lean/perDeclaration';
import type { CheckOutcome } from '../lean/types';
import { openApp } from '../app/app';
import { modelText, userSource } from '../lean/authorship';
import { userHeader } from '../lean/checkedHeader';
import { findUserProject, notBuiltFor } from '../lean/userProject';
import { defaultAllowedAxioms, type AxiomPolicy } from '../lean/verdict';
import type { Settings } from '../settings/settings';
import type { BuiltVerifier, VerifierSettings } from '../lean/buildVerifier';
import { parseArgs, flagNumber, flagString } from './args';
import {
  parseVerdictMode,
  verdictInMode,
  verdictModeChoice,
  verdictModeHelp,
  verdictModeRules,
  type VerdictMode,
} from '../lean/verdictModes';

const help = `usage: kimina check FILE... [--untrusted] [--json] [--timeout SECONDS] [--project DIR] [--allow-native-decide] [--verdict ${verdictModeChoice()}]

Checks each Lean file with the verifier and prints one verdict per declaration
(valid | sorry | lean_error | rejected | timeout_error | repl_error | server_error).
A FILE is your own code: checked as Lean elaborates it in its project (the nearest folder above it with a
lakefile and a lean-toolchain, else --project or KIMINA_LEAN_PROJECT), its header, notations, macros,
options and #evals unfiltered; every declaration is still audited (sorry, axioms).
--untrusted: the files are text nobody vouches for (a model's output): the untrusted-code filter runs first.
${verdictModeHelp()}
Exits 1 if a file's verdict or any declaration's is not valid, 2 on usage errors.`;

interface FileReport {
  file: string;
  mode: VerdictMode;
  status: string;
  reason: string;
  declarations: DeclarationVerdict[];
  problems: string[];
}

export async function run(args: string[], settings: Settings): Promise<number> {
  const p = parseArgs(args, ['json', 'help', 'allow-native-decide', 'untrusted']);
  const untrusted = p.flags.has('untrusted');
  if (p.flags.has('help')) {
    console.log(help);
    return 0;
  }
  if (p.positionals.length === 0) {
    console.error(help);
    return 2;
  }
  let mode: VerdictMode;
  try {
    mode = parseVerdictMode(flagString(p, 'verdict'));
  } catch (err) {
    console.error(`kimina check: ${(err as Error).message}`);
    return 2;
  }
  const flags: Partial<VerifierSettings> = {};
  const project = flagString(p, 'project');
  if (project) flags.leanProject = resolve(project);
  if (p.flags.has('allow-native-decide')) flags.allowNativeDecide = true;
  const timeout = flagNumber(p, 'timeout');
  const sources: [string, string][] = [];
  for (const file of p.positionals) {
    try {
      sources.push([file, readFileSync(file, 'utf8')]);
    } catch (err) {
      console.error(`kimina check: cannot read ${file}: ${(err as Error).message}`);
      return 2;
    }
  }
  // the user's files run in their own project (its toolchain and build: app.verifierForFile); --project, or text
  // nobody vouches for, in the verifier's project
  const app = openApp({
    settings,
    verifier: { ...flags, maxRepls: Math.min(settings.maxRepls, Math.max(1, sources.length)) },
  });
  const outcomes: CheckOutcome[] = new Array(sources.length);
  const reports: FileReport[] = [];
  let policy: AxiomPolicy | undefined;
  try {
    const groups = new Map<BuiltVerifier, number[]>();
    sources.forEach(([file, code], i) => {
      const own = !project && !untrusted;
      const projectDir = (own ? findUserProject(file) : undefined) ?? app.verifierSettings().leanProject;
      // a project Lean would start in (not a REPL command we were given) must be built for the file's imports
      const unbuilt =
        settings.replCommand || untrusted
          ? undefined
          : notBuiltFor(
              projectDir,
              userHeader(code).imports.map((m) => m.module),
            );
      if (unbuilt) {
        outcomes[i] = { verdict: { status: 'server_error', reason: unbuilt, messages: [], sorries: [], time: 0 } };
        return;
      }
      const built = own ? app.verifierForFile(file) : app.verifier();
      groups.set(built, [...(groups.get(built) ?? []), i]);
    });
    for (const [built, indices] of groups) {
      policy = built.verifier.policy;
      // in chunks that fit the verifier's admission limit, so any number of files can be checked
      const chunk = Math.max(1, built.verifier.stats().maxInFlight);
      for (let k = 0; k < indices.length; k += chunk) {
        const part = indices.slice(k, k + chunk);
        const checked = untrusted
          ? await built.verifier.checkBatch(
              part.map((i) => modelText(sources[i][1])),
              { timeout },
            )
          : await built.verifier.checkBatch(
              part.map((i) => userSource(sources[i][1])),
              { timeout },
              'user',
            );
        part.forEach((i, j) => (outcomes[i] = checked[j]));
      }
    }
  } finally {
    await app.close();
  }
  const shownPolicy: AxiomPolicy = policy ?? {
    allowed: settings.allowedAxioms ?? defaultAllowedAxioms,
    allowNativeDecide: false,
  };
  sources.forEach(([file, code], i) => {
    const { declarations, fileProblems } = verdictsPerDeclaration(code, outcomes[i], shownPolicy, mode);
    const verdict = verdictInMode(outcomes[i].verdict, mode);
    reports.push({
      file,
      mode,
      status: verdict.status,
      reason: verdict.reason,
      declarations,
      problems: fileProblems.map((m) => `line ${m.pos.line}: ${m.data.split('\n')[0]}`),
    });
  });
  // the file's own verdict counts too: a declaration the per-declaration split misreads can never make a
  // file that Lean (or the audit) did not accept exit 0
  const allValid = reports.every(
    (r) =>
      r.status === 'valid' &&
      r.problems.length === 0 &&
      r.declarations.every((d) => d.status === 'valid') &&
      (r.declarations.length > 0 || r.status === 'valid'),
  );
  if (p.flags.has('json')) {
    console.log(JSON.stringify({ ok: allValid, mode, files: reports }, null, 2));
  } else {
    for (const r of reports) {
      for (const problem of r.problems) console.log(`${r.file}: lean_error: ${problem}`);
      if (r.declarations.length === 0 || r.status !== 'valid') console.log(`${r.file}: ${r.status}: ${r.reason}`);
      for (const d of r.declarations)
        console.log(
          `${r.file}:${d.line}: ${d.kind} ${d.kind === 'example' ? '' : d.name + ' '}${d.status}: ${d.reason}`.replace(
            '  ',
            ' ',
          ),
        );
    }
    const counted = reports.flatMap((r) => r.declarations);
    console.log(
      `${counted.filter((d) => d.status === 'valid').length}/${counted.length} declarations valid${verdictModeRules[mode].countNote}`,
    );
  }
  return allValid ? 0 : 1;
}
