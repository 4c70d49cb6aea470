// The lexer over real Lean that compiles: any problem it reports there (other than the plain strings
// holding `{` it refuses on purpose) would be a misreading. The repositories are read from local
// git clones when LEAN_GIT_MIRRORS names a folder of them (`<owner>+<name>/repo`, git directories; never copied
// here); without them the test skips.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lexLeanFull } from '../../backend/lean/lexer';
import { leanFilesOf, mirrorOf } from './mirrorFiles';

const mirrors = [
  'leanprover-community+batteries', // Batteries: meta code, strings, chars, raw strings, interpolation
  'teorth+analysis', // Tao's Analysis I: Mathlib-style proofs and notation
  'leanprover-community+repl', // the REPL: its own sources
]
  .map((name) => mirrorOf(name))
  .filter((dir): dir is string => dir !== undefined);

test(
  'real Lean reads without lexical problems (Batteries, Analysis I, the REPL)',
  { skip: mirrors.length === 0 && 'LEAN_GIT_MIRRORS names no folder of git clones' },
  () => {
    let files = 0;
    for (const repo of mirrors) {
      for (const { path, text } of leanFilesOf(repo)) {
        const problems = lexLeanFull(text).problems.filter(
          (p) => !p.message.includes('reads differently as plain and as interpolated'),
        );
        assert.deepEqual(problems, [], `${repo} ${path}`);
        files++;
      }
    }
    assert.ok(files > 100, `${files} files`);
  },
);
