// The extension's manifest and settings plumbing: the brief's commands in category "Kimina", keys that stay
// clear of the Lean extension's, every setting read through the one table and the environment the backend gets
// from them (the table's own checks: test/protocol/settingsTable.test.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { type KiminaSettings, settingDefaults, settingsEnv, settingsTable } from '../../backend/protocol/settingsTable';

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
  main: string;
  activationEvents: string[];
  contributes: {
    commands: { command: string; title: string; category: string }[];
    keybindings: { command: string; key: string; mac?: string; when?: string }[];
    configuration: { properties: Record<string, { default: unknown }> };
    views: Record<string, { id: string; type?: string }[]>;
    viewsContainers: { activitybar: { id: string }[] };
    languages: { id: string; extensions: string[] }[];
  };
};
const c = manifest.contributes;

test('every command the brief names is in the palette under "Kimina"', () => {
  const titles = c.commands.map((x) => `${x.category}: ${x.title}`);
  for (const t of [
    'Prove This Theorem',
    'Prove Goal at Cursor',
    'Prove All Sorries in File',
    'Cancel',
    'Accept Proof',
    'Reject Proof',
    'Retry',
    'Show Attempts',
    'Open Training Monitor',
    'Set Up Lean Verifier',
    'Pull Model',
  ]) {
    assert.ok(titles.includes(`Kimina: ${t}`), t);
  }
  assert.ok(c.commands.every((x) => x.category === 'Kimina' && x.command.startsWith('kimina.')));
});

test("keybindings avoid the Lean extension's keys", () => {
  const lean = new Set([
    'ctrl+shift+enter',
    'ctrl+shift+alt+enter',
    'ctrl+shift+x',
    'ctrl+alt+\\',
    'shift+alt+m',
    'shift+alt+n',
    'tab',
  ]);
  const norm = (k: string) => k.toLowerCase().split('+').sort().join('+');
  const taken = new Set([...lean].map(norm));
  for (const k of c.keybindings) {
    assert.ok(!taken.has(norm(k.key)), `${k.command} uses ${k.key}`);
    assert.ok(!taken.has(norm((k.mac ?? '').replace(/cmd/g, 'ctrl'))), `${k.command} uses ${k.mac}`);
  }
  for (const cmd of [
    'kimina.proveTheorem',
    'kimina.proveGoal',
    'kimina.cancel',
    'kimina.acceptProof',
    'kimina.rejectProof',
  ]) {
    assert.ok(
      c.keybindings.some((k) => k.command === cmd),
      `${cmd} has a key`,
    );
  }
});

test('the Training Monitor container, the Lean language and activation are declared', () => {
  assert.ok(c.viewsContainers.activitybar.some((v) => v.id === 'kimina'));
  assert.deepEqual(c.views.kimina, [{ type: 'webview', id: 'kimina.trainingMonitor', name: 'Training Monitor' }]);
  assert.ok(c.languages.some((l) => l.id === 'lean4' && l.extensions.includes('.lean')));
  assert.ok(manifest.activationEvents.includes('onLanguage:lean4'));
  assert.equal(manifest.main, './dist/extension.js');
});

const defaults: KiminaSettings = settingDefaults();

test('every setting in the manifest has the default of the table the extension reads through', () => {
  const keys = Object.keys(c.configuration.properties).map((k) => k.replace(/^kimina\./, ''));
  assert.deepEqual(keys.sort(), Object.keys(settingsTable).sort());
  for (const k of keys)
    assert.deepEqual(c.configuration.properties[`kimina.${k}`].default, defaults[k as keyof KiminaSettings], k);
});

test('the extension reads every kimina.* setting through the table, and updates only declared ones', () => {
  const config = readFileSync('extension/config.ts', 'utf8');
  assert.match(config, /settingKeys\.map\(\(k\) => \[k, c\.get\(k, defaults\[k\]\)\]\)/);
  const updated = [...config.matchAll(/\.update\('([\w.]+)'/g)].map((m) => m[1]);
  assert.ok(updated.length >= 3, `updates found: ${updated.length}`);
  for (const key of updated) assert.ok(key in settingsTable, `kimina.${key} is not declared`);
});

test('set values travel as KIMINA_* variables; empty ones stay unset so the backend default applies', () => {
  assert.deepEqual(settingsEnv(defaults), {
    KIMINA_ENGINE: 'auto',
    KIMINA_TIMEOUT: '60',
    KIMINA_PROVE_TIMEOUT: '900',
    KIMINA_DEVICE: 'auto',
    KIMINA_KV_CACHE: 'auto',
    KIMINA_LLAMA_GPU: 'auto',
    KIMINA_LLAMA_WEIGHTS: 'q8_0',
    KIMINA_ROWS_AT_ONCE: '0',
    KIMINA_SPECULATION: '0',
    KIMINA_VLLM_IDLE_MINUTES: '10',
    KIMINA_VLLM_GPU_MEMORY_UTILIZATION: '0.85',
  });
  const env = settingsEnv({
    ...defaults,
    engine: 'openai',
    model: 'AI-MO/Kimina-Prover-RL-1.7B',
    openaiBaseUrl: 'http://127.0.0.1:8000/v1',
    serverUrl: 'http://127.0.0.1:9000',
    serverToken: 'tok',
    replCommand: 'lake env repl',
    leanProject: '/proj',
    device: 'cuda',
    kvCache: 'fp16',
    speculation: true,
    nodePath: '/usr/bin/node',
    trainingModel: 'x',
    vllmIdleMinutes: 2.5,
  });
  assert.deepEqual(env, {
    KIMINA_ENGINE: 'openai',
    KIMINA_TIMEOUT: '60',
    KIMINA_PROVE_TIMEOUT: '900',
    KIMINA_MODEL: 'AI-MO/Kimina-Prover-RL-1.7B',
    KIMINA_OPENAI_BASE_URL: 'http://127.0.0.1:8000/v1',
    KIMINA_SERVER_URL: 'http://127.0.0.1:9000',
    KIMINA_API_TOKEN: 'tok',
    KIMINA_REPL_COMMAND: 'lake env repl',
    KIMINA_LEAN_PROJECT: '/proj',
    KIMINA_DEVICE: 'cuda',
    KIMINA_KV_CACHE: 'fp16',
    KIMINA_LLAMA_GPU: 'auto',
    KIMINA_LLAMA_WEIGHTS: 'q8_0',
    KIMINA_ROWS_AT_ONCE: '0',
    KIMINA_SPECULATION: '1',
    KIMINA_VLLM_IDLE_MINUTES: '2.5',
    KIMINA_VLLM_GPU_MEMORY_UTILIZATION: '0.85',
  });
});

test('Workspace Trust: no setting that starts a program, names a server, holds a token or points outside can be set by a workspace', () => {
  const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
  const props: Record<string, { scope?: string }> = pkg.contributes.configuration.properties;
  const dangerous = [
    'kimina.engine',
    'kimina.nodePath',
    'kimina.replCommand',
    'kimina.serverUrl',
    'kimina.serverToken',
    'kimina.openaiBaseUrl',
    'kimina.leanProject',
    'kimina.model',
    'kimina.trainingModel',
  ];
  for (const key of dangerous) {
    assert.ok(props[key], `${key} is declared`);
    assert.ok(['machine', 'application'].includes(props[key].scope ?? ''), `${key} has scope ${props[key].scope}`);
  }
  const trust = pkg.capabilities?.untrustedWorkspaces;
  assert.equal(trust?.supported, 'limited');
  for (const key of dangerous) assert.ok(trust.restrictedConfigurations.includes(key), `${key} is restricted`);
  assert.ok(trust.description.length > 0);
  // a workspace may override only harmless settings: none of these is machine-overridable or unscoped
  const overridable = Object.entries(props)
    .filter(([, v]) => v.scope === 'machine-overridable')
    .map(([k]) => k);
  assert.deepEqual(
    overridable.filter((k) => dangerous.includes(k)),
    [],
  );
});
