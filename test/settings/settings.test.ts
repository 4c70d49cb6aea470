// The one settings module (backend/settings/settings.ts): parsing with defaults and clear errors, docs/settings.md
// generated from it, and no KIMINA_* name anywhere in the repository that it does not declare.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { allVariables, readSettings, setting } from '../../backend/settings/settings';
import { DOC, withCurrentTable } from '../../scripts/settings-doc';

const root = join(__dirname, '..', '..');

test('defaults: paths under KIMINA_HOME, the database beside them, server and verifier numbers', () => {
  const s = readSettings({});
  assert.equal(s.home, join(homedir(), '.kimina'));
  assert.equal(s.db, join(homedir(), '.kimina', 'kimina.db'));
  assert.equal(s.port, 8000);
  assert.equal(s.host, '127.0.0.1');
  assert.equal(s.engine, 'auto');
  assert.equal(s.apiToken, undefined);
  assert.equal(s.sandbox, 'auto');
  assert.equal(s.allowedAxioms, undefined);
  assert.equal(s.leanProject, process.cwd());
  const home = readSettings({ KIMINA_HOME: '/tmp/kh' });
  assert.deepEqual(
    [home.db, home.trainingDir, home.trainerVenv],
    ['/tmp/kh/kimina.db', '/tmp/kh/training', '/tmp/kh/trainer-venv'],
  );
});

test('KIMINA_DB: one rule for every command: `:memory:` stays, a relative path is made absolute, empty means unset', () => {
  assert.equal(setting('db', { KIMINA_DB: ':memory:' }), ':memory:');
  assert.equal(setting('db', { KIMINA_DB: 'rel/k.db' }), resolve('rel/k.db'));
  assert.equal(setting('db', { KIMINA_DB: '', KIMINA_HOME: '/tmp/kh' }), '/tmp/kh/kimina.db');
});

test('values are parsed and checked; the first of two names that is set wins; flags override', () => {
  const s = readSettings({
    KIMINA_PORT: '9001',
    KIMINA_THREADS: '3',
    KIMINA_DEVICE: 'auto',
    KIMINA_INIT_REPLS: '{"import Mathlib": 2}',
    KIMINA_ALLOWED_AXIOMS: 'propext, Quot.sound',
    KIMINA_ALLOW_NATIVE_DECIDE: 'yes',
    LEAN_SERVER_API_KEY: 'kls',
    KIMINA_SERVER_URL: 'http://h:1//',
  });
  assert.equal(s.port, 9001);
  assert.equal(s.threads, 3);
  assert.equal(s.device, 'cpu');
  assert.deepEqual(s.initRepls, { 'import Mathlib': 2 });
  assert.deepEqual(s.allowedAxioms, ['propext', 'Quot.sound']);
  assert.equal(s.allowNativeDecide, true);
  assert.equal(s.apiToken, 'kls');
  assert.equal(s.serverUrl, 'http://h:1');
  assert.equal(readSettings({ KIMINA_API_TOKEN: 'ours', LEAN_SERVER_API_KEY: 'kls' }).apiToken, 'ours');
  assert.equal(readSettings({ KIMINA_PORT: '9001' }, { port: 0 }).port, 0);
  assert.throws(() => readSettings({ KIMINA_PORT: 'eighty' }), /KIMINA_PORT must be a number, got "eighty"/);
  assert.throws(
    () => readSettings({ KIMINA_ENGINE: 'tensorrt' }),
    /KIMINA_ENGINE must be one of auto, onnx, openai, llama, vllm, got 'tensorrt'/,
  );
  assert.throws(
    () => readSettings({ KIMINA_SANDBOX: 'docker' }),
    /KIMINA_SANDBOX must be auto, bwrap, unshare or none/,
  );
  assert.throws(() => readSettings({ KIMINA_INIT_REPLS: '{' }), /KIMINA_INIT_REPLS must be JSON/);
  assert.throws(() => readSettings({ KIMINA_THREADS: '1.5' }), /KIMINA_THREADS must be a positive whole number/);
});

test('docs/settings.md holds the table generated from the declarations', () => {
  const doc = readFileSync(DOC, 'utf8');
  assert.equal(
    doc,
    withCurrentTable(doc),
    'docs/settings.md is out of date: run `node --import tsx scripts/settings-doc.ts`',
  );
});

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    if (['node_modules', '.venv', '__pycache__', 'dist', '.git'].includes(name) || name.startsWith('.venv')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* files(path);
    else if (/\.(ts|mjs|js|py|md|json|sh)$/.test(name) || name === 'decode-setup') yield path;
  }
}

test('every KIMINA_* variable named in the code, tests, scripts and docs is declared in the settings module', () => {
  const declared = new Set(allVariables().flatMap((v) => v.names));
  const undeclared = new Map<string, string>();
  const places = ['backend', 'extension', 'media', 'bench', 'test', 'scripts', 'docs'].map((d) => join(root, d));
  const all = [...places.flatMap((p) => [...files(p)]), join(root, 'README.md'), join(root, 'package.json')];
  assert.ok(all.length > 100, `read ${all.length} files`);
  for (const file of all) {
    for (const m of readFileSync(file, 'utf8').matchAll(/KIMINA_[A-Z0-9_]+(\*)?/g)) {
      if (m[1]) continue; // `KIMINA_OPENAI_*`: a family, named one by one elsewhere
      const name = m[0].replace(/_+$/, ''); // `__KIMINA_REWARD_URL__`: a placeholder for that variable
      if (!declared.has(name) && !undeclared.has(name)) undeclared.set(name, file.slice(root.length + 1));
    }
  }
  assert.deepEqual(
    [...undeclared].map(([name, file]) => `${name} (${file})`),
    [],
  );
});
