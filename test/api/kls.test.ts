// kimina-lean-server compatibility: requests and responses as kimina-client sends and reads them.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestServer, postJson, type TestServer } from './apiServer';
import { kiminaAnalyze } from './kiminaClientAnalyze';
import type { ReplResponse } from '../../backend/protocol';

let srv: TestServer;
before(async () => {
  srv = await startTestServer({ maxRepls: 2 });
});
after(async () => {
  await srv.stop();
});

// the body kimina-client's check() posts for one batch
const clientBody = (snippets: { id: string; code: string }[], extra: Record<string, unknown> = {}) => ({
  snippets,
  timeout: 60,
  debug: false,
  reuse: true,
  infotree: null,
  ...extra,
});

test('GET /health, /health/ and / answer {"status":"ok"} without auth', async () => {
  for (const path of ['/health', '/health/', '/']) {
    const res = await fetch(srv.url + path);
    assert.equal(res.status, 200);
    assert.equal((await res.json()).status, 'ok');
  }
});

test('kimina-client test(): #check Nat gives the info message Nat : Type at (1,0)-(1,6)', async () => {
  const r = await postJson(`${srv.url}/api/check`, clientBody([{ id: 'x', code: '#check Nat' }]));
  assert.equal(r.status, 200);
  const [res] = r.json.results as ReplResponse[];
  assert.equal(res.id, 'x');
  assert.equal(typeof res.time, 'number');
  const msg = (res.response as { messages: any[] }).messages[0];
  assert.deepEqual(msg, {
    pos: { line: 1, column: 0 },
    endPos: { line: 1, column: 6 },
    severity: 'info',
    data: 'Nat : Type',
  });
});

test('results come back in input order with exactly id, time and error|response', async () => {
  const snippets = [
    { id: 'slow', code: 'theorem a : True := trivial -- stand_in_slow_200' },
    { id: 'fast', code: 'import Mathlib\ntheorem b : 1 = 1 := by simp' },
    { id: 'bad', code: 'theorem c : True := bogus_c' },
  ];
  const r = await postJson(`${srv.url}/api/check/`, clientBody(snippets));
  assert.equal(r.status, 200);
  const results = r.json.results as ReplResponse[];
  assert.deepEqual(
    results.map((x) => x.id),
    ['slow', 'fast', 'bad'],
  );
  for (const x of results) {
    assert.deepEqual(
      Object.keys(x).filter((k) => k !== 'error' && k !== 'response'),
      ['id', 'time'],
    );
    assert.ok((x.error === undefined) !== (x.response === undefined));
  }
  assert.deepEqual(results.map(kiminaAnalyze), ['valid', 'valid', 'lean_error']);
  assert.equal((results[1].response as { env: number }).env, 1);
});

test('positions in /api/check are relative to the full snippet', async () => {
  const r = await postJson(
    `${srv.url}/api/check`,
    clientBody([{ id: 'p', code: 'import Mathlib\n\nopen Real\ntheorem t : True := by\n  exact bogus_p' }]),
  );
  const msg = (r.json.results[0].response as { messages: any[] }).messages[0];
  assert.deepEqual(msg.pos, { line: 5, column: 8 });
});

test('kimina-client analyze() agrees with our verdict on every cheat: none is valid', async () => {
  const stmt = 'theorem t (a b : ℕ) (h₀ : a = b) : b = a := by\n';
  const cases: [string, string, string][] = [
    ['honest', `${stmt}  simp [h₀]`, 'valid'],
    ['admit', `${stmt}  admit`, 'sorry'],
    ['sorryAx', `${stmt}  exact sorryAx _ false`, 'sorry'],
    ['sorry', `${stmt}  sorry`, 'sorry'],
    ['axiom', `axiom cheat : False\n${stmt}  exact cheat.elim`, 'lean_error'],
    ['run_tac', `${stmt}  run_tac Lean.addDecl default`, 'lean_error'],
    ['#eval', `#eval IO.println "x"\n${stmt}  omega`, 'lean_error'],
    ['native_decide', 'theorem t : 2 + 2 = 4 := by native_decide', 'lean_error'],
    ['timeout', `${stmt}  omega -- stand_in_hang`, 'timeout_error'],
    ['crash', `${stmt}  omega -- stand_in_crash`, 'server_error'],
    ['repl error', `${stmt}  omega -- stand_in_repl_error`, 'repl_error'],
  ];
  const r = await postJson(
    `${srv.url}/api/check`,
    clientBody(
      cases.map(([id, code]) => ({ id, code })),
      { timeout: 1 },
    ),
  );
  const results = r.json.results as ReplResponse[];
  assert.deepEqual(
    results.map((x) => [x.id, kiminaAnalyze(x)]),
    cases.map(([id, , status]) => [id, status]),
  );
  const admit = results[1].response as { sorries: { goal: string }[] };
  assert.match(admit.sorries[0].goal, /^kimina: /);
  const axiom = results[4].response as { messages: { data: string; severity: string }[] };
  assert.match(axiom.messages[0].data, /kimina: rejected before Lean: 'axiom' declarations are not allowed/);
  assert.equal(results[8].error, 'Lean REPL command timed out in 1 seconds');
});

test('a forbidden axiom that only the audit finds becomes an error-severity message', async () => {
  const { toKlsResult } = await import('../../backend/api/klsCompat');
  const out = toKlsResult(
    'z',
    {
      verdict: {
        status: 'rejected',
        reason: 'The proof depends on axioms outside the allow-list: My.cheat.',
        messages: [],
        sorries: [],
        time: 0.2,
      },
      response: { env: 3 },
    },
    false,
  );
  assert.equal(kiminaAnalyze(out), 'lean_error');
  assert.deepEqual(out, {
    id: 'z',
    time: 0.2,
    response: {
      env: 3,
      messages: [
        {
          pos: { line: 1, column: 0 },
          endPos: { line: 1, column: 0 },
          severity: 'error',
          data: 'kimina: The proof depends on axioms outside the allow-list: My.cheat.',
        },
      ],
    },
  });
});

test('debug adds diagnostics with the REPL id; infotree is forwarded', async () => {
  const r = await postJson(
    `${srv.url}/api/check`,
    clientBody([{ id: 'd', code: 'theorem t : True := trivial' }], { debug: true, infotree: 'original' }),
  );
  const res = r.json.results[0];
  assert.match(res.diagnostics.repl_uuid, /^[0-9a-f-]{36}$/);
  assert.deepEqual(res.response.infotree, []);
});

test('POST /verify and /one_pass_verify_batch: custom_id kept (string or int), proof or code, time inside response', async () => {
  for (const path of ['/verify', '/one_pass_verify_batch']) {
    const r = await postJson(srv.url + path, {
      codes: [
        { custom_id: 7, proof: 'theorem t : True := trivial' },
        { custom_id: 'b', code: 'theorem u : True := bogus_u' },
      ],
      timeout: 30,
      infotree_type: null,
      disable_cache: false,
    });
    assert.equal(r.status, 200);
    const [a, b] = r.json.results;
    assert.equal(a.custom_id, 7);
    assert.equal(b.custom_id, 'b');
    assert.equal(typeof a.response.time, 'number');
    assert.equal(a.response.env !== undefined, true);
    assert.equal(b.response.messages[0].severity, 'error');
  }
});

test('POST /v1/check gives our verdict with status, reason and axioms', async () => {
  const r = await postJson(`${srv.url}/v1/check`, {
    snippets: [
      { id: 'a', code: 'theorem t : 1 = 1 := by simp' },
      { id: 'b', code: 'theorem t : 1 = 1 := by admit' },
    ],
  });
  assert.equal(r.status, 200);
  const [a, b] = r.json.results;
  assert.equal(a.id, 'a');
  assert.equal(a.status, 'valid');
  assert.deepEqual(a.axioms, ['Classical.choice', 'Quot.sound', 'propext']);
  assert.equal(b.status, 'sorry');
  assert.match(b.reason, /admit/);
});

test('/api/check and /verify take module headers and header comments; snippets stay untrusted (a notation is refused)', async () => {
  const moduleSnippet = [
    '/-',
    'Copyright (c) 2026 Someone. All rights reserved.',
    '-/',
    'module',
    '',
    'public import Mathlib.Data.Nat.Basic',
    'public import Mathlib.Tactic.Ring',
    '',
    '/-! # A module docstring -/',
    '',
    '@[expose] public section',
    '',
    'theorem t (n : ℕ) : n + 0 = n := by',
    '  simp',
    '',
    'end',
  ].join('\n');
  const notation = 'import Mathlib\n\nnotation "cheat!" => sorry\ntheorem t : (1 : ℕ) = 2 := by\n  exact cheat!';
  for (const path of ['/api/check', '/verify']) {
    const body =
      path === '/verify'
        ? {
            codes: [
              { custom_id: 'm', proof: moduleSnippet },
              { custom_id: 'n', proof: notation },
            ],
            timeout: 60,
          }
        : clientBody([
            { id: 'm', code: moduleSnippet },
            { id: 'n', code: notation },
          ]);
    const r = await postJson(srv.url + path, body);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const [m, n] = r.json.results as ReplResponse[];
    const mMessages = ((m.response as { messages?: { severity: string; data: string }[] })?.messages ?? []).filter(
      (x) => x.severity === 'error',
    );
    assert.deepEqual(mMessages, [], `${path}: ${JSON.stringify(m)}`);
    assert.equal(m.error ?? null, null, `${path}: ${JSON.stringify(m)}`);
    const nText = JSON.stringify(n);
    assert.match(nText, /rejected before Lean: 'notation' is not allowed/, `${path}: ${nText}`);
  }
});
