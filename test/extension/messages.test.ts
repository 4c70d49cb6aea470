// Every message the extension shows on the failure paths, collected and checked for words from the wrong layer:
// a JSON-RPC wrapper ("Request kimina/prove failed with message: …"), a command-line flag or command, an
// environment variable, or a raw enum name. The paths run through the real language-server face and the real
// backend parts (model store, REPL pool, prove loop); the texts are the ones the extension builds from what
// the face answers (extension/words.ts for notifications and the status bar, media/proofViewState.ts for the
// Proof view). TEST DOUBLES: the scripted engine of test/prover/doubles.ts (fixed answers, no model) and the
// stand-in REPL (text rules, not Lean) where Lean's answer is not the point.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResponseError } from 'vscode-jsonrpc';
import { type BackendStatus, type EditorProveResult, type LspProveEvent, lspMethods } from '../../backend/protocol';
import { App } from '../../backend/app/app';
import { readSettings } from '../../backend/settings/settings';
import { createInProcessService } from '../../backend/editor/inProcess';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';
import { WELL_FORMED } from '../../backend/demo/kiminaExamples';
import { ScriptedEngine } from '../prover/doubles';
import { connectFace, settledStatus, type FaceClient } from '../api/faceClient';
import { forEditor, outcomeMessage, requestFailedMessage, setupGuidance, statusLook } from '../../extension/words';
import { emptyState, reduce, viewTexts } from '../../media/proofViewState';
import type { ToView } from '../../media/proofViewMessages';

const FILE = `import Mathlib

/-- Solve 2x + 3 = 11. -/
theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by
  sorry
`;
const formatEnums = [
  'NO_VALID_LEAN4_CODE_BLOCK',
  'NO_VALID_THINK_BLOCK',
  'INVALID_THINK_BLOCK_COUNT',
  'INVALID_LEAN4_CODE_BLOCK_COUNT',
  'GENERATION_REPEATS',
  'INSUFFICIENT_TACTICS_BLOCKS',
  'TACTIC_CODE_TOO_MANY_LINES',
  'TACTIC_BLOCK_FORMATTING_ERROR',
  'TACTICS_LEAN4_NOT_MATCH',
  'LEAN4_CODE_NOT_START_WITH_STATEMENT',
];
const otherEnums = [
  'lean_error',
  'server_error',
  'repl_error',
  'timeout_error',
  'not_proved',
  'feedback_too_long',
  'exceed_max_turn',
  'max_prompt_token_len_exceeded',
  'verifier_failed',
];

/** What is wrong with one shown text, in words (empty: nothing). */
function wrongLayer(text: string): string[] {
  const found: string[] = [];
  if (/Request [\w/$.-]+ failed/.test(text)) found.push('an RPC wrapper');
  if (/(?:^|[\s(`'"])--[a-z][\w-]*/.test(text)) found.push('a command-line flag');
  if (/\bkimina (?:model|lean|trainer|prove|check|serve|lsp|eval)\b/.test(text)) found.push('a CLI command');
  for (const m of text.match(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g) ?? [])
    found.push(formatEnums.includes(m) ? `the raw enum ${m}` : `the environment variable ${m}`);
  for (const e of otherEnums) if (new RegExp(`\\b${e}\\b`).test(text)) found.push(`the raw enum ${e}`);
  if (/\b1 attempts\b/.test(text)) found.push('"1 attempts"');
  return found;
}

test('the checker itself finds each kind of wrong word', () => {
  assert.deepEqual(wrongLayer('Request kimina/prove failed with message: x'), ['an RPC wrapper']);
  assert.deepEqual(wrongLayer('pass --project with your folder'), ['a command-line flag']);
  assert.deepEqual(wrongLayer('run `kimina model pull x`'), ['a CLI command']);
  assert.deepEqual(wrongLayer('set KIMINA_MODEL to a folder'), ['the environment variable KIMINA_MODEL']);
  assert.deepEqual(wrongLayer('Format: LEAN4_CODE_NOT_START_WITH_STATEMENT'), [
    'the raw enum LEAN4_CODE_NOT_START_WITH_STATEMENT',
  ]);
  assert.deepEqual(wrongLayer('server_error: spawn lake ENOENT'), ['the raw enum server_error']);
  assert.deepEqual(wrongLayer('could not prove it (1 attempts)'), ['"1 attempts"']);
  assert.deepEqual(wrongLayer('Kimina needs a model: use "Kimina: Pull Model" or set kimina.model.'), []);
  // what vscode-jsonrpc makes of a handler's plain Error (connection.js), and what the extension shows of it
  assert.equal(forEditor('Request kimina/prove failed with message: the file is empty'), 'the file is empty');
  assert.equal(
    forEditor('no model available: x is not in /m; run `kimina model pull x` (or set KIMINA_MODEL to a model folder)'),
    'no model available: x is not in /m; use "Kimina: Pull Model" (or set kimina.model to a model folder)',
  );
});

const dirs: string[] = [];
const faces: FaceClient[] = [];
after(async () => {
  for (const f of faces) await f.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Every text the user is shown on one path: notifications with their buttons, the Proof view, the status bar. */
const shown: { path: string; text: string }[] = [];
function collect(path: string, texts: (string | undefined)[]): void {
  for (const text of texts) if (text) shown.push({ path, text });
}

function statusTexts(path: string, s: BackendStatus): void {
  const look = statusLook(s);
  const guidance = setupGuidance(s);
  collect(path, [look.text, look.tooltip, guidance?.text, ...(guidance?.actions ?? [])]);
}

async function face(env: Record<string, string>, engine?: () => ScriptedEngine): Promise<FaceClient> {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-messages-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'lean-toolchain'), 'leanprover/lean4:v4.24.0\n');
  const settings = readSettings({
    KIMINA_HOME: dir,
    KIMINA_DB: join(dir, 'kimina.db'),
    KIMINA_LEAN_PROJECT: dir,
    KIMINA_SANDBOX: 'none',
    KIMINA_REPL_MEMORY_MB: '0',
    KIMINA_MAX_REPLS: '1',
    PATH: process.env.PATH ?? '',
    ...env,
  });
  const conn = await connectFace(() =>
    createInProcessService(
      new App({ settings, log: () => {}, ...(engine ? { loadEngine: async () => engine() } : {}) }),
      () => {},
    ),
  );
  faces.push(conn);
  return conn;
}

/** Proves as the extension does and collects what it would show. */
async function proveAndCollect(
  path: string,
  conn: FaceClient,
  position: { line: number; character: number },
  samples = 1,
): Promise<EditorProveResult | undefined> {
  const id = `m-${shown.length}-${Math.random().toString(36).slice(2, 8)}`;
  const messages: ToView[] = [
    { type: 'start', id, title: `Prove at line ${position.line + 1}`, mode: 'theorem', file: 'A.lean', startedAt: 0 },
  ];
  const from = conn.events.length;
  try {
    const result = (await conn.client.sendRequest(lspMethods.prove, {
      id,
      code: FILE,
      mode: 'theorem',
      position,
      samples,
      fixTurns: 1,
    })) as EditorProveResult;
    for (const event of conn.events.slice(from) as LspProveEvent[]) messages.push({ type: 'event', event, at: 1 });
    messages.push({ type: 'result', result, canAccept: false, at: 2 });
    const outcome = outcomeMessage(result, false);
    collect(path, [outcome?.text, ...(outcome?.actions ?? [])]);
    collect(path, viewTexts(messages.reduce(reduce, emptyState()), 3));
    return result;
  } catch (err) {
    // ctx.request rewrites the error with forEditor; the runner shows requestFailedMessage's text
    const failed = requestFailedMessage(forEditor((err as ResponseError<unknown>).message));
    messages.push({ type: 'failed', message: failed.text });
    collect(path, [failed.text, ...failed.actions]);
    collect(path, viewTexts(messages.reduce(reduce, emptyState()), 3));
    return undefined;
  }
}

test('no model: the status, the guidance and the failed proof name the Pull Model button and the setting', async () => {
  const conn = await face({ KIMINA_MODEL: 'kimina-test/absent-model', HF_HUB_OFFLINE: '1' });
  const status = await settledStatus(conn.client);
  assert.equal(status.state, 'error');
  assert.equal(status.setup?.model, true);
  statusTexts('no model', status);
  assert.match(statusLook(status).text, /model missing/);
  assert.deepEqual(setupGuidance(status)?.actions.slice(0, 1), ['Pull Model']);
  const result = await proveAndCollect('no model', conn, { line: 3, character: 0 });
  assert.equal(result, undefined, 'the prove request fails without a model');
  assert.ok(shown.some((s) => s.path === 'no model' && s.text === 'Pull Model'));
});

test('no Lean: one attempt, no fix turn, "Lean is missing" with Set Up Lean', async () => {
  const engine = new ScriptedEngine(() => WELL_FORMED);
  const conn = await face({ KIMINA_REPL_COMMAND: '/nonexistent/kimina-test-lean-repl' }, () => engine);
  const status = await settledStatus(conn.client);
  statusTexts('no Lean', status);
  const result = await proveAndCollect('no Lean', conn, { line: 4, character: 2 });
  assert.ok(result);
  assert.equal(result.status, 'not_proved');
  assert.equal(result.verifierFailure?.leanMissing, true, JSON.stringify(result.verifierFailure));
  assert.equal(result.attempts.length, 1);
  assert.equal(engine.calls.length, 1, 'no fix turn was generated');
  const outcome = outcomeMessage(result, false)!;
  assert.match(outcome.text, /Lean is missing/);
  assert.match(outcome.text, /1 attempt,/);
  assert.deepEqual(outcome.actions, ['Set Up Lean', 'Show Log']);
  assert.ok(
    shown.some((s) => s.path === 'no Lean' && s.text === 'Lean is missing'),
    'the Proof view says it',
  );
});

test('bad format and Lean errors: in words, with the file line numbers', async () => {
  // sample 1: no think block and a changed statement (no fix turn follows: the recipe filters it);
  // sample 2 and every fix turn: well formed, a proof the stand-in rejects (an unknown lemma)
  const badFormat = '```lean4\ntheorem algebra_example (x : ℝ) : x = x := by\n  rfl\n```';
  const bogus = WELL_FORMED.replaceAll('  linarith\n```', '  exact bogus_lemma h₁\n```');
  const engine = new ScriptedEngine(
    (conversation, i) => (conversation.length === 2 && i === 0 ? badFormat : bogus), // turn 1 = system + user
  );
  const conn = await face(standInReplEnv(), () => engine);
  await settledStatus(conn.client);
  const result = await proveAndCollect('bad format', conn, { line: 4, character: 2 }, 2);
  assert.ok(result);
  assert.equal(result.attempts.length, 3, "two first answers and the second sample's fix turn");
  assert.equal(result.attempts.find((a) => a.sample === 0)?.format.ok, false);
  const texts = shown.filter((s) => s.path === 'bad format').map((s) => s.text);
  assert.ok(
    texts.some((t) => /Not checked: the answer has no complete thinking block/.test(t)),
    texts.join('\n'),
  );
  // the stand-in's error on `exact bogus_lemma h₁`: its line in the user's file (the theorem starts at line 4)
  const leanError = texts.find((t) => t.startsWith('✘ Lean error'));
  assert.ok(leanError, texts.join('\n'));
  const line = Number(/at line (\d+)/.exec(leanError)?.[1]);
  assert.ok(line >= 5 && line <= 12, leanError);
  assert.ok(texts.includes('Not proved'));
  assert.ok(texts.some((t) => /could not prove algebra_example \(3 attempts\)/.test(t)));
});

test('cursor outside a theorem: an offer to pick one, not a red "Not proved"', async () => {
  const conn = await face(standInReplEnv(), () => new ScriptedEngine(() => WELL_FORMED));
  const result = await proveAndCollect('outside a theorem', conn, { line: 0, character: 0 });
  assert.ok(result);
  const outcome = outcomeMessage(result, false)!;
  assert.equal(outcome.level, 'info');
  assert.deepEqual(outcome.actions, ['Pick a Theorem']);
  const texts = shown.filter((s) => s.path === 'outside a theorem').map((s) => s.text);
  assert.ok(texts.includes('No theorem here'), texts.join('\n'));
  assert.ok(!texts.includes('Not proved'));
});

test('server errors: a malformed request and a model server that is not there', async () => {
  const conn = await face(standInReplEnv(), () => new ScriptedEngine(() => WELL_FORMED));
  try {
    await conn.client.sendRequest(lspMethods.prove, { code: FILE });
    assert.fail('a request without an id is refused');
  } catch (err) {
    const raw = (err as Error).message;
    const failed = requestFailedMessage(forEditor(raw));
    collect('server errors', [failed.text]);
  }
  const openai = await face({ KIMINA_ENGINE: 'openai', KIMINA_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' });
  const status = await settledStatus(openai.client);
  statusTexts('server errors', status);
  await proveAndCollect('server errors', openai, { line: 4, character: 2 });
});

test('no message shown on these paths has an RPC wrapper, a CLI flag or command, an env variable or a raw enum', () => {
  const paths = new Set(shown.map((s) => s.path));
  for (const p of ['no model', 'no Lean', 'bad format', 'outside a theorem', 'server errors'])
    assert.ok(paths.has(p), `${p} was collected`);
  const bad = shown
    .map((s) => ({ ...s, wrong: wrongLayer(s.text) }))
    .filter((s) => s.wrong.length > 0)
    .map((s) => `${s.path}: ${s.wrong.join(', ')} in ${JSON.stringify(s.text)}`);
  assert.deepEqual(bad, []);
});
