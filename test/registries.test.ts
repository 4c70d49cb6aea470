// The variant registries against every list kept elsewhere: the verdict modes (lean/verdictModes.ts
// verdictModeRules, keyed by the protocol's enum) and the engine kinds (settings.ts engineKinds, model/index.ts
// engineFactories). A new mode or engine that is missing from one of these lists fails here, and so does a verdict
// mode named by hand (compared, listed, or spelled in a help text) anywhere in backend/, extension/ or media/
// outside the registry and the protocol enum.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { verdictModes, type Verdict } from '../backend/protocol';
import {
  DEFAULT_VERDICT_MODE,
  parseVerdictMode,
  verdictModeHelp,
  verdictModeRules,
  VERDICT_MODES,
} from '../backend/lean/verdictModes';
import { engineFactories } from '../backend/model/index';
import { engineKinds, readSettings } from '../backend/settings/settings';
import { settingsTable } from '../backend/protocol/settingsTable';

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
  for (const mode of verdictModes) {
    const rule = verdictModeRules[mode];
    assert.equal(rule.accepts(null), false);
    assert.deepEqual(rule.judge(audited).valid === true, rule.accepts(audited), `${mode}: judge agrees with accepts`);
    for (const text of [rule.name, rule.by, rule.criteria, rule.help]) assert.ok(text.trim(), `${mode}: its texts`);
    assert.match(verdictModeHelp(), new RegExp(`^--verdict ${mode}\\b`, 'm'), `${mode}: in the help texts`);
  }
  // the default mode is the verifier's own verdict: an evaluation record's `valid` flag is its judgement
  assert.equal(parseVerdictMode(undefined), DEFAULT_VERDICT_MODE);
  for (const status of ['valid', 'sorry', 'rejected'] as const)
    assert.equal(
      verdictModeRules[DEFAULT_VERDICT_MODE].judge({ ...audited, status }).valid,
      status === 'valid',
      `default mode on ${status}`,
    );
  assert.deepEqual(
    verdictModes.filter((m) => verdictModeRules[m].publishedRule),
    ['recipe'],
  );
});

/** Files under `dir` (relative to the root) ending in one of `exts`; dependencies, builds and hidden folders left out. */
function filesUnder(dir: string, exts: string[]): string[] {
  const out: string[] = [];
  const walk = (abs: string) => {
    for (const e of readdirSync(abs, { withFileTypes: true })) {
      if (e.name.startsWith('.') || ['node_modules', 'dist', 'out', '__pycache__'].includes(e.name)) continue;
      const p = join(abs, e.name);
      if (e.isDirectory()) walk(p);
      else if (exts.some((x) => e.name.endsWith(x))) out.push(relative(root, p));
    }
  };
  walk(join(root, dir));
  return out.sort();
}

const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * Places where TypeScript hard-wires a verdict mode instead of asking the registry: a mode name compared with
 * `===`/`!==`, a `case`, a union type of mode names, an array of them, a hand-written `a|b` choice (help texts),
 * or a property named after a mode (`metrics.recipe`, `rules.strict`). Returns `line: text` per hit.
 */
function hardWiredModes(text: string, modes: readonly string[] = verdictModes): string[] {
  const m = `(?:${modes.map(esc).join('|')})`;
  const q = `(['"\`])${m}\\1`;
  const patterns = [
    new RegExp(`[!=]==?\\s*${q}`),
    new RegExp(`(['"\`])${m}\\1\\s*[!=]==?`),
    new RegExp(`\\bcase\\s+${q}\\s*:`),
    new RegExp(`(?<![|])\\|\\s*${q}|(['"])${m}\\2\\s*\\|(?![|])`),
    new RegExp(`\\[\\s*${q}\\s*,`),
    new RegExp(`\\b${m}\\|${m}\\b`),
    new RegExp(`\\??\\.${m}\\b(?!\\s*\\()`),
  ];
  return text
    .split('\n')
    .flatMap((line, i) => (patterns.some((p) => p.test(line)) ? [`${i + 1}: ${line.trim()}`] : []));
}

/** Python: a mode name compared with ==/!=, and every tuple/list/set holding a mode name (its string items). */
function pythonModeUses(text: string, modes: readonly string[] = verdictModes) {
  const m = `(?:${modes.map(esc).join('|')})`;
  const compared = text
    .split('\n')
    .flatMap((line, i) =>
      new RegExp(`[!=]=\\s*(['"])${m}\\1|(['"])${m}\\2\\s*[!=]=`).test(line) ? [`${i + 1}: ${line.trim()}`] : [],
    );
  const lists = [
    ...text.matchAll(/[([{]\s*((?:(?:None|"[^"\n]*"|'[^'\n]*')\s*,\s*)+(?:None|"[^"\n]*"|'[^'\n]*')?)\s*,?\s*[)\]}]/g),
  ]
    .map((g) => [...g[1].matchAll(/["']([^"'\n]*)["']/g)].map((x) => x[1]))
    .filter((items) => items.some((x) => modes.includes(x)));
  return { compared, lists };
}

test('no file outside the registry hard-wires a verdict mode; the Python trainer lists exactly the registry keys', () => {
  // the guard guards: each shape it refuses, planted
  for (const planted of [
    "if (mode === 'recipe') x();",
    "if ('strict' !== mode) x();",
    "case 'recipe':",
    "type M = 'strict' | 'recipe';",
    "let m: 'recipe' | null;",
    "for (const k of ['strict', 'recipe']) {}",
    '  --verdict strict|recipe  which verdict',
    'const r = metrics.recipe?.passAtK;',
    'rules.strict.accepts(v)',
  ])
    assert.equal(hardWiredModes(planted).length, 1, planted);
  for (const fine of [
    "const mode = body.mode ?? 'strict';",
    "mode: VerdictMode = 'strict',",
    "x || 'recipe'",
    "'use strict';",
    'the recipe rule',
  ])
    assert.deepEqual(hardWiredModes(fine), [], fine);

  // the registry and the protocol's enum are the two places that name the modes
  const owners = new Set(['backend/lean/verdictModes.ts', 'backend/protocol/verify.ts']);
  const found = [
    ...filesUnder('backend', ['.ts']),
    ...filesUnder('extension', ['.ts', '.tsx']),
    ...filesUnder('media', ['.ts', '.tsx']),
  ]
    .filter((f) => !owners.has(f))
    .flatMap((f) => hardWiredModes(read(f)).map((hit) => `${f}:${hit}`));
  assert.deepEqual(found, [], 'ask verdictModeRules (backend/lean/verdictModes.ts) instead of naming a mode');

  const py = filesUnder('backend/trainer', ['.py']);
  assert.ok(py.includes('backend/trainer/verl/kimina_reward.py'), 'the Python trainer was scanned');
  const lists: string[][] = [];
  for (const f of py) {
    const uses = pythonModeUses(read(f));
    assert.deepEqual(uses.compared, [], `${f}: a mode name compared by hand`);
    lists.push(...uses.lists);
  }
  assert.ok(lists.length > 0, "kimina_reward.py's check of KIMINA_VERDICT_MODE was found");
  for (const items of lists) assert.deepEqual([...items].sort(), [...verdictModes].sort(), 'a Python list of modes');
  assert.deepEqual(pythonModeUses('if mode not in (None, "strict"):').lists, [['strict']]);
  assert.equal(pythonModeUses('if mode == "recipe":').compared.length, 1);
});

test('the engine kinds: one factory each, and the same list in package.json and the settings table', () => {
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
  assert.deepEqual(Object.keys(settingsTable.engine.enum).sort(), [...engineKinds].sort());
  for (const kind of engineKinds) assert.equal(readSettings({ KIMINA_ENGINE: kind }).engine, kind);
  assert.throws(
    () => readSettings({ KIMINA_ENGINE: 'tensorrt' }),
    /KIMINA_ENGINE must be one of auto, onnx, openai, llama/,
  );
});
