// Runs every *.test.ts under the given folder with node's test runner (TypeScript through tsx).
// `test` alone skips the e2e and trainer folders, which have their own scripts.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';

const root = process.argv[2] ?? 'test';
const ownSuites = new Set(['test/e2e', 'test/trainer']);
function find(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (root === 'test' && ownSuites.has(p)) continue;
      if (name === 'fixtures' || name === 'node_modules') continue;
      out.push(...find(p));
    } else if (name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}
const files = find(root);
if (files.length === 0) {
  console.error(`no tests under ${root}`);
  process.exit(1);
}
// The trainer suite's Python environment (several GB from PyPI on a fresh machine) is created before any test
// starts, so a download failure is reported once, as itself, instead of as a failed hook of whichever file ran first.
if (root.startsWith('test/trainer')) {
  const setup = spawnSync(process.execPath, ['--import', 'tsx', 'test/trainer/setup.ts'], { stdio: 'inherit' });
  if (setup.status !== 0) {
    console.error("the trainer suite's Python environment could not be created (above)");
    process.exit(1);
  }
}
// The e2e files share one packaged extension and code-server install: run them one at a time.
const serial = root.startsWith('test/e2e') ? ['--test-concurrency=1'] : [];
// Every temporary folder the tests make (hundreds a run) goes under one scratch folder, removed at the end. The e2e
// files keep the system's: code-server puts its IPC sockets there and the harness cleans up after itself.
const scratch = serial.length === 0 ? mkdtempSync(join(tmpdir(), 'kimina-tests-')) : undefined;
const env = scratch ? { ...process.env, TMPDIR: scratch, TMP: scratch, TEMP: scratch } : process.env;
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...serial, ...files], {
  stdio: 'inherit',
  env,
});
if (scratch) rmSync(scratch, { recursive: true, force: true });
process.exit(r.status ?? 1);
