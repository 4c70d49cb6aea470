// The route table (backend/protocol/routes.ts) against what `kimina serve` actually registers: a route declared
// but not served, or served but not declared, fails here. Also the schema vocabulary's own rules.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkValue, routes, s, type Infer } from '../../backend/protocol';
import { CloseHooks, createApp } from '../../backend/api/server';
import { extraRouters } from '../../backend/api/mounts';
import { openApp } from '../../backend/app/app';
import { apiContextOf } from '../../backend/app/serve';
import { readSettings } from '../../backend/settings/settings';
import { standInVerifier } from '../../backend/demo/demo';

interface Layer {
  route?: { path: string | string[]; methods: Record<string, boolean> };
  handle?: { stack?: Layer[] };
}

/** Every `METHOD path` registered in an express app, nested routers included. */
function served(stack: Layer[], out = new Set<string>()): Set<string> {
  for (const layer of stack) {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const method of Object.keys(layer.route.methods))
        for (const path of paths) out.add(`${method.toUpperCase()} ${path}`);
    } else if (layer.handle?.stack) {
      served(layer.handle.stack, out);
    }
  }
  return out;
}

test('kimina serve registers exactly the declared routes', async () => {
  const home = mkdtempSync(join(tmpdir(), 'kimina-contract-'));
  const settings = readSettings({
    KIMINA_HOME: home,
    KIMINA_DB: ':memory:',
    KIMINA_LEAN_PROJECT: home,
    KIMINA_MAX_REPLS: '1',
  });
  const app = openApp({ settings, verifier: standInVerifier(), log: () => {} });
  const hooks = new CloseHooks();
  try {
    // the context startServing (backend/app/serve.ts) hands the routers
    const ctx = apiContextOf(app, { token: undefined, backendUrl: () => undefined, onClose: hooks.add });
    const express = await createApp(
      ctx,
      extraRouters.map((make) => () => make(ctx)),
    );
    const actual = served((express as unknown as { router: { stack: Layer[] } }).router.stack);
    const declared = new Set(
      Object.values(routes).flatMap((r) =>
        [r.path, ...('aliases' in r ? r.aliases : [])].map((p) => `${r.method} ${p}`),
      ),
    );
    assert.ok(actual.size > 20, `the app's routes were found (${actual.size})`);
    assert.deepEqual(
      [...actual].filter((x) => !declared.has(x)),
      [],
      'served but not declared',
    );
    assert.deepEqual(
      [...declared].filter((x) => !actual.has(x)),
      [],
      'declared but not served',
    );
  } finally {
    await hooks.run();
    await app.close();
    rmSync(home, { recursive: true, force: true });
  }
});

test('every body and list in the contract is bounded, and POST bodies are declared', () => {
  const unbounded: string[] = [];
  const walk = (node: Parameters<typeof checkValue>[0], at: string): void => {
    switch (node.kind) {
      case 'string':
        if (!(node.max > 0)) unbounded.push(at);
        break;
      case 'array':
        if (!(node.max > 0)) unbounded.push(at);
        walk(node.item, `${at}[]`);
        break;
      case 'object':
        for (const [k, f] of Object.entries(node.fields)) walk(f, `${at}.${k}`);
        break;
      case 'record':
        walk(node.value, `${at}{}`);
        break;
      case 'variant':
        for (const [k, o] of Object.entries(node.variants)) walk(o, `${at}<${k}>`);
        break;
      case 'oneOf':
        node.options.forEach((o, i) => walk(o, `${at}|${i}`));
        break;
      default:
        break;
    }
  };
  for (const [name, r] of Object.entries(routes)) {
    if ('body' in r) walk(r.body, name);
    const bodyless = ['trainingPause', 'trainingResume', 'trainingCancel'];
    if (r.method === 'POST' && !('body' in r))
      assert.ok(bodyless.includes(name), `${name}: a POST route without a body schema`);
  }
  assert.deepEqual(unbounded, []);
  const timeout = (t: number) =>
    checkValue(routes.apiCheck.body, { snippets: [{ id: 'a', code: 'x' }], timeout: t }).map((p) => p.type);
  assert.deepEqual(
    [timeout(3600), timeout(3601), timeout(1e6)],
    [[], ['less_than_equal'], ['less_than_equal']],
    'timeout is capped at an hour',
  );
});

test('the schema vocabulary: types, ranges, lengths, counts, enums, unknown keys, variants; problems name the place', () => {
  const schema = s.object(
    {
      name: s.string({ min: 1, max: 5 }),
      n: s.optional(s.integer({ min: 1, max: 3 })),
      tags: s.optional(s.array(s.enum(['a', 'b']), { max: 2, uniqueBy: 'x' })),
      ev: s.optional(s.variant('kind', { one: s.object({ kind: s.enum(['one']), x: s.number() }) })),
    },
    { extra: 'forbid' },
  );
  const ok: Infer<typeof schema> = { name: 'abc', n: 2, tags: ['a'], ev: { kind: 'one', x: 1 } };
  assert.deepEqual(checkValue(schema, ok), []);
  const types = (v: unknown) => checkValue(schema, v).map((p) => `${p.loc.join('.')}:${p.type}`);
  assert.deepEqual(types({ name: '' }), ['name:string_too_short']);
  assert.deepEqual(types({ name: 'abcdef' }), ['name:string_too_long']);
  assert.deepEqual(types({ name: 'a', n: 1.5 }), ['n:int_type']);
  assert.deepEqual(types({ name: 'a', n: 4 }), ['n:less_than_equal']);
  assert.deepEqual(types({ name: 'a', tags: ['a', 'b', 'a'] }), ['tags:too_long']);
  assert.deepEqual(types({ name: 'a', tags: ['c'] }), ['tags.0:enum']);
  assert.deepEqual(types({ name: 'a', ev: { kind: 'two' } }), ['ev.kind:union_tag_invalid']);
  assert.deepEqual(types({ name: 'a', ev: { kind: 'one', x: 'y' } }), ['ev.x:float_type']);
  assert.deepEqual(types({ name: 'a', extra: 1 }), ['extra:extra_forbidden']);
  assert.deepEqual(types({}), ['name:missing']);
  assert.deepEqual(types([[[[]]]]), [':model_attributes_type']);
  assert.equal(checkValue(schema, { name: 5 })[0].text, "'name' must be a string");
});
