// `POST /v1/check` with `mode` strict | recipe, and `/health`'s `bodyLimitBytes`, over a live HTTP server on the
// real verifier and pool with the stand-in REPL (a TEST DOUBLE for Lean; backend/demo/stand-in-repl).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { postJson, startTestServer, type TestServer } from './apiServer';

// Strict: `sorry` (explicit sorryAx: Lean warns, the REPL lists no sorry). kimina-client's rule: no error, no sorries → valid.
const SORRY_AX = 'import Mathlib\n\ntheorem target : (1 : ℕ) = 2 := by\n  exact sorryAx _ false';
const HONEST = 'import Mathlib\n\ntheorem honest : (1 : ℕ) = 1 := by\n  simp';
const BROKEN = 'import Mathlib\n\ntheorem broken : (1 : ℕ) = 1 := bogus_z';
const LIMIT = 256 * 1024;

let srv: TestServer;
before(async () => {
  srv = await startTestServer({ maxRepls: 2, bodyLimitBytes: LIMIT });
});
after(async () => {
  await srv.stop();
});

const snippets = [
  { id: 'ax', code: SORRY_AX },
  { id: 'ok', code: HONEST },
  { id: 'bad', code: BROKEN },
];
const byId = (json: { results: { id: string }[] }) =>
  Object.fromEntries(json.results.map((r) => [r.id, r])) as Record<string, any>;

test('/v1/check: strict by default; the answer names the mode', async () => {
  for (const body of [{ snippets }, { snippets, mode: 'strict' }, { snippets, mode: null }]) {
    const r = await postJson(`${srv.url}/v1/check`, body);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const out = byId(r.json);
    assert.deepEqual([out.ax.status, out.ok.status, out.bad.status], ['sorry', 'valid', 'lean_error']);
    for (const res of r.json.results) {
      assert.equal(res.mode, 'strict');
      assert.equal(res.strictStatus, undefined);
    }
  }
});

test("/v1/check mode recipe: kimina-client's rule accepts the sorryAx snippet, says the strict verdict; errors stay errors", async () => {
  const r = await postJson(`${srv.url}/v1/check`, { snippets, mode: 'recipe' });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  const out = byId(r.json);
  assert.deepEqual([out.ax.status, out.ok.status, out.bad.status], ['valid', 'valid', 'lean_error']);
  assert.equal(out.ax.mode, 'recipe');
  assert.equal(out.ax.strictStatus, 'sorry');
  assert.match(out.ax.reason, /kimina-client's rule.*strict verdict sorry/);
  assert.equal(out.ok.strictStatus, undefined, 'no difference, nothing to say');
  assert.ok(
    out.ax.messages.some((m: { data: string }) => /sorry/.test(m.data)),
    "Lean's messages are kept as they were",
  );
});

test('/v1/check: an unknown mode is refused as kimina-lean-server refuses bad input (422)', async () => {
  const r = await postJson(`${srv.url}/v1/check`, { snippets, mode: 'lenient' });
  assert.equal(r.status, 422);
  assert.match(JSON.stringify(r.json), /strict.*recipe/);
});

test('/health states bodyLimitBytes, and it is the limit the server enforces', async () => {
  const health = (await (await fetch(`${srv.url}/health`)).json()) as { bodyLimitBytes?: number };
  assert.equal(health.bodyLimitBytes, LIMIT);
  const padded = (bytes: number) => {
    const base = JSON.stringify({ snippets: [{ id: 'a', code: 'theorem t : True := trivial' }], pad: '' });
    return base.replace('"pad":""', `"pad":"${'x'.repeat(bytes - base.length)}"`);
  };
  assert.equal(Buffer.byteLength(padded(health.bodyLimitBytes!)), LIMIT);
  assert.equal(
    (await postJson(`${srv.url}/v1/check`, padded(health.bodyLimitBytes!))).status,
    200,
    'a body of exactly the limit is read',
  );
  assert.equal(
    (await postJson(`${srv.url}/v1/check`, padded(health.bodyLimitBytes! + 1))).status,
    413,
    'one byte more is refused',
  );
});

test('/health on a server with the default limit states the default', async () => {
  const other = await startTestServer({ maxRepls: 1 });
  try {
    const health = (await (await fetch(`${other.url}/health`)).json()) as { bodyLimitBytes?: number };
    const { defaultBodyLimitBytes } = await import('../../backend/api/body');
    assert.equal(health.bodyLimitBytes, defaultBodyLimitBytes);
  } finally {
    await other.stop();
  }
});

test('verdictInMode on the other verdict shapes: an audit refusal becomes recipe-valid, a filter refusal stays refused', async () => {
  const { verdictInMode } = await import('../../backend/lean/verdictModes');
  const audited = {
    status: 'rejected' as const,
    reason: 'The proof depends on axioms outside the allow-list: Lean.ofReduceBool.',
    axioms: ['Lean.ofReduceBool'],
    messages: [],
    sorries: [],
    time: 0.2,
  };
  const filtered = {
    status: 'rejected' as const,
    reason: 'Rejected before Lean (line 3): #eval',
    messages: [],
    sorries: [],
    time: 0,
  };
  const listedSorry = {
    status: 'sorry' as const,
    reason: 'uses sorry',
    messages: [],
    sorries: [{ goal: '⊢ False' }],
    time: 0.1,
  };
  assert.deepEqual(
    [verdictInMode(audited, 'recipe').status, verdictInMode(audited, 'recipe').strictStatus],
    ['valid', 'rejected'],
  );
  assert.deepEqual(
    [verdictInMode(audited, 'strict').status, verdictInMode(audited, 'strict').mode],
    ['rejected', 'strict'],
  );
  assert.deepEqual(
    [verdictInMode(filtered, 'recipe').status, verdictInMode(filtered, 'recipe').strictStatus],
    ['rejected', undefined],
  );
  assert.deepEqual(
    [verdictInMode(listedSorry, 'recipe').status, verdictInMode(listedSorry, 'recipe').mode],
    ['sorry', 'recipe'],
  );
});
