// Recorded real-REPL answers through `kimina check` as a user runs it (one process per Lean version,
// every case as its own .lean file), over replaying REPLs (a TEST DOUBLE of Lean).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { replayReplCommand, snippetOf } from '../fixtures/replay-repl/index';
import {
  assertClasses,
  casesOf,
  describeReport,
  expectedClass,
  knownMismatches,
  knownMismatchKey,
  leanVersions,
} from './replayCases';

const root = join(__dirname, '..', '..');
const cli = join(root, 'backend', 'cli.ts');

interface CheckedFile {
  file: string;
  status: string;
  declarations: { name: string; status: string }[];
  problems: string[];
}

for (const lean of leanVersions) {
  test(`kimina check over recorded answers of Lean ${lean}: every verdict class matches the recording`, (t) => {
    const cases = casesOf(lean);
    const dir = mkdtempSync(join(tmpdir(), 'kimina-replay-check-'));
    mkdirSync(join(dir, 'home'));
    const files = cases.map((r, i) => {
      const file = join(dir, `case${i}.lean`);
      writeFileSync(file, snippetOf(r));
      return file;
    });
    const r = spawnSync(process.execPath, ['--import', 'tsx', cli, 'check', '--json', ...files], {
      cwd: root,
      encoding: 'utf8',
      timeout: 240_000,
      env: {
        ...process.env,
        KIMINA_REPL_COMMAND: replayReplCommand(lean),
        KIMINA_SANDBOX: 'none',
        KIMINA_MAX_REPLS: '3',
        KIMINA_HOME: join(dir, 'home'),
      },
    });
    assert.equal(r.status, 1, `exit 1: some declarations are not valid\n${r.stderr}`);
    const out = JSON.parse(r.stdout) as { ok: boolean; files: CheckedFile[] };
    assert.deepEqual(
      out.files.map((f) => f.file),
      files,
    );
    const got = new Map(cases.map((c, i) => [c.id, out.files[i].status]));
    t.diagnostic(describeReport('kimina check', lean, assertClasses('kimina check', cases, got)));
    // the per-declaration report agrees with the file's class
    cases.forEach((c, i) => {
      if (knownMismatchKey(c) in knownMismatches) return;
      const f = out.files[i];
      const expected = expectedClass(c.answer);
      const statuses = f.declarations.map((d) => d.status);
      if (expected === 'valid')
        assert.deepEqual(
          [...new Set(statuses)].filter((s) => s !== 'valid'),
          [],
          `${c.id}: every declaration valid`,
        );
      else
        assert.ok(
          statuses.includes(expected) || (expected === 'lean_error' && f.problems.length > 0),
          `${c.id}: a declaration is ${expected} (got ${statuses.join(', ')})`,
        );
    });
  });
}
