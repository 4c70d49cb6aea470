// The architecture rules biome.jsonc holds (they were regular expressions in test/architecture.test.ts): each one,
// run by the real linter over a scratch tree laid out like the repository, refuses what it should and lets the
// allowed forms through. `npm run lint` runs them over the code itself.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const root = resolve(__dirname, '..');

/** path → [source, the rules it must break ([] for none)] */
const probes: Record<string, [string, string[]]> = {
  'backend/lean/env.ts': ['export const a = process.env.X;', ['noProcessEnv']],
  'backend/client/env.ts': ['export const a = { ...process.env };', ['noProcessEnv']],
  'backend/settings/env.ts': ['export const a = process.env.X;', []],
  'backend/lean/prover.ts': [
    "import { prove } from '../prover/prove';\nexport const a = prove;",
    ['noRestrictedImports'],
  ],
  'backend/eval/reader.ts': [
    "import { readSettings } from '../settings/settings';\nexport const a = readSettings;",
    ['noRestrictedImports'],
  ],
  'backend/eval/type.ts': ["import type { Settings } from '../settings/settings';\nexport type A = Settings;", []],
  'backend/api/app.ts': ["import { openApp } from '../app/app';\nexport const a = openApp;", ['noRestrictedImports']],
  'backend/training/api.ts': ["import { x } from '../api/server';\nexport const a = x;", ['noRestrictedImports']],
  'bench/test.ts': ["import { x } from '../test/helpers';\nexport const a = x;", ['noRestrictedImports']],
  'backend/api/fetch.ts': ["export const a = fetch('http://127.0.0.1');", ['noRestrictedGlobals']],
  'extension/lean.ts': ["import { x } from '../backend/lean/verdict';\nexport const a = x;", ['noRestrictedImports']],
  'extension/view.ts': ["import { x } from '../media/proofViewState';\nexport const a = x;", ['noRestrictedImports']],
  'extension/ok.ts': [
    "import { x } from '../backend/protocol';\nimport { y } from '../backend/protocol/lsp';\nimport type { Z } from '../media/proofViewMessages';\nexport const a: Z[] = [x, y];",
    [],
  ],
};

test('the lint rules of the architecture refuse what they should, and only that', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-lint-'));
  try {
    copyFileSync(join(root, 'biome.jsonc'), join(dir, 'biome.jsonc'));
    for (const [path, [source]] of Object.entries(probes)) {
      mkdirSync(dirname(join(dir, path)), { recursive: true });
      writeFileSync(join(dir, path), `${source}\n`);
    }
    let out = '';
    try {
      execFileSync(join(root, 'node_modules/.bin/biome'), ['lint', '--vcs-enabled=false', '--reporter=github', '.'], {
        cwd: dir,
        encoding: 'utf8',
        stdio: 'pipe',
      });
    } catch (err) {
      out = String((err as { stdout?: string }).stdout ?? '');
    }
    const found = new Map<string, string[]>();
    for (const m of out.matchAll(/^::error title=lint\/\w+\/(\w+),file=([^,]+),/gm)) {
      const path = m[2].slice(dir.length + 1);
      found.set(path, [...(found.get(path) ?? []), m[1]]);
    }
    for (const [path, [, rules]] of Object.entries(probes))
      assert.deepEqual(found.get(path) ?? [], rules, `${path}: ${found.get(path) ?? 'no error'}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
