// `kimina check` in user-file mode over the vendored real-file corpus (test/fixtures/real-lean/: Batteries,
// Mathematics in Lean, Mathlib files, with their licences), the stand-in REPL (a TEST DOUBLE) in place of Lean: none
// of the user's own declarations may be refused before Lean. What Lean (here: the double's rules) then says of each
// is its business; only the product's own decisions are counted.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';

const root = join(__dirname, '..', '..');
const corpus = join(root, 'test', 'fixtures', 'real-lean');

function* leanFiles(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* leanFiles(path);
    else if (name.endsWith('.lean')) yield path;
  }
}

interface Report {
  files: { file: string; status: string; reason: string; declarations: { status: string; reason: string }[] }[];
}

test('kimina check (user-file mode) over the real-file corpus refuses none of the user’s declarations before Lean', () => {
  const files = [...leanFiles(corpus)];
  assert.ok(files.length >= 30, `${files.length} files`);
  const r = spawnSync(
    process.execPath,
    ['--import', 'tsx', join(root, 'backend', 'cli.ts'), 'check', '--json', ...files],
    {
      cwd: root,
      encoding: 'utf8',
      timeout: 240_000,
      env: { ...process.env, KIMINA_REPL_COMMAND: standInReplCommand(), KIMINA_SANDBOX: 'none', KIMINA_MAX_REPLS: '2' },
    },
  );
  const report = JSON.parse(r.stdout) as Report;
  assert.equal(report.files.length, files.length);
  const declarations = report.files.flatMap((f) => f.declarations);
  const before = declarations.filter((d) => /before Lean/.test(d.reason));
  const fileRefusals = report.files.filter((f) => /before Lean/.test(f.reason));
  const counts: Record<string, number> = {};
  for (const d of declarations) counts[d.status] = (counts[d.status] ?? 0) + 1;
  console.log(
    `real-file corpus, user-file mode: ${files.length} files, ${declarations.length} declarations, ${before.length} refused before Lean; ${JSON.stringify(counts)}`,
  );
  assert.ok(declarations.length >= 700, `${declarations.length} declarations`);
  assert.deepEqual(before, []);
  assert.deepEqual(fileRefusals, []);
  // Lean (the double) judged them: most are valid, and the corpus's own sorries are found
  assert.ok((counts.valid ?? 0) > declarations.length / 2);
  assert.ok((counts.sorry ?? 0) > 0);
});
