// kimina-ast-server's AST routes, as kimina-ast-client 0.2.2 posts them (KiminaClient.ast / ast_code): this
// server does not run the ast_export tool they need, so each answers 501 with a JSON body that names what is
// not supported, since when, and what to use instead; a malformed body is refused first (422), and the token
// guards them like every other route.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, postJson, type TestServer } from './apiServer';
import { AST_NOT_SUPPORTED_SINCE } from '../../backend/api/astRoutes';

let srv: TestServer;
before(async () => {
  srv = await startTestServer({ maxRepls: 1, token: 'tok' });
});
after(async () => {
  await srv.stop();
});
const auth = { Authorization: 'Bearer tok' };

test('POST /api/ast (KiminaClient.ast body) answers 501 with a JSON body saying what is not supported and since when', async () => {
  const r = await postJson(
    `${srv.url}/api/ast`,
    { modules: ['Mathlib', 'Lean.Elab.Frontend'], one: true, timeout: 60 },
    auth,
  );
  assert.equal(r.status, 501);
  assert.match(r.headers.get('content-type') ?? '', /application\/json/);
  assert.equal(r.json.error, 'not_supported');
  assert.equal(r.json.route, '/api/ast');
  assert.equal(r.json.notSupportedSince, AST_NOT_SUPPORTED_SINCE);
  assert.match(
    r.json.detail,
    /^Not supported: \/api\/ast — the ASTs of existing modules .* not supported since 0\.1\.0$/,
  );
  assert.match(r.json.instead, /POST \/api\/check .*"infotree"/);
});

test('POST /api/ast_code (KiminaClient.ast_code body) answers 501 the same way', async () => {
  const r = await postJson(
    `${srv.url}/api/ast_code`,
    { code: 'import Mathlib\n#check Nat', module: 'User.Code', timeout: 60 },
    auth,
  );
  assert.equal(r.status, 501);
  assert.equal(r.json.route, '/api/ast_code');
  assert.match(r.json.feature, /the AST of a code snippet/);
  assert.match(r.json.detail, /ast_export Lean tool and a Mathlib checkout/);
});

test('the AST routes check their body first (422, FastAPI style) and need the token', async () => {
  const bad = await postJson(`${srv.url}/api/ast`, { modules: [] }, auth);
  assert.equal(bad.status, 422);
  assert.ok(Array.isArray(bad.json.detail));
  const noCode = await postJson(`${srv.url}/api/ast_code`, { module: 'User.Code' }, auth);
  assert.equal(noCode.status, 422);
  const noToken = await postJson(`${srv.url}/api/ast_code`, { code: '#check Nat' });
  assert.equal(noToken.status, 401);
});
