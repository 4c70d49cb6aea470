// The user's own Lean project (backend/lean/userProject.ts): found above the file as Lake finds it, and a project not
// built for the file's imports reported with the command that builds it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findUserProject, notBuiltFor } from '../../backend/lean/userProject';

function project(lakefile: 'lakefile.lean' | 'lakefile.toml'): string {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-user-project-'));
  writeFileSync(join(dir, lakefile), lakefile.endsWith('.toml') ? 'name = "Own"\n' : 'import Lake\n');
  writeFileSync(join(dir, 'lean-toolchain'), 'leanprover/lean4:v4.29.0\n');
  mkdirSync(join(dir, 'Own', 'Sub'), { recursive: true });
  return dir;
}

test('the nearest folder with a lakefile and a lean-toolchain is the project; none above gives undefined', () => {
  for (const lakefile of ['lakefile.lean', 'lakefile.toml'] as const) {
    const dir = project(lakefile);
    assert.equal(findUserProject(join(dir, 'Own', 'Sub', 'File.lean')), dir);
    assert.equal(findUserProject(join(dir, 'Top.lean')), dir);
  }
  // a lakefile without a lean-toolchain is not a project elan can run
  const bare = mkdtempSync(join(tmpdir(), 'kimina-no-toolchain-'));
  writeFileSync(join(bare, 'lakefile.lean'), 'import Lake\n');
  const found = findUserProject(join(bare, 'X.lean'));
  assert.notEqual(found, bare);
});

test("a project not built for the file's own imports is reported with the command that builds it; built, nothing", () => {
  const dir = project('lakefile.toml');
  const why = notBuiltFor(dir, ['Own.Basic', 'Init.Data']);
  assert.ok(why);
  assert.match(why, /not built for import Own\.Basic \(no \.olean found\)/);
  assert.match(why, /Build it with: cd ".*" && lake build$/);
  assert.doesNotMatch(why, /Init\.Data/); // the toolchain's own modules are always there
  mkdirSync(join(dir, '.lake', 'build', 'lib', 'lean', 'Own'), { recursive: true });
  writeFileSync(join(dir, '.lake', 'build', 'lib', 'lean', 'Own', 'Basic.olean'), '');
  assert.equal(notBuiltFor(dir, ['Own.Basic']), undefined);
});
