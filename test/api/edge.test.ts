// The HTTP edge of a live `kimina serve` (spawned, stand-in REPL as TEST DOUBLE for Lean), tried the way a web
// page, a rebinding attacker or a careless client would: each request is refused with the right status and a
// JSON answer that repeats nothing of the request, and the server stays healthy after each.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { routePath, routes, type RouteName } from '../../backend/protocol';
import { ApiClient } from '../../backend/client/apiClient';
import * as discovery from '../../backend/editor/discovery';
import { kiminaHome, readSome, type Env } from '../../backend/settings/settings';
import { HttpProveService } from '../../backend/editor/httpService';
import { cleanUpServes, serve, stop, type Served } from './spawnServe';
import { MARKER, malformedTexts } from './malformed';

// The commands read the settings and hand them down; these tests read them from the environment they set.
const findServer = (env: Env) =>
  discovery.findServer({ ...readSome(['apiToken', 'serverUrl'], env), home: kiminaHome() });

let server: Served;
let token: string;
let port: number;
let api: ApiClient;

before(async () => {
  server = await serve();
  token = (JSON.parse(readFileSync(join(server.home, 'serve.json'), 'utf8')) as { token: string }).token;
  port = Number(new URL(server.url).port);
  api = new ApiClient({ url: server.url, token });
});
after(async () => {
  if (server) await stop(server, 'SIGTERM');
  cleanUpServes();
});

interface Answer {
  status: number;
  text: string;
  type: string;
}

/** A raw request with exactly the given headers (fetch would set Host and Origin itself). */
function raw(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        headers: { ...(body !== undefined ? { 'Content-Length': Buffer.byteLength(body) } : {}), ...headers },
        setHost: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => {
          text += c;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, text, type: String(res.headers['content-type'] ?? '') }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const host = () => `127.0.0.1:${port}`;
const auth = () => ({ Authorization: `Bearer ${token}` });
const checkBody = JSON.stringify({ snippets: [{ id: 'a', code: 'theorem t : True := trivial' }] });

async function healthy(): Promise<void> {
  const h = await raw('GET', '/health', { Host: host() });
  assert.equal(h.status, 200, `health after the refusal: ${h.text}`);
  const ok = await api.request('apiCheck', { body: { snippets: [{ id: 'ok', code: 'theorem t : True := trivial' }] } });
  assert.equal(ok.status, 200, JSON.stringify(ok.body));
}

function assertRefusedAsJson(a: Answer, status: number, what: string): void {
  assert.equal(a.status, status, `${what}: ${a.text.slice(0, 300)}`);
  assert.match(a.type, /application\/json/, `${what}: answered as JSON`);
  assert.doesNotMatch(
    a.text,
    new RegExp(`${MARKER}|at [\\w.]+ \\(|node_modules|/work/`),
    `${what}: nothing echoed, no stack trace, no paths`,
  );
}

test('the same request with the token, from Node, is served (control)', async () => {
  const a = await raw('POST', '/api/check', { Host: host(), 'Content-Type': 'application/json', ...auth() }, checkBody);
  assert.equal(a.status, 200, a.text);
});

const refusals: [string, () => Promise<Answer>, number][] = [
  [
    'a page on another origin (Origin: http://evil.example)',
    () =>
      raw(
        'POST',
        '/api/check',
        { Host: host(), Origin: 'http://evil.example', 'Content-Type': 'application/json', ...auth() },
        checkBody,
      ),
    403,
  ],
  [
    'a page reading an answer (GET with Origin)',
    () => raw('GET', '/v1/training/runs', { Host: host(), Origin: 'http://evil.example', ...auth() }),
    403,
  ],
  [
    'a webview origin',
    () => raw('GET', '/v1/training/runs', { Host: host(), Origin: 'vscode-webview://abc', ...auth() }),
    403,
  ],
  [
    'a sandboxed page (Origin: null)',
    () => raw('GET', '/v1/training/runs', { Host: host(), Origin: 'null', ...auth() }),
    403,
  ],
  [
    'a cross-site embed without Origin (Sec-Fetch-Site)',
    () => raw('GET', '/v1/training/runs', { Host: host(), 'Sec-Fetch-Site': 'cross-site', ...auth() }),
    403,
  ],
  [
    'DNS rebinding (Host: evil.example:PORT)',
    () => raw('GET', '/v1/training/runs', { Host: `evil.example:${port}`, ...auth() }),
    403,
  ],
  ['DNS rebinding on health too', () => raw('GET', '/health', { Host: `evil.example:${port}` }), 403],
  ['a loopback Host with another port', () => raw('GET', '/v1/training/runs', { Host: '127.0.0.1:1', ...auth() }), 403],
  [
    'a text/plain POST (no CORS preflight)',
    () => raw('POST', '/api/check', { Host: host(), 'Content-Type': 'text/plain', ...auth() }, checkBody),
    415,
  ],
  [
    'a form POST',
    () =>
      raw(
        'POST',
        '/v1/training/runs/x/cancel',
        { Host: host(), 'Content-Type': 'application/x-www-form-urlencoded', ...auth() },
        'a=1',
      ),
    415,
  ],
  ['a POST without Content-Type', () => raw('POST', '/v1/training/runs/x/cancel', { Host: host(), ...auth() }), 415],
  ['no token', () => raw('POST', '/api/check', { Host: host(), 'Content-Type': 'application/json' }, checkBody), 401],
  ['a wrong token', () => raw('GET', '/v1/training/runs', { Host: host(), Authorization: 'Bearer nope' }), 401],
  [
    '100k-deep nested JSON',
    () =>
      raw(
        'POST',
        '/api/check',
        { Host: host(), 'Content-Type': 'application/json', ...auth() },
        '['.repeat(100_000) + ']'.repeat(100_000),
      ),
    422,
  ],
  [
    '100k-deep nested JSON in a field',
    () =>
      raw(
        'POST',
        '/v1/training/runs',
        { Host: host(), 'Content-Type': 'application/json', ...auth() },
        `{"preset":"tiny-cpu","model":"m","prompts":${'['.repeat(100_000)}${']'.repeat(100_000)}}`,
      ),
    400,
  ],
  [
    'unterminated JSON',
    () =>
      raw(
        'POST',
        '/api/check',
        { Host: host(), 'Content-Type': 'application/json', ...auth() },
        `{"snippets": "${MARKER}`,
      ),
    422,
  ],
];

for (const [what, send, status] of refusals) {
  test(`refused: ${what} -> ${status}`, async () => {
    assertRefusedAsJson(await send(), status, what);
    await healthy();
  });
}

test("a request without Host is refused (by Node's HTTP parser, before any route)", async () => {
  assert.equal((await raw('GET', '/v1/training/runs', { ...auth() })).status, 400);
  await healthy();
});

test('same-origin requests (a user opening the server in a browser) and the configured loopback names pass', async () => {
  assert.equal((await raw('GET', '/health', { Host: host(), Origin: `http://${host()}` })).status, 200);
  assert.equal((await raw('GET', '/health', { Host: `localhost:${port}`, 'Sec-Fetch-Site': 'none' })).status, 200);
  const health = JSON.parse((await raw('GET', '/health', { Host: host() })).text) as Record<string, unknown>;
  assert.deepEqual(
    Object.keys(health).sort(),
    ['bodyLimitBytes', 'repls', 'status', 'version'],
    'health tells nothing sensitive (no paths, no token)',
  );
});

test('the attacks of issue 14 are refused at the edge: timeout 1e6, heldOut [null], learningRate "x", any-string gpus, too many reward items', async () => {
  const snippets = [{ id: 'a', code: 'theorem t : True := trivial' }];
  const start = { preset: 'tiny-cpu', model: 'm', prompts: [] };
  const cases: [RouteName, Record<string, string>, unknown, number, RegExp][] = [
    ['apiCheck', {}, { snippets, timeout: 1e6 }, 422, /less than or equal to 3600/],
    ['check', {}, { snippets, timeout: 2 ** 31 }, 422, /less than or equal to 3600/],
    ['trainingStart', {}, { ...start, heldOut: [null] }, 400, /'heldOut\[0\]' must be an object/],
    [
      'trainingStart',
      {},
      { ...start, overrides: { learningRate: 'x' } },
      400,
      /'overrides.learningRate' must be a number/,
    ],
    ['trainingStart', {}, { ...start, overrides: { noSuchSetting: 1 } }, 400, /unknown field: noSuchSetting/],
    ['trainingStart', {}, { ...start, gpus: '0; touch /tmp/x' }, 400, /'gpus' must be "cpu" or GPU numbers/],
    [
      'trainingReward',
      {},
      {
        step: 0,
        purpose: 'train',
        items: Array.from({ length: 1025 }, () => ({
          promptId: 'p',
          turn: 1,
          formalStatement: 's',
          previous: [],
          response: 'r',
        })),
      },
      400,
      /at most 1024/,
    ],
    [
      'trainingTrainerEvent',
      { id: 'nope' },
      { kind: 'finished', step: 1, finalDir: 5 },
      400,
      /'finalDir' must be a string/,
    ],
  ];
  for (const [name, params, body, status, message] of cases) {
    const a = await api.request(name, { params, body } as never);
    assert.equal(a.status, status, `${name} ${JSON.stringify(body).slice(0, 80)}: ${JSON.stringify(a.body)}`);
    const detail = (a.body as { detail: unknown }).detail;
    assert.match(typeof detail === 'string' ? detail : JSON.stringify(detail), message);
  }
  await healthy();
});

test('every route with a body refuses bad bodies generated from its schema at the edge (its validation status, never a 500)', async (t) => {
  let sent = 0;
  for (const [name, spec] of Object.entries(routes) as [RouteName, (typeof routes)[RouteName]][]) {
    if (!('body' in spec)) continue;
    const path = routePath(spec.path, { id: 'no-such-run' });
    for (const bad of malformedTexts(spec.body)) {
      const a = await raw('POST', path, { Host: host(), 'Content-Type': 'application/json', ...auth() }, bad.text);
      // the schema answers before the handler looks at anything (so not a 404 for the unknown run either)
      assertRefusedAsJson(a, spec.errors === 'detail' ? 400 : 422, `${name} ${bad.what}`);
      sent++;
    }
    await healthy();
  }
  t.diagnostic(`${sent} malformed bodies refused`);
  assert.ok(sent > 300, `only ${sent} bodies were generated`);
});

test('bad query strings and overlong path parameters are refused too', async () => {
  assertRefusedAsJson(
    await raw('GET', `/v1/training/runs/${MARKER}${'x'.repeat(600)}`, { Host: host(), ...auth() }),
    404,
    'a 600-character run id',
  );
  for (const [path, status] of [
    ['/v1/prove?limit=abc', 422],
    ['/v1/prove?limit=0', 422],
    ['/v1/training/runs/x/metrics?since=-1', 400],
    ['/v1/training/runs/x/metrics?kind=all', 400],
  ] as const) {
    const a = await raw('GET', path, { Host: host(), ...auth() });
    assertRefusedAsJson(a, status, path);
  }
  await healthy();
});

test('the editor, the CLI and the verl reward module connect with the random token, no setting changed', async (t) => {
  // the editor (and `kimina train`) find the server and its token through serve.json in KIMINA_HOME
  const saved = process.env.KIMINA_HOME;
  process.env.KIMINA_HOME = server.home;
  let found;
  try {
    found = findServer({});
  } finally {
    if (saved === undefined) delete process.env.KIMINA_HOME;
    else process.env.KIMINA_HOME = saved;
  }
  assert.deepEqual(found, { url: server.url, token, source: 'discovery' });
  const answer = await new HttpProveService(found!).check('theorem t : True := trivial');
  assert.equal(answer.verdict.status, 'valid');

  const cli = spawnSync(process.execPath, ['--import', 'tsx', 'backend/cli.ts', 'train', 'status'], {
    cwd: join(__dirname, '..', '..'),
    encoding: 'utf8',
    env: { ...process.env, KIMINA_HOME: server.home, KIMINA_API_TOKEN: '', KIMINA_SERVER_URL: '' },
  });
  assert.equal(cli.status, 0, cli.stderr);
  assert.match(cli.stdout, /no training runs/);

  // verl's reward module (stdlib Python) with the token the user exports from serve.json
  const python = spawnSync(
    'python3',
    [
      '-c',
      [
        'import sys; sys.path.insert(0, "backend/trainer/verl"); import kimina_reward',
        'print(kimina_reward.reward(["lean4"], ["no proof here"], [None], [{"formal_statement": "theorem t : True := by", "index": 0}]))',
      ].join('\n'),
    ],
    {
      cwd: join(__dirname, '..', '..'),
      encoding: 'utf8',
      env: { ...process.env, KIMINA_REWARD_URL: server.url, KIMINA_API_TOKEN: token },
    },
  );
  if (python.error) {
    t.diagnostic('no python3 here: the reward module was not tried');
    return;
  }
  assert.equal(python.status, 0, python.stderr);
  assert.equal(python.stdout.trim(), '[0.0]');
});
