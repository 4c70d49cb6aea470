// The custom LSP tables (backend/protocol/lsp.ts) against what the language-server face registers: a request
// declared but not served, or served but not declared, fails here; so does a notification the extension does not
// listen to, a method name spelled twice in the protocol, a relay whose route takes what its request lacks, and
// a handler reached by parameters that do not match the schema.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ErrorCodes, ResponseError } from 'vscode-jsonrpc/node';
import {
  createConnection,
  ProposedFeatures,
  StreamMessageReader,
  StreamMessageWriter,
} from 'vscode-languageserver/node';
import {
  lspMethods,
  lspNotifications,
  lspRequests,
  routes,
  type LspRequestSpec,
  type SchemaNode,
} from '../../backend/protocol';
import { startLspFace } from '../../backend/api/lsp';
import { RunningProofs } from '../../backend/prover/running';
import { relayCall } from '../../backend/api/lspTraining';
import type { ProveService } from '../../backend/editor/service';
import { readSettings } from '../../backend/settings/settings';
import { connectFace, type FaceClient } from './faceClient';

const root = join(__dirname, '..', '..');

test('the face serves exactly the declared requests', async () => {
  const connection = createConnection(
    ProposedFeatures.all,
    new StreamMessageReader(new PassThrough()),
    new StreamMessageWriter(new PassThrough()),
  );
  const served: string[] = [];
  const onRequest = connection.onRequest.bind(connection) as (...args: unknown[]) => unknown;
  (connection as unknown as { onRequest: (...args: unknown[]) => unknown }).onRequest = (...args: unknown[]) => {
    if (typeof args[0] === 'string') served.push(args[0]);
    return onRequest(...args);
  };
  const face = startLspFace({
    connection,
    settings: readSettings(),
    createService: () => new Promise<ProveService>(() => {}),
    proofs: new RunningProofs(),
    refreshMs: 0,
  });
  try {
    const declared = Object.values(lspRequests).map((r) => r.method);
    assert.ok(declared.length >= 18, `requests declared: ${declared.length}`);
    assert.deepEqual([...served].sort(), [...declared].sort());
  } finally {
    await face.close();
  }
});

test('each method name is spelled once in the protocol, and lspMethods is taken from the tables', () => {
  const dir = join(root, 'backend', 'protocol');
  const text = readdirSync(dir)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => readFileSync(join(dir, f), 'utf8'))
    .join('\n');
  const specs = [...Object.values(lspRequests), ...Object.values(lspNotifications)];
  for (const { method } of specs) assert.equal(text.split(`'${method}'`).length - 1, 1, method);
  assert.equal(new Set(specs.map((m) => m.method)).size, specs.length);
  for (const [name, spec] of [...Object.entries(lspRequests), ...Object.entries(lspNotifications)])
    assert.equal((lspMethods as Record<string, string>)[name], spec.method);
});

test('the extension listens to every declared notification', () => {
  const ctx = readFileSync(join(root, 'extension', 'ctx.ts'), 'utf8');
  for (const name of Object.keys(lspNotifications))
    assert.match(ctx, new RegExp(`onNotification\\(lspMethods\\.${name}\\b`), name);
});

test("each training relay's route takes nothing its request does not declare", () => {
  const fieldsOf = (node: SchemaNode | undefined): string[] =>
    node?.kind === 'object' ? Object.keys(node.fields) : [];
  const relays = Object.values(lspRequests as Record<string, LspRequestSpec>).filter((r) => r.relay);
  assert.ok(relays.length >= 12, `relays: ${relays.length}`);
  for (const spec of relays) {
    const route = routes[spec.relay!];
    const declared = new Set(fieldsOf(spec.params));
    const pathParams = [...route.path.matchAll(/:([A-Za-z]+)/g)].map((m) => m[1]);
    const body = 'body' in route ? fieldsOf(route.body as SchemaNode) : [];
    const query = 'query' in route ? fieldsOf(route.query as SchemaNode) : [];
    for (const key of [...pathParams, ...body, ...query]) assert.ok(declared.has(key), `${spec.method} lacks ${key}`);
  }
  assert.deepEqual(relayCall('trainingMetrics', { id: 'r/1', kind: 'eval', extra: 1 }), {
    params: { id: 'r/1' },
    query: { kind: 'eval' },
    body: undefined,
  });
  assert.deepEqual(relayCall('trainingExport', { id: 'r', quantize: 'q4' }), {
    params: { id: 'r' },
    query: undefined,
    body: { quantize: 'q4' },
  });
});

let conn: FaceClient;
let proves = 0;
before(async () => {
  const service: ProveService = {
    kind: 'in-process',
    describe: async () => ({}),
    prove: async () => {
      proves++;
      throw new Error('not reached in these tests');
    },
    check: () => Promise.reject(new Error('not used')),
    close: async () => {},
  };
  conn = await connectFace(async () => service, { refreshMs: 0 });
});
after(() => conn.close());

test('parameters that do not match the schema are refused before the handler runs', async () => {
  const refused = async (method: string, params: unknown, pattern: RegExp) => {
    await assert.rejects(conn.client.sendRequest(method, params), (err: unknown) => {
      assert.ok(err instanceof ResponseError, String(err));
      assert.equal(err.code, ErrorCodes.InvalidParams);
      assert.match(err.message, pattern);
      return true;
    });
  };
  await refused(lspMethods.prove, { id: 'x', code: 'theorem t : True := by sorry', samples: 0 }, /'samples' must be/);
  await refused(lspMethods.prove, { code: 'theorem t : True := by sorry' }, /kimina\/prove needs an id/);
  await refused(lspMethods.prove, { id: 'x', code: 'x', mode: 'everything' }, /'mode'/);
  await refused(lspMethods.cancel, { id: 7 }, /'id'/);
  await refused(lspMethods.setupLean, { project: 'p', build: 'yes' }, /'build' must be true or false/);
  await refused(lspMethods.trainingRun, {}, /needs a run id/);
  await refused(lspMethods.trainingStart, { preset: 'nope', model: 'm' }, /unknown preset/);
  assert.equal(proves, 0);
});

test('nothing registers a custom request or sends a notification but api/lspContract.ts', () => {
  const dir = join(root, 'backend', 'api');
  const elsewhere = readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && f !== 'lspContract.ts')
    .filter((f) => /\.(onRequest|sendNotification)\(/.test(readFileSync(join(dir, f), 'utf8')));
  assert.deepEqual(elsewhere, []);
});
