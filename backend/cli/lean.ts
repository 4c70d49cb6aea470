// `kimina lean setup|status`: build the Lean REPL for a project, or show what the verifier will use.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findReplBinary, projectToolchainTag } from '../lean/launch';
import { detectSandbox } from '../lean/sandbox';
import { setupRepl } from '../lean/setup';
import { openApp } from '../app/app';
import { parseArgs, flagString } from './args';
import { readSome } from '../settings/settings';

const help = `usage: kimina lean setup [--project DIR]   build leanprover-community/repl for the project's toolchain
       kimina lean status [--project DIR]  show how proofs will be checked

DIR defaults to KIMINA_LEAN_PROJECT or the current folder (it must hold lean-toolchain).`;

export async function run(args: string[]): Promise<number> {
  const [sub, ...rest] = args;
  const p = parseArgs(rest, ['help']);
  if (!sub || sub === '--help' || p.flags.has('help')) {
    console.log(help);
    return sub ? 0 : 2;
  }
  const settings = openApp().verifierSettings(); // settings only: nothing is opened
  const project = resolve(flagString(p, 'project') ?? settings.projectDir);
  if (sub === 'setup') {
    const result = await setupRepl(project, (line) => console.error(line), readSome(['home', 'replGitUrl']));
    console.log(result.binary);
    console.error(
      `kimina serve and kimina check will now use it for projects on ${result.tag} (or set KIMINA_REPL_PATH=${result.binary}).`,
    );
    return 0;
  }
  if (sub === 'status') {
    const tag = projectToolchainTag(project);
    const binary = settings.replCommand ? undefined : findReplBinary(settings.home, project, settings.replPath);
    const file = join(project, 'lean-toolchain');
    const toolchain = existsSync(file) ? readFileSync(file, 'utf8').trim().slice(0, 120) : undefined;
    console.log(
      `project:   ${project} (${tag ?? (toolchain === undefined ? 'no lean-toolchain' : `${JSON.stringify(toolchain)}: not a Lean release, no REPL to set up`)})`,
    );
    console.log(
      `checks by: ${settings.replCommand ? `KIMINA_REPL_COMMAND (${settings.replCommand})` : binary ? `REPL pool, lake env ${binary}` : 'lake env lean --json per snippet (no REPL build: run `kimina lean setup`)'}`,
    );
    const sandbox = detectSandbox(settings.sandbox);
    console.log(`sandbox:   ${sandbox.kind}: ${sandbox.enforces}`);
    console.log(
      `limits:    ${settings.maxRepls} REPLs, queue ${settings.maxQueue}, ${settings.memoryLimitMb} MiB address space, recycle after ${settings.maxUses} uses or ${settings.maxRssMb} MiB RSS`,
    );
    return 0;
  }
  console.error(`kimina lean: unknown subcommand '${sub}'\n\n${help}`);
  return 2;
}
