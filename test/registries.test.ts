// The variant registries against every list kept elsewhere: the verdict modes (lean/verdictModes.ts
// verdictModeRules, keyed by the protocol's enum) and the engine kinds (settings.ts engineKinds, model/index.ts
// engineFactories). A new mode or engine that is missing from one of these lists fails here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { verdictModes, type Verdict } from '../backend/protocol';
import { parseVerdictMode, verdictModeRules, VERDICT_MODES } from '../backend/lean/verdictModes';
import { engineFactories } from '../backend/model/index';
import { engineKinds, readSettings } from '../backend/settings/settings';

const root = join(__dirname, '..');
const read = (path: string) => readFileSync(join(root, path), 'utf8');

test('the verdict-mode rules cover exactly the protocol enum, and the Python trainer accepts the same modes', () => {
  assert.deepEqual(Object.keys(verdictModeRules).sort(), [...verdictModes].sort());
  assert.deepEqual([...VERDICT_MODES], [...verdictModes]);
  for (const mode of verdictModes) assert.equal(parseVerdictMode(mode), mode);
  assert.throws(() => parseVerdictMode('lenient'), /verdict mode must be strict or recipe, got 'lenient'/);
  // verl's reward module (backend/trainer/verl/kimina_reward.py) checks KIMINA_VERDICT_MODE against its own tuple
  const python = /mode not in \(None, ([^)]*)\)/.exec(read('backend/trainer/verl/kimina_reward.py'));
  assert.ok(python, "kimina_reward.py's check of KIMINA_VERDICT_MODE was found");
  assert.deepEqual(
    python[1]
      .split(',')
      .map((s) => s.trim().replace(/^"|"$/g, ''))
      .sort(),
    [...verdictModes].sort(),
  );
});

test('each rule judges the same Lean answer its own way', () => {
  // Lean answered without an error or a listed sorry, but the strict audit refused an axiom
  const audited: Verdict = {
    status: 'rejected',
    reason: 'depends on axioms outside the allow-list: myAxiom',
    messages: [],
    sorries: [],
    axioms: ['myAxiom'],
  } as unknown as Verdict;
  assert.equal(verdictModeRules.strict.accepts(audited), false);
  assert.equal(verdictModeRules.recipe.accepts(audited), true);
  assert.equal(verdictModeRules.recipe.inMode(audited).status, 'valid');
  assert.equal(verdictModeRules.strict.inMode(audited).status, 'rejected');
  for (const mode of verdictModes) assert.equal(verdictModeRules[mode].accepts(null), false);
  assert.deepEqual(
    verdictModes.filter((m) => verdictModeRules[m].publishedRule),
    ['recipe'],
  );
});

test('the engine kinds: one factory each, and the same list in package.json and the extension', () => {
  assert.deepEqual(Object.keys(engineFactories).sort(), [...engineKinds].sort());
  const pkg = JSON.parse(read('package.json')) as {
    contributes: {
      configuration:
        { properties: Record<string, { enum?: string[] }> }[] | { properties: Record<string, { enum?: string[] }> };
    };
  };
  const sections = Array.isArray(pkg.contributes.configuration)
    ? pkg.contributes.configuration
    : [pkg.contributes.configuration];
  const engine = sections.map((s) => s.properties['kimina.engine']).find(Boolean);
  assert.deepEqual([...(engine?.enum ?? [])].sort(), [...engineKinds].sort());
  const union = /engine: ([^;]+);/.exec(read('extension/settingsEnv.ts'));
  assert.ok(union, "the extension's engine setting type was found");
  assert.deepEqual(
    union[1]
      .split('|')
      .map((s) => s.trim().replace(/^'|'$/g, ''))
      .sort(),
    [...engineKinds].sort(),
  );
  for (const kind of engineKinds) assert.equal(readSettings({ KIMINA_ENGINE: kind }).engine, kind);
  assert.throws(() => readSettings({ KIMINA_ENGINE: 'llama' }), /KIMINA_ENGINE must be one of onnx, openai/);
});
