// Options a user's file may set that weaken checking (`debug.skipKernelTC` and the rest of `debug.*`). The user's file
// is never filtered, so they reach Lean; a declaration checked under one was not checked by the kernel, so no verdict
// under it is `valid` (verifier.ts for the user's file, fileSession.ts for a candidate below them). Every occurrence
// counts, `… in` included: `set_option X true in theorem t …` weakens t itself, and `set_option X true in section`
// expands to `section set_option X true … end`, leaving it on for the rest of the section.
import { lexLean } from './lexer';

/** Every `debug.…` option the text sets (with or without `in`), each named once. */
export function weakeningOptionsOf(prefix: string): string[] {
  const tokens = lexLean(prefix);
  const found: string[] = [];
  for (let k = 0; k + 1 < tokens.length; k++) {
    if (tokens[k].text !== 'set_option') continue;
    const name = tokens[k + 1].text.replace(/[«»]/g, '');
    if (name.startsWith('debug.') && !found.includes(name)) found.push(name);
  }
  return found;
}
