// The one table of VS Code settings (backend/protocol/settingsTable.ts): package.json's generated parts equal what it
// makes, every variable it names is one the backend reads, and docs/architecture.md's "A VS Code setting that reaches
// the backend" how-to, followed literally on a scratch copy, touches two hand-edited files and reaches both halves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import {
  restartingSettings,
  restrictedConfigurations,
  settingDefaults,
  settingOfVariable,
  settingsEnv,
  settingsTable,
} from '../../backend/protocol/settingsTable';
import { allVariables, readSettings } from '../../backend/settings/settings';
import { withGeneratedManifest } from '../../scripts/gen-settings';

test('package.json holds exactly the generated configuration, trust list and engine enum (npm run gen:settings)', () => {
  const text = readFileSync('package.json', 'utf8');
  assert.equal(text, withGeneratedManifest(text), 'package.json is out of date: run `npm run gen:settings`');
  const pkg = JSON.parse(text);
  assert.deepEqual(pkg.capabilities.untrustedWorkspaces.restrictedConfigurations, restrictedConfigurations());
  assert.deepEqual(pkg.contributes.configuration.properties['kimina.engine'].enum, [
    'auto',
    'onnx',
    'openai',
    'llama',
    'vllm',
  ]);
});

test('every KIMINA_* variable of the table is declared by the backend, and reads back the value sent', () => {
  const declared = new Set(allVariables().flatMap((v) => (v.scope === 'backend' ? v.names : [])));
  const rows = Object.entries(settingsTable).filter(([, r]) => 'env' in r);
  assert.ok(rows.length >= 12, `rows with a variable: ${rows.length}`);
  for (const [key, row] of rows) {
    assert.ok('env' in row && declared.has(row.env), `kimina.${key}: ${'env' in row ? row.env : ''} is not declared`);
    assert.equal(settingOfVariable[row.env], `kimina.${key}`);
  }
  // values the editor sends are values the backend accepts (it throws on a wrong one)
  const backend = readSettings(
    settingsEnv({ ...settingDefaults(), engine: 'openai', device: 'cuda', speculation: true }),
  );
  assert.equal(backend.engine, 'openai');
  assert.equal(backend.device, 'cuda');
  assert.equal(backend.speculation, true);
  assert.equal(readSettings(settingsEnv(settingDefaults())).speculation, false);
  assert.equal(readSettings(settingsEnv(settingDefaults())).device, 'cpu');
});

test('a setting that reaches the backend restarts it; a trusted-only one is machine-scoped', () => {
  for (const [key, row] of Object.entries(settingsTable)) {
    if ('env' in row) assert.ok(restartingSettings.includes(`kimina.${key}`), `kimina.${key} restarts the backend`);
  }
  const props = JSON.parse(readFileSync('package.json', 'utf8')).contributes.configuration.properties;
  for (const key of restrictedConfigurations()) assert.equal(props[key].scope, 'machine', key);
});

/** The files of a folder, recursively, relative to it. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

test("docs/architecture.md's how-to, done on a scratch copy, adds a VS Code setting that reaches the backend in 2 hand-edited files", async () => {
  const doc = readFileSync('docs/architecture.md', 'utf8');
  const howTo = /\*\*A VS Code setting that reaches the backend\.\*\*([\s\S]*?)\n\n/.exec(doc)?.[1] ?? '';
  assert.match(howTo, /Two files by hand/, 'the how-to names its file count');
  assert.match(howTo, /`backend\/protocol\/settingsTable\.ts`/);
  assert.match(howTo, /`backend\/settings\/settings\.ts`/);
  assert.match(howTo, /`npm run gen:settings`/);

  // spelled in parts: it exists only in the scratch copy, and test/settings/settings.test.ts fails on any variable
  // named in the repository that the backend does not declare
  const variable = ['KIMINA', 'PROOF', 'STYLE'].join('_');
  const scratch = mkdtempSync(join(tmpdir(), 'kimina-add-setting-'));
  try {
    const copied = ['backend/protocol', 'backend/settings', 'scripts', 'docs', 'package.json'];
    for (const p of copied) cpSync(p, join(scratch, p), { recursive: true });
    const before = new Map(files(scratch).map((f) => [f, readFileSync(join(scratch, f), 'utf8')]));

    // step 1: the row in the table
    const tablePath = join(scratch, 'backend/protocol/settingsTable.ts');
    const table = readFileSync(tablePath, 'utf8');
    const row = `  proofStyle: {
    type: 'string',
    enum: ['terse', 'verbose'],
    default: 'terse',
    description: 'How the model writes its proofs.',
    restricted: false,
    restart: true,
    env: '${variable}',
  },
} as const satisfies Record<string, Row>;`;
    writeFileSync(tablePath, table.replace('} as const satisfies Record<string, Row>;', row));
    // step 2: the backend's declaration of the variable
    const settingsPath = join(scratch, 'backend/settings/settings.ts');
    const settings = readFileSync(settingsPath, 'utf8');
    const declaration = `  proofStyle: {
    name: '${variable}',
    type: '\`terse\` or \`verbose\`',
    default: '\`terse\`',
    doc: 'how the model writes its proofs',
    read: (raw: string | undefined) => oneOf('${variable}', raw, ['terse', 'verbose'] as const, 'terse'),
  },
} satisfies Record<string, Declaration<unknown>>;`;
    writeFileSync(settingsPath, settings.replace('} satisfies Record<string, Declaration<unknown>>;', declaration));
    // step 3: the generator (not a hand edit)
    execFileSync(process.execPath, ['--import', 'tsx', join(scratch, 'scripts/gen-settings.ts')], { stdio: 'pipe' });

    const changed = files(scratch).filter((f) => before.get(f) !== readFileSync(join(scratch, f), 'utf8'));
    const generated = ['docs/settings.md', 'package.json'];
    assert.deepEqual(changed.filter((f) => !generated.includes(f)).sort(), [
      'backend/protocol/settingsTable.ts',
      'backend/settings/settings.ts',
    ]);
    assert.deepEqual(changed.filter((f) => generated.includes(f)).sort(), generated);

    // both halves see it: the manifest, the editor's environment and words, the backend's typed settings
    const pkg = JSON.parse(readFileSync(join(scratch, 'package.json'), 'utf8'));
    assert.deepEqual(pkg.contributes.configuration.properties['kimina.proofStyle'].enum, ['terse', 'verbose']);
    const t = await import(tablePath);
    assert.equal(t.settingsEnv({ ...t.settingDefaults(), proofStyle: 'verbose' })[variable], 'verbose');
    assert.equal(t.settingOfVariable[variable], 'kimina.proofStyle');
    assert.ok(t.restartingSettings.includes('kimina.proofStyle'));
    const s = await import(settingsPath);
    assert.equal(s.readSettings({ [variable]: 'verbose' }).proofStyle, 'verbose');
    assert.match(readFileSync(join(scratch, 'docs/settings.md'), 'utf8'), new RegExp(`\`${variable}\``));
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
