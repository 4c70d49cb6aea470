// The user's own Lean project: a file is checked inside it (its toolchain, its `lake env`, its own build), not only in
// the verifier's Mathlib project. The project is the nearest folder above the file that holds a lakefile
// (`lakefile.lean` or `lakefile.toml`) and a `lean-toolchain`, as Lake and elan find it. A project not built for the
// file's imports is reported with the command that builds it (setup.ts `projectBuildState`, as for Mathlib).
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { projectBuildState } from './setup';

/** The nearest folder at or above `file`'s folder with a lakefile and a lean-toolchain; undefined when none. */
export function findUserProject(file: string): string | undefined {
  let dir = dirname(resolve(file));
  for (;;) {
    const lakefile = existsSync(join(dir, 'lakefile.lean')) || existsSync(join(dir, 'lakefile.toml'));
    if (lakefile && existsSync(join(dir, 'lean-toolchain'))) return dir;
    const up = dirname(dir);
    if (up === dir) return undefined;
    dir = up;
  }
}

/**
 * Why `projectDir` cannot check a file with these imports yet, with the command that builds it; undefined when every
 * import outside the toolchain has its .olean (the project's own modules and its packages').
 */
export function notBuiltFor(projectDir: string, imports: readonly string[]): string | undefined {
  const state = projectBuildState(projectDir, [...imports]);
  if (state.missing.length === 0) return undefined;
  return (
    `the Lean project ${projectDir} is not built for ${state.missing.map((m) => `import ${m}`).join(', ')} ` +
    `(no .olean found). Build it with: cd ${JSON.stringify(projectDir)} && ${state.buildCommand}`
  );
}
