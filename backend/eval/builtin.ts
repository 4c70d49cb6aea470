// The benchmark the repository carries: miniF2F in Lean 4 (data/minif2f-lean4, MIT, with its LICENSE and
// README; github.com/yangky11/miniF2F-lean4 at commit 5746b7d, 244 test + 244 valid problems, toolchain
// leanprover/lean4:v4.24.0). `kimina eval run minif2f-lean4` evaluates it without a download. It is NOT the
// published table's AI-MO/minif2f_test (Kimina's rectified test set with informal statements, checked on
// Lean v4.15.0): its reports say so.
import { existsSync } from 'node:fs';
import { join, relative, resolve, isAbsolute } from 'node:path';

/** The name `kimina eval run` accepts for the built-in copy (also as `builtin:minif2f-lean4`). */
export const BUILTIN_MINIF2F = 'minif2f-lean4';
/** Where it came from. */
const BUILTIN_MINIF2F_SOURCE = 'yangky11/miniF2F-lean4@5746b7d';
/** The name reports give it. */
export const BUILTIN_MINIF2F_NAME = `miniF2F-lean4 (built-in, ${BUILTIN_MINIF2F_SOURCE})`;
/** Files per split. */
export const BUILTIN_MINIF2F_FILES = { Test: 244, Valid: 244 } as const;
/** Why its figures do not stand beside the published table, whatever the other settings. */
export const BUILTIN_MINIF2F_NOT_PUBLISHED =
  `the built-in miniF2F-lean4 (${BUILTIN_MINIF2F_SOURCE}, Lean v4.24.0 statements, no informal statements) ` +
  "is not the published table's AI-MO/minif2f_test (kimina eval fetch)";

/**
 * The folder of the built-in miniF2F: from the sources (backend/eval/ → ../../data) or from the bundle
 * (dist/cli.js → ../data; the vsix carries data/minif2f-lean4). Throws when neither has it.
 */
export function builtinMinif2fDir(): string {
  const candidates = [
    resolve(__dirname, '..', '..', 'data', BUILTIN_MINIF2F),
    resolve(__dirname, '..', 'data', BUILTIN_MINIF2F),
  ];
  const found = candidates.find((d) => existsSync(join(d, 'MiniF2F', 'Test')));
  if (!found) throw new Error(`the built-in miniF2F is missing (looked in ${candidates.join(', ')})`);
  return found;
}

/** Whether a path is the built-in copy or inside it. */
export function isBuiltinMinif2f(path: string): boolean {
  let root: string;
  try {
    root = builtinMinif2fDir();
  } catch {
    return false;
  }
  const rel = relative(root, resolve(path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/**
 * A `kimina eval run` benchmark argument as a path: `builtin:minif2f-lean4`, or `minif2f-lean4` when no such
 * file or folder exists where the command runs, is the built-in copy; anything else is a path.
 */
export function resolveBenchmarkArg(arg: string): string {
  if (arg === `builtin:${BUILTIN_MINIF2F}`) return builtinMinif2fDir();
  if (arg.startsWith('builtin:'))
    throw new Error(`no built-in benchmark '${arg.slice('builtin:'.length)}' (built in: ${BUILTIN_MINIF2F})`);
  if (arg === BUILTIN_MINIF2F && !existsSync(resolve(arg))) return builtinMinif2fDir();
  return resolve(arg);
}
