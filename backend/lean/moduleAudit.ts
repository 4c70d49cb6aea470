// The axiom audit of a module file. `#print axioms` inside a `module` is an error before Lean v4.30 (lean4 #8174:
// "cannot use `#print axioms` in a `module`; …", src/Lean/Elab/Print.lean; allowed again by lean4 #13117), and an
// environment made from a `module` header stays a module environment for every command run on it through `env`.
// So on those releases the audit runs outside module mode, on the very constants Lean added:
//   {"pickleTo": <scratch>/audit-N.olean, "env": <the checked env>}   the REPL writes the env's imports, the constants
//                                                                      added after them and the command state
//   {"unpickleEnvFrom": <same path>}                                  the REPL imports the modules again with
//                                                                      `importModules … (level := .private)`: not a
//                                                                      module env, every imported body loaded
//   {"cmd": "#print axioms _root_.X …", "env": <the unpickled env>}   answers as in any non-module file
// (leanprover-community/repl REPL/Snapshots.lean `CommandSnapshot.pickle` / `unpickle`, REPL/Main.lean). The
// constants are the checked env's own (`env.constants.map₂`, replayed without re-checking, which Lean's kernel did
// when they were added), so the audit reads exactly what the check added; it costs one import per audit.
import { compareReleaseTags } from './toolchain';

/**
 * Whether `#print axioms` answers inside a module on this Lean release (`v4.30.0` and later). An unknown release
 * (a REPL command we did not start from a project) counts as an older one: the pickled audit is sound on every
 * release, only slower.
 */
export function printAxiomsWorksInModules(releaseTag: string | undefined): boolean {
  if (releaseTag === undefined) return false;
  try {
    return compareReleaseTags(releaseTag, 'v4.30.0') >= 0;
  } catch {
    return false;
  }
}
