// Bad input gets a clear 4xx and the server keeps serving; auth; loopback refusal; back-pressure.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from 'node:http';
import { startTestServer, postJson, type TestServer } from './apiServer';
import { createApp, isLoopback, listen } from '../../backend/api/server';

let srv: TestServer;
before(async () => {
  srv = await startTestServer({ maxRepls: 1, bodyLimitBytes: 1024 * 1024 });
});
after(async () => {
  await srv.stop();
});

async function stillServing(): Promise<void> {
  const r = await postJson(`${srv.url}/api/check`, { snippets: [{ id: 'ok', code: 'theorem t : True := trivial' }] });
  assert.equal(r.status, 200);
  assert.equal(r.json.results[0].response.env !== undefined, true);
}

const cases: [string, unknown, number, RegExp][] = [
  ['malformed JSON', '{"snippets": [', 422, /json_invalid/],
  ['a JSON array body', '[1,2]', 422, /JSON object/],
  ['missing snippets', {}, 422, /Field required/],
  ['empty snippets', { snippets: [] }, 422, /must be non empty/],
  [
    'duplicate ids',
    {
      snippets: [
        { id: 'a', code: 'x' },
        { id: 'a', code: 'y' },
      ],
    },
    422,
    /unique ids/,
  ],
  ['empty id', { snippets: [{ id: '', code: 'x' }] }, 422, /non-empty string/],
  ['code not a string', { snippets: [{ id: 'a', code: 5 }] }, 422, /valid string/],
  ['timeout a string', { snippets: [{ id: 'a', code: 'x' }], timeout: 'soon' }, 422, /number of seconds/],
  ['negative timeout', { snippets: [{ id: 'a', code: 'x' }], timeout: -1 }, 422, /greater than or equal to 0/],
  ['bad infotree', { snippets: [{ id: 'a', code: 'x' }], infotree: 'all' }, 422, /should be one of/],
  ['debug not a bool', { snippets: [{ id: 'a', code: 'x' }], debug: 'yes' }, 422, /valid boolean/],
];

for (const [name, body, status, pattern] of cases) {
  test(`/api/check: ${name} -> ${status}`, async () => {
    const r = await postJson(`${srv.url}/api/check`, body);
    assert.equal(r.status, status);
    assert.match(JSON.stringify(r.json.detail), pattern);
    await stillServing();
  });
}

test('/verify: missing proof and code -> 422; duplicate custom_id -> 422', async () => {
  let r = await postJson(`${srv.url}/verify`, { codes: [{ custom_id: 1 }] });
  assert.equal(r.status, 422);
  assert.match(JSON.stringify(r.json.detail), /no proof\/code content/);
  r = await postJson(`${srv.url}/verify`, {
    codes: [
      { custom_id: 1, proof: 'a' },
      { custom_id: '1', proof: 'b' },
    ],
  });
  assert.equal(r.status, 422);
});

test('/v1/check: theorem names with spaces or newlines are refused (no command injection into the audit)', async () => {
  const r = await postJson(`${srv.url}/v1/check`, {
    snippets: [{ id: 'a', code: 'theorem t : True := trivial' }],
    theorems: ['t\n#eval 1'],
  });
  assert.equal(r.status, 422);
});

test('a multi-megabyte body -> 413 with the limit, and the server keeps serving', async () => {
  const big = JSON.stringify({ snippets: [{ id: 'a', code: 'x'.repeat(3 * 1024 * 1024) }] });
  const r = await postJson(`${srv.url}/api/check`, big);
  assert.equal(r.status, 413);
  assert.match(r.json.detail, /limit is 1048576 bytes/);
  await stillServing();
});

test('invalid UTF-8 -> 400, and the server keeps serving', async () => {
  const bytes = Buffer.concat([
    Buffer.from('{"snippets":[{"id":"a","code":"'),
    Buffer.from([0xff, 0xfe, 0xc3]),
    Buffer.from('"}]}'),
  ]);
  const status = await new Promise<number>((resolve, reject) => {
    const u = new URL(`${srv.url}/api/check`);
    const req = request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': bytes.length },
      },
      (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', reject);
    req.end(bytes);
  });
  assert.equal(status, 400);
  await stillServing();
});

test('unknown routes -> 404 JSON', async () => {
  const r = await postJson(`${srv.url}/nope`, {});
  assert.equal(r.status, 404);
  assert.match(r.json.detail, /Not Found/);
});

test('auth: Missing API key / Invalid API key; Bearer prefix optional; health stays open', async () => {
  const s = await startTestServer({ maxRepls: 1, token: 's3cret' });
  try {
    const body = { snippets: [{ id: 'a', code: 'theorem t : True := trivial' }] };
    let r = await postJson(`${s.url}/api/check`, body);
    assert.deepEqual([r.status, r.json], [401, { detail: 'Missing API key' }]);
    r = await postJson(`${s.url}/api/check`, body, { Authorization: 'Bearer wrong' });
    assert.deepEqual([r.status, r.json], [401, { detail: 'Invalid API key' }]);
    r = await postJson(`${s.url}/api/check`, body, { Authorization: 'Bearer s3cret' });
    assert.equal(r.status, 200);
    r = await postJson(
      `${s.url}/verify`,
      { codes: [{ custom_id: 1, proof: 'theorem t : True := trivial' }] },
      { Authorization: 's3cret' },
    );
    assert.equal(r.status, 200);
    assert.equal((await fetch(`${s.url}/health`)).status, 200);
  } finally {
    await s.stop();
  }
});

test('listen refuses a non-loopback address without a token', async () => {
  assert.ok(isLoopback('127.0.0.1') && isLoopback('::1') && isLoopback('localhost'));
  assert.ok(!isLoopback('0.0.0.0') && !isLoopback('192.168.1.4'));
  const app = await createApp({ verifier: srv.verifier });
  await assert.rejects(listen(app, '0.0.0.0', 0, undefined), /refusing to listen on 0.0.0.0 without an API token/);
});

test('back-pressure: a batch beyond the queue gets 429 with Retry-After; nothing is lost', async () => {
  const s = await startTestServer({ maxRepls: 1, maxInFlight: 2 });
  try {
    const slow = postJson(`${s.url}/api/check`, {
      snippets: [
        { id: 'a', code: 'theorem a : True := trivial -- stand_in_slow_400' },
        { id: 'b', code: 'theorem b : True := trivial' },
      ],
    });
    await new Promise((r) => setTimeout(r, 100));
    const r = await postJson(`${s.url}/api/check`, { snippets: [{ id: 'c', code: 'theorem c : True := trivial' }] });
    assert.equal(r.status, 429);
    assert.deepEqual(r.json, { detail: 'No available REPLs' });
    assert.ok(Number(r.headers.get('retry-after')) >= 1);
    const first = await slow;
    assert.equal(first.status, 200);
    assert.equal(first.json.results.length, 2);
    const retry = await postJson(`${s.url}/api/check`, {
      snippets: [{ id: 'c', code: 'theorem c : True := trivial' }],
    });
    assert.equal(retry.status, 200);
  } finally {
    await s.stop();
  }
});

test('extra routers from other areas mount next to the verification routes, behind the same auth', async () => {
  const { Router } = await import('express');
  const s = await startTestServer({
    maxRepls: 1,
    token: 't',
    extra: [
      (ctx) => {
        const r = Router();
        r.get('/v1/ping', (_q, res) => {
          res.json({ pong: typeof ctx.verifier.check });
        });
        return r;
      },
    ],
  });
  try {
    assert.equal((await fetch(`${s.url}/v1/ping`)).status, 401);
    const ok = await fetch(`${s.url}/v1/ping`, { headers: { Authorization: 'Bearer t' } });
    assert.deepEqual(await ok.json(), { pong: 'function' });
  } finally {
    await s.stop();
  }
});
