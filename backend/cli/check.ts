// `kimina check FILE…`: a verdict per declaration and per file; exit 1 if any is not valid.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { verdictsPerDeclaration, type DeclarationVerdict } from '../lean/perDeclaration';
import type { CheckOutcome } from '../lean/types';
import { openApp } from '../app/app';
import type { Settings } from '../settings/settings';
import type { VerifierSettings } from '../lean/buildVerifier';
import { parseArgs, flagNumber, flagString } from './args';
import {
  parseVerdictMode,
  verdictInMode,
  verdictModeChoice,
  verdictModeHelp,
  verdictModeRules,
  type VerdictMode,
} from '../lean/verdictModes';

const help = `usage: kimina check FILE... [--json] [--timeout SECONDS] [--project DIR] [--allow-native-decide] [--verdict ${verdictModeChoice()}]

Checks each Lean file with the verifier and prints one verdict per declaration
(valid | sorry | lean_error | rejected | timeout_error | repl_error | server_error).
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
  const p = parseArgs(args, ['json', 'help', 'allow-native-decide']);
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
  if (project) flags.projectDir = resolve(project);
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
  flags.maxRepls = Math.min(settings.maxRepls, Math.max(1, sources.length));
  const app = openApp({ settings, verifier: flags });
  const built = app.verifier();
  const reports: FileReport[] = [];
  try {
    // in chunks that fit the verifier's admission limit, so any number of files can be checked
    const chunk = Math.max(1, built.verifier.stats().maxInFlight);
    const outcomes: CheckOutcome[] = [];
    for (let i = 0; i < sources.length; i += chunk) {
      outcomes.push(
        ...(await built.verifier.checkBatch(
          sources.slice(i, i + chunk).map(([, code]) => code),
          { timeout },
        )),
      );
    }
    sources.forEach(([file, code], i) => {
      const { declarations, fileProblems } = verdictsPerDeclaration(code, outcomes[i], built.verifier.policy, mode);
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
  } finally {
    await app.close();
  }
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
