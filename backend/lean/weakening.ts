// Options a user's file may set that weaken checking (`debug.skipKernelTC` and the rest of `debug.*`). The user's file
// is never filtered, so they reach Lean; a declaration checked under one was not checked by the kernel, so no verdict
// under it is `valid` (verifier.ts for the user's file, fileSession.ts for a candidate below them).
import { lexLean } from './lexer';

/** `set_option debug.…` the text leaves set (not `… in`, which holds for one command): they reach what follows. */
export function weakeningOptionsOf(prefix: string): string[] {
  const tokens = lexLean(prefix);
  const found: string[] = [];
  for (let k = 0; k + 1 < tokens.length; k++) {
    if (tokens[k].text !== 'set_option') continue;
    const name = tokens[k + 1].text.replace(/[«»]/g, '');
    const scoped = tokens[k + 3]?.text === 'in';
    if (!scoped && name.startsWith('debug.') && !found.includes(name)) found.push(name);
  }
  return found;
}
