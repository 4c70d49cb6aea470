// The language-server face over real JSON-RPC streams: code lenses, code actions, kimina/prove with streamed
// events, goal mode, cancel and status. Proofs are forwarded over HTTP to the stand-in `kimina serve`
// (a test double: test/e2e/standInServe.ts), which exercises the attach-to-a-running-backend path.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import { type BackendStatus, type EditorProveResult, type LspProveEvent, lspMethods } from '../../backend/protocol';
import { HttpProveService } from '../../backend/editor/httpService';
import { applyEdit } from '../../backend/editor/splice';
import { offsetAt } from '../../backend/editor/leanSource';
import { startStandInServe, type StandInServe } from '../e2e/standInServe';
import { connectFace, type FaceClient } from './faceClient';

const uri = 'file:///work/Algebra.lean';
const text = `import Mathlib

theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry

theorem algebra_fails (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry

theorem algebra_slow (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry

theorem with_goal (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 ∧ True := by
  constructor
  · sorry
  · trivial
`;

let serve: StandInServe;
let conn: FaceClient;
let client: MessageConnection;
let events: LspProveEvent[];
let statuses: BackendStatus[];

before(async () => {
  serve = await startStandInServe({ token: 'secret-token' });
  conn = await connectFace(
    async () => new HttpProveService({ url: serve.url, token: 'secret-token', source: 'setting' }),
  );
  ({ client, events, statuses } = conn);
  await client.sendNotification('textDocument/didOpen', {
    textDocument: { uri, languageId: 'lean4', version: 1, text },
  });
});

after(async () => {
  await conn.close();
  await serve.close();
});

test('a code lens above each declaration that contains sorry', async () => {
  const lenses = (await client.sendRequest('textDocument/codeLens', { textDocument: { uri } })) as {
    range: { start: { line: number } };
    command: { title: string; command: string; arguments: unknown[] };
  }[];
  assert.deepEqual(
    lenses.map((l) => l.range.start.line),
    [2, 5, 8, 11],
  );
  assert.match(lenses[0].command.title, /Prove with Kimina/);
  assert.equal(lenses[0].command.command, 'kimina.proveTheorem');
  assert.deepEqual(lenses[0].command.arguments, [uri, { line: 2, character: 0 }]);
});

test('code actions on a sorry: prove the goal, prove the theorem', async () => {
  const range = { start: { line: 13, character: 4 }, end: { line: 13, character: 4 } };
  const actions = (await client.sendRequest('textDocument/codeAction', {
    textDocument: { uri },
    range,
    context: { diagnostics: [] },
  })) as { title: string; command: { command: string; arguments: unknown[] } }[];
  assert.deepEqual(
    actions.map((a) => a.title),
    ['Prove this goal with Kimina', 'Prove with_goal with Kimina'],
  );
  assert.deepEqual(actions[0].command.arguments, [uri, { line: 13, character: 4 }]);
  const none = (await client.sendRequest('textDocument/codeAction', {
    textDocument: { uri },
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    context: { diagnostics: [] },
  })) as unknown[];
  assert.equal(none.length, 0);
});

test('code actions on a sorry in a def: prove the goal (any sorry is a target), no whole-theorem action', async () => {
  const defUri = 'file:///work/Half.lean';
  await client.sendNotification('textDocument/didOpen', {
    textDocument: {
      uri: defUri,
      languageId: 'lean4',
      version: 1,
      text: 'import Mathlib\n\ndef half (n : Nat) : { m : Nat // 2 * m ≤ n } :=\n  ⟨n / 2, sorry⟩\n',
    },
  });
  const actions = (await client.sendRequest('textDocument/codeAction', {
    textDocument: { uri: defUri },
    range: { start: { line: 3, character: 10 }, end: { line: 3, character: 10 } },
    context: { diagnostics: [] },
  })) as { title: string; command: { command: string; arguments: unknown[] } }[];
  assert.deepEqual(
    actions.map((a) => [a.title, a.command.command]),
    [['Prove this goal with Kimina', 'kimina.proveGoal']],
  );
});

test('prove a theorem: think deltas stream, the result carries the edit, status returns to ready', async () => {
  events.splice(0);
  const result = (await client.sendRequest(lspMethods.prove, {
    id: 'p1',
    uri,
    code: text,
    mode: 'theorem',
    position: { line: 3, character: 2 },
  })) as EditorProveResult;
  assert.equal(result.status, 'proved');
  assert.equal(result.declaration?.name, 'algebra_example');
  const thinks = events.filter((e) => e.type === 'think');
  assert.ok(thinks.length >= 3, 'think deltas arrive as notifications');
  assert.ok(
    events.every((e) => e.id === 'p1'),
    'events carry the client id',
  );
  const updated = applyEdit(text, result.edit!, (l, c) => offsetAt(text, l, c));
  assert.ok(
    updated.includes(
      'theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  have h₁ : 2 * x = 8 := by linarith\n  linarith\n\ntheorem algebra_fails',
    ),
  );
  const status = (await client.sendRequest(lspMethods.status, {})) as BackendStatus;
  assert.equal(status.state, 'ready');
  assert.equal(status.backend, 'server');
  assert.deepEqual(
    status.server,
    { url: serve.url, token: 'secret-token' },
    'the Training Monitor reaches the attached server with this',
  );
  assert.ok(statuses.some((s) => s.state === 'proving'));
});

test('a failing proof: both turns with Lean errors, no edit', async () => {
  const result = (await client.sendRequest(lspMethods.prove, {
    id: 'p2',
    code: text,
    position: { line: 5, character: 0 },
  })) as EditorProveResult;
  assert.equal(result.status, 'not_proved');
  assert.equal(result.edit, null);
  assert.deepEqual(
    result.attempts.map((a) => [a.turn, a.verdict?.status]),
    [
      [1, 'lean_error'],
      [2, 'lean_error'],
    ],
  );
  assert.match(result.attempts[0].verdict!.messages[0].data, /unknown identifier 'bogus_lemma'/);
});

test('goal mode: the sorry goal becomes a lemma, its proof is spliced in and re-checked', async () => {
  events.splice(0);
  const result = (await client.sendRequest(lspMethods.prove, {
    id: 'p3',
    code: text,
    mode: 'goal',
    position: { line: 13, character: 5 },
  })) as EditorProveResult;
  assert.equal(result.status, 'proved', result.problem);
  assert.match(
    result.goal!.statement,
    /^theorem with_goal_goal \(x : ℝ\) \(h₀ : 2 \* x \+ 3 = 11\) :\n {4}x = 4 := by$/,
  );
  assert.equal(result.goal!.recheck?.status, 'valid');
  assert.deepEqual(result.edit!.range, { start: { line: 13, character: 4 }, end: { line: 13, character: 9 } });
  assert.equal(result.edit!.newText, 'have h₁ : 2 * x = 8 := by linarith\n    linarith');
  assert.ok(events.some((e) => e.type === 'stage' && /Re-checking/.test(e.message)));
  assert.ok(serve.requests.filter((r) => r === 'POST /v1/check').length >= 2);
});

test('goal mode without a sorry at the cursor explains why', async () => {
  const result = (await client.sendRequest(lspMethods.prove, {
    id: 'p4',
    code: 'theorem t : True := by\n  trivial\n',
    mode: 'goal',
    position: { line: 1, character: 2 },
  })) as EditorProveResult;
  assert.equal(result.status, 'not_proved');
  assert.match(result.problem!, /No sorry at the cursor/);
});

test('cancel stops a running proof quickly', async () => {
  const started = Date.now();
  const pending = client.sendRequest(lspMethods.prove, {
    id: 'p5',
    code: text,
    position: { line: 8, character: 0 },
  }) as Promise<EditorProveResult>;
  await new Promise((r) => setTimeout(r, 400));
  const answer = (await client.sendRequest(lspMethods.cancel, { id: 'p5' })) as { cancelled: boolean };
  assert.equal(answer.cancelled, true);
  const result = await pending;
  assert.equal(result.status, 'cancelled');
  assert.ok(Date.now() - started < 5000);
  assert.deepEqual(await client.sendRequest(lspMethods.cancel, { id: 'p5' }), { cancelled: false });
  assert.ok(serve.requests.includes('DELETE /v1/prove/p5'), 'the attached server is told to cancel the same id');
});

test('bad requests get clear errors and the server keeps serving', async () => {
  await assert.rejects(client.sendRequest(lspMethods.prove, { id: '', code: text }), /needs an id/);
  await assert.rejects(client.sendRequest(lspMethods.prove, { id: 'x', uri: 'file:///nope.lean' }), /document text/);
  const status = (await client.sendRequest(lspMethods.status, {})) as BackendStatus;
  assert.equal(status.state, 'ready');
});

test('a wrong token is reported as such', async () => {
  const svc = new HttpProveService({ url: serve.url, token: 'wrong', source: 'setting' });
  await assert.rejects(svc.check('theorem t : True := trivial'), /401.*token/i);
});
