// docs/versions.md's tested-versions table is what scripts/versions-doc.ts reads from the files the tests pin;
// this fails while the two differ (rewrite it with `node --import tsx scripts/versions-doc.ts`). The table
// follows the files: a moved pin, a new dependency, a missing source each show in it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { DOC, readRepo, versionRows, versionsTable, withCurrentTable, type Reader } from '../scripts/versions-doc';

test('docs/versions.md holds the table generated from what the tests pin', () => {
  const doc = readFileSync(DOC, 'utf8');
  assert.equal(doc, withCurrentTable(doc), 'run: node --import tsx scripts/versions-doc.ts');
});

test('every component the tests run against has a version read from a file', () => {
  const rows = versionRows();
  const names = rows.map((r) => r.component);
  for (const c of [
    'verl',
    'TRL',
    'transformers',
    'vLLM',
    'SGLang',
    'llama.cpp (llama-server)',
    'Ollama',
    'huggingface_hub',
    'kimina-client',
    'repl',
    'Lean',
    'code-server',
  ])
    assert.ok(names.includes(c), c);
  for (const r of rows) assert.doesNotMatch(r.versions, /not found/, `${r.component}: ${r.versions}`);
  const verl = rows.find((r) => r.component === 'verl')!;
  assert.match(verl.versions, /0\.5\.0 .*0\.9\.1/);
});

test('the table follows the files: a moved pin, a new dependency and a missing source show in it', () => {
  const edits: Record<string, (text: string) => string | undefined> = {
    'scripts/e2e-setup.sh': (t) => t.replace(/^CS_VERSION=\S+/m, 'CS_VERSION=4.139.2'),
    'backend/trainer/requirements-verl-0.9.txt': (t) => t.replace('verl==0.9.1', 'verl==0.9.2'),
    'package.json': (t) => {
      const pkg = JSON.parse(t);
      pkg.dependencies['node-llama-cpp'] = '3.19.0';
      return JSON.stringify(pkg);
    },
    'test/lean/data/repl-refs.txt': () => undefined,
  };
  const read: Reader = (path) => {
    const text = readRepo(path);
    return edits[path] && text !== undefined ? edits[path](text) : text;
  };
  const table = versionsTable(read);
  assert.match(table, /\| code-server \| 4\.139\.2 \|/);
  assert.match(table, /0\.9\.2 \(verl-load test, 0\.9\)/);
  assert.match(table, /\| node-llama-cpp \| 3\.19\.0 \|/);
  assert.match(table, /\| repl \| — \(repl listing not found\) \|/);
  assert.notEqual(table, versionsTable());
});
