// `kimina lean setup|status`: build the Lean REPL for a project, or show what the verifier will use.
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { findReplBinary, projectToolchainTag, replBinaryIn, setupReplDir } from '../lean/launch';
import { detectSandbox } from '../lean/sandbox';
import { ProjectNotBuiltError, replProvenance, setupRepl } from '../lean/setup';
import { splitHeader } from '../lean/header';
import { openApp } from '../app/app';
import { parseArgs, flagString } from './args';
import type { Settings } from '../settings/settings';

const help = `usage: kimina lean setup [--project DIR] [--build]   build leanprover-community/repl for the project's toolchain
       kimina lean status [--project DIR]            show how proofs will be checked

DIR defaults to KIMINA_LEAN_PROJECT or the current folder (it must hold lean-toolchain).
setup also checks that the project is built for the imports checks will use (Mathlib when the project
depends on it, and KIMINA_INIT_REPLS' headers); when it is not, it names the command that builds it
(\`lake exe cache get && lake build\` for Mathlib projects) and exits 3; --build runs that command.
For a release repl has no revision for, setup builds the nearest older repl source with the project's
toolchain and uses it once its smoke test passes; status shows where it came from.`;

export async function run(args: string[], all: Settings): Promise<number> {
  const [sub, ...rest] = args;
  const p = parseArgs(rest, ['help', 'build']);
  if (!sub || sub === '--help' || p.flags.has('help')) {
    console.log(help);
    return sub ? 0 : 2;
  }
  const settings = openApp({ settings: all }).verifierSettings(); // settings only: nothing is opened
  const project = resolve(flagString(p, 'project') ?? settings.leanProject);
  if (sub === 'setup') {
    // the modules of each pre-warmed header as the pool sends it (Mathlib… collapsed), flags (`public`, `all`) aside
    const imports = Object.keys(settings.initRepls).flatMap((h) => {
      const split = splitHeader(h);
      return split.header
        .split('\n')
        .filter((_, k) => split.sources[k].length > 0)
        .map((line) => line.split(' ').pop() as string);
    });
    let result;
    try {
      result = await setupRepl(project, (line) => console.error(line), all, {
        build: p.flags.has('build'),
        imports,
      });
    } catch (err) {
      if (!(err instanceof ProjectNotBuiltError)) throw err;
      console.log(err.result.binary);
      console.error(`kimina lean setup: ${err.message}`);
      return 3;
    }
    console.log(result.binary);
    if (result.provenance)
      console.error(
        `built from repl ${result.provenance.commit.slice(0, 12)} (made for ${result.provenance.madeFor}) with ${result.provenance.builtWith}; smoke test passed (kimina lean status shows it).`,
      );
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
    // Where the REPL that `kimina lean setup` built came from (a source made for an older release included).
    if (binary && tag && binary === replBinaryIn(setupReplDir(settings.home, tag))) {
      const provenance = replProvenance(settings.home, tag);
      if (provenance) console.log(`repl:      ${provenance}`);
    }
    const sandbox = detectSandbox(settings.sandbox, settings.childEnv);
    console.log(`sandbox:   ${sandbox.kind}: ${sandbox.enforces}`);
    console.log(
      `limits:    ${settings.maxRepls} REPLs, queue ${settings.maxQueue}, ${settings.replMemoryMb} MiB address space, recycle after ${settings.replMaxUses} uses or ${settings.replMaxRssMb} MiB RSS`,
    );
    return 0;
  }
  console.error(`kimina lean: unknown subcommand '${sub}'\n\n${help}`);
  return 2;
}
