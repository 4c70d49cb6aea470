// The one HTTP client (backend/client/apiClient.ts, over axios) against the real app (stand-in REPL as TEST DOUBLE):
// typed calls by route name, errors as ApiError with the server's detail, no server as BackendUnreachable,
// path parameters encoded, the token sent.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { routePath, SseParser } from '../../backend/protocol';
import { ApiClient, ApiError, BackendUnreachable } from '../../backend/client/apiClient';
import { startTestServer, type TestServer } from '../api/apiServer';

let srv: TestServer;
before(async () => {
  srv = await startTestServer({ maxRepls: 1, token: 'client-token' });
});
after(async () => {
  await srv.stop();
});

test('calls a route by name with the token and gets the declared answer', async () => {
  const api = new ApiClient({ url: `${srv.url}/`, token: () => 'client-token' });
  const health = await api.call('health');
  assert.equal(health.status, 'ok');
  const checked = await api.call('check', { body: { snippets: [{ id: 'a', code: 'theorem t : True := trivial' }] } });
  assert.equal(checked.results[0].status, 'valid');
});

test("an error status is an ApiError carrying the server's detail; request() gives the raw answer instead", async () => {
  const api = new ApiClient({ url: srv.url, token: 'client-token' });
  await assert.rejects(
    api.call('apiCheck', { body: { snippets: [] } }),
    (err: unknown) =>
      err instanceof ApiError &&
      err.status === 422 &&
      err.route === 'apiCheck' &&
      /must be non empty/.test(err.message),
  );
  await assert.rejects(
    new ApiClient({ url: srv.url }).call('check', { body: { snippets: [{ id: 'a', code: 'x' }] } }),
    (err: unknown) => err instanceof ApiError && err.status === 401 && err.message === 'Missing API key',
  );
  const raw = await api.request('apiCheck', { body: { snippets: [{ id: 'a', code: 'x' }], timeout: 7200 } });
  assert.equal(raw.status, 422);
  assert.match(JSON.stringify(raw.body), /less than or equal to 3600/);
});

test('no server, or no address, is BackendUnreachable', async () => {
  await assert.rejects(
    new ApiClient({ url: 'http://127.0.0.1:9' }).call('health'),
    (err: unknown) => err instanceof BackendUnreachable && /127\.0\.0\.1:9/.test(err.message),
  );
  await assert.rejects(new ApiClient({ url: () => undefined }).call('health'), /not running/);
});

test('path parameters are encoded; a missing one is an error; the SSE parser keeps ids', () => {
  assert.equal(
    routePath('/v1/eval/runs/:name/compare/:other', { name: 'a/b', other: 'c d' }),
    '/v1/eval/runs/a%2Fb/compare/c%20d',
  );
  assert.throws(() => routePath('/v1/training/runs/:id'), /missing path parameter 'id'/);
  assert.deepEqual(new SseParser().push('id: 7\nevent: run\ndata: {"a":1}\n\n'), [
    { event: 'run', data: { a: 1 }, id: '7' },
  ]);
});

test('the SSE parser: frames split anywhere, \r\n and lone \r line ends, comments, multi-line data, a last frame without its blank line', () => {
  const text = ': hi\r\nevent: a\r\ndata: {"x":\r\ndata: 1}\r\n\r\nevent: b\rdata: 2\r\rdata: {bad\n\nid: 9\ndata: 3';
  for (let cut = 0; cut <= text.length; cut++) {
    const p = new SseParser();
    const got = [...p.push(text.slice(0, cut)), ...p.push(text.slice(cut)), ...p.end()];
    assert.deepEqual(
      got,
      [
        { event: 'a', data: { x: 1 } },
        { event: 'b', data: 2 },
        { event: 'message', data: 3, id: '9' },
      ],
      `cut at ${cut}`,
    );
  }
});
