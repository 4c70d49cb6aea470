// The lexer over real Lean that compiles: any problem it reports there (other than the plain strings
// holding `{` it refuses on purpose) would be a misreading. The repositories are read from local
// git mirrors when present (fetched for this check, never copied here); without them the test skips.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { lexLeanFull } from '../../backend/lean/lexer';
import { leanFilesOf } from './mirrorFiles';

const mirrors = [
  '/work/.mirror/leanprover-community+batteries/repo', // Batteries: meta code, strings, chars, raw strings, interpolation
  '/work/.mirror/teorth+analysis/repo', // Tao's Analysis I: Mathlib-style proofs and notation
  '/work/.mirror/leanprover-community+repl/repo', // the REPL: its own sources
].filter(existsSync);

test('real Lean reads without lexical problems (Batteries, Analysis I, the REPL)', { skip: mirrors.length === 0 && 'no local mirrors' }, () => {
  let files = 0;
  for (const repo of mirrors) {
    for (const { path, text } of leanFilesOf(repo)) {
      const problems = lexLeanFull(text).problems.filter((p) => !p.message.includes('reads differently as plain and as interpolated'));
      assert.deepEqual(problems, [], `${repo} ${path}`);
      files++;
    }
  }
  assert.ok(files > 100, `${files} files`);
});
