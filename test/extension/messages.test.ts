// Every message the extension shows on the failure paths, collected from the real extension code and checked
// for words from the wrong layer: a JSON-RPC wrapper ("Request kimina/prove failed with message: …"), a
// command-line flag or command, an environment variable, a raw enum name, or a path or word of the sandbox and
// the backend's internals. The extension's parts run as main.ts wires them (ProofRunner, ProofView, Proposals,
// the commands, the status bar, the first-run guidance, setup) on the vscode TEST DOUBLE, which records every
// information / warning / error message with its buttons, every status bar text and tooltip, every progress
// notification and every message posted to the Proof view; their backend is the real language-server face and
// the real backend parts (model store, REPL pool, prove loop) in this process (faceCtx.ts). TEST DOUBLES: the
// scripted engine of test/prover/doubles.ts (fixed answers, no model) and the stand-in REPL (text rules, not
// Lean) where Lean's answer is not the point; a `lake` script that fails as a sandbox that cannot find lake does.
import './useVscodeDouble';
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import * as vscode from 'vscode';
import { App } from '../../backend/app/app';
import { readSettings } from '../../backend/settings/settings';
import { createInProcessService } from '../../backend/editor/inProcess';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';
import { WELL_FORMED } from '../../backend/demo/kiminaExamples';
import { ScriptedEngine } from '../prover/doubles';
import { connectFace, type FaceClient } from '../api/faceClient';
import { double } from './vscodeDouble';
import { FaceCtx } from './faceCtx';
import { until } from './parts';
import { forEditor } from '../../extension/words';
import { registerCommands } from '../../extension/commands';
import { ProvedMarks } from '../../extension/decorations';
import { ProofRunner } from '../../extension/proofRunner';
import { ProofView } from '../../extension/proofView';
import { Proposals } from '../../extension/proposal';
import { Repairs } from '../../extension/repair';
import { watchSetup } from '../../extension/setup';
import { createStatusBar } from '../../extension/statusBar';
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

/**
 * Words and paths of the sandbox and the backend's internals: the sandbox wrappers and their errors, a child's
 * exit code or spawn error, the scratch folders and snippet file of a check, the extension's own install.
 */
const internals =
  /\b(?:unshare|bwrap|execvp|prlimit)\b|exited with code \d+|\bspawn \S+ E[A-Z]+\b|\bE(?:NOENT|ACCES)\b|kimina-(?:lean|repl)-\w+|Snippet\.lean|node_modules|\/dist\/(?:cli|server)\.js/g;

/** What is wrong with one shown text, in words (empty: nothing). */
function wrongLayer(text: string): string[] {
  const found: string[] = [];
  if (/Request [\w/$.-]+ failed/.test(text)) found.push('an RPC wrapper');
  if (/(?:^|[\s(`'"])--[a-z][\w-]*/.test(text)) found.push('a command-line flag');
  if (/\bkimina (?:model|lean|trainer|prove|check|serve|lsp|eval)\b/.test(text)) found.push('a CLI command');
  for (const m of text.match(/\b[A-Z][A-Z0-9]*_[A-Z0-9_]+\b/g) ?? [])
    found.push(formatEnums.includes(m) ? `the raw enum ${m}` : `the environment variable ${m}`);
  for (const e of otherEnums) if (new RegExp(`\\b${e}\\b`).test(text)) found.push(`the raw enum ${e}`);
  for (const m of text.match(/\$[A-Z_][A-Z0-9_]*\b/g) ?? []) found.push(`the environment variable ${m}`);
  for (const m of text.match(internals) ?? []) found.push(`the internals' ${JSON.stringify(m)}`);
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
  assert.deepEqual(wrongLayer('server_error: spawn lake ENOENT'), [
    'the raw enum server_error',
    'the internals\' "spawn lake ENOENT"',
  ]);
  assert.deepEqual(wrongLayer('set $KIMINA_HOME first'), [
    'the environment variable KIMINA_HOME',
    'the environment variable $KIMINA_HOME',
  ]);
  assert.deepEqual(wrongLayer('Lean exited with code 127: unshare: failed to execute lake'), [
    'the internals\' "exited with code 127"',
    'the internals\' "unshare"',
  ]);
  assert.deepEqual(wrongLayer('could not open /tmp/kimina-lean-Ab12/Snippet.lean'), [
    'the internals\' "kimina-lean-Ab12"',
    'the internals\' "Snippet.lean"',
  ]);
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
// The face itself reads this process's environment (its setup requests: Pull Model, Set Up Lean): never the
// user's ~/.kimina, never the network.
const faceHome = mkdtempSync(join(tmpdir(), 'kimina-messages-face-'));
dirs.push(faceHome);
const savedEnv = { KIMINA_HOME: process.env.KIMINA_HOME, HF_HUB_OFFLINE: process.env.HF_HUB_OFFLINE };
process.env.KIMINA_HOME = faceHome;
process.env.HF_HUB_OFFLINE = '1';
after(async () => {
  for (const f of faces) await f.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** Every text the user was shown on one path: notifications with their buttons, status bar, progress, Proof view. */
const shown: { path: string; text: string }[] = [];
function collect(path: string, texts: (string | undefined)[]): void {
  for (const text of texts) if (text) shown.push({ path, text });
}

/** What the vscode double recorded since the path's extension started, as the user saw it. */
function collectShown(path: string): string[] {
  const from = shown.length;
  for (const m of double.messages) collect(path, [m.text, ...m.items]);
  for (const item of Object.values(double.statusBar)) collect(path, [...item.history, ...item.tooltips]);
  for (const p of double.progress) collect(path, [p.options.title, ...p.reports]);
  const posted = (double.posted['kimina.proofView'] ?? []) as ToView[];
  // every state the view went through (a failure later replaced by a note was still seen)
  let state = emptyState();
  for (const m of posted) {
    state = reduce(state, m);
    collect(path, viewTexts(state, Date.now()));
  }
  return [...new Set(shown.slice(from).map((s) => s.text))];
}

interface Setup {
  /** Environment of the in-process backend (readSettings), over a fresh KIMINA_HOME and Lean project. */
  env?: Record<string, string>;
  engine?: () => ScriptedEngine;
  /** kimina.* settings of the editor (the vscode double's configuration). */
  settings?: Record<string, unknown>;
}

/** The extension as main.ts wires it, on the real face and backend in this process; the file open at `line`. */
async function extension({ env = {}, engine, settings = {} }: Setup) {
  double.reset();
  Object.assign(double.settings, { 'kimina.samples': 1, 'kimina.fixTurns': 1, ...settings });
  const dir = mkdtempSync(join(tmpdir(), 'kimina-messages-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'lean-toolchain'), 'leanprover/lean4:v4.24.0\n');
  const backendSettings = readSettings({
    KIMINA_HOME: dir,
    KIMINA_DB: join(dir, 'kimina.db'),
    KIMINA_LEAN_PROJECT: dir,
    KIMINA_SANDBOX: 'none',
    KIMINA_REPL_MEMORY_MB: '0',
    KIMINA_MAX_REPLS: '1',
    PATH: process.env.PATH ?? '',
    ...env,
  });
  const face = await connectFace(() =>
    createInProcessService(
      new App({ settings: backendSettings, log: () => {}, ...(engine ? { loadEngine: async () => engine() } : {}) }),
      () => {},
    ),
  );
  faces.push(face);
  const context = {
    extensionUri: vscode.Uri.file('/extension'),
    subscriptions: [],
  } as unknown as vscode.ExtensionContext;
  const ctx = new FaceCtx(face);
  const view = new ProofView(context);
  const proposals = new Proposals();
  const marks = new ProvedMarks(context);
  const runner = new ProofRunner(ctx, view, proposals, marks);
  const repairs = new Repairs(ctx, runner, proposals);
  createStatusBar(ctx.onStatus, ctx.currentStatus);
  watchSetup(ctx, () => runner.busy);
  registerCommands(context, ctx, runner, view, proposals, repairs);
  await ctx.start();
  const doc = double.open(join(dir, 'Algebra.lean'), FILE);
  /** Runs a command with the cursor at a 0-based line, as the user does from the palette. */
  const run = async (command: string, line: number, character = 0) => {
    double.focus(doc, new vscode.Position(line, character));
    return vscode.commands.executeCommand(command);
  };
  return { ctx, runner, view, doc, dir, run };
}

/** Lets the buttons' handlers (promise chains after a message resolves) finish. */
const settle = () => new Promise((r) => setTimeout(r, 50));

test('no model: the status, the guidance and the failed proof name the Pull Model button and the setting', async () => {
  const { ctx, runner, run } = await extension({
    env: { KIMINA_MODEL: 'kimina-test/absent-model', HF_HUB_OFFLINE: '1' },
  });
  assert.equal(ctx.currentStatus.state, 'error');
  assert.equal(ctx.currentStatus.setup?.model, true);
  assert.match(double.statusBar['kimina.status'].text, /model missing/);
  // the first-run guidance at start
  assert.match(double.messages[0].text, /^Kimina needs a model/);
  assert.deepEqual(double.messages[0].items.slice(0, 1), ['Pull Model']);
  // proving: the request fails; the guidance comes again with its buttons; the user presses Pull Model, which
  // asks for a model id and fails offline
  double.answers.push({ match: /^Kimina needs a model/, item: 'Pull Model' });
  double.answers.push({ match: /^Kimina: Pull Model$/, item: 'kimina-test/absent-model' });
  const result = await run('kimina.proveTheorem', 4, 2);
  assert.equal(result, undefined, 'the prove request fails without a model');
  assert.equal(runner.busy, false);
  await until(() => double.messages.some((m) => /^Kimina: pulling .* failed: /.test(m.text)), 'the pull fails');
  const texts = collectShown('no model');
  assert.ok(texts.includes('Pull Model'), texts.join('\n'));
  assert.ok(
    texts.some((t) => /^Kimina: pulling kimina-test\/absent-model failed: Hugging Face offline mode is on/.test(t)),
    texts.join('\n'),
  );
});

test('no Lean: one attempt, no fix turn, "Lean is missing" with Set Up Lean (which asks for a project)', async () => {
  const engine = new ScriptedEngine(() => WELL_FORMED);
  const { run } = await extension({
    env: { KIMINA_REPL_COMMAND: '/nonexistent/kimina-test-lean-repl' },
    engine: () => engine,
  });
  double.answers.push({ match: /Lean is missing/, item: 'Set Up Lean' });
  const result = (await run('kimina.proveTheorem', 4, 2)) as { status: string; attempts: unknown[] } | undefined;
  assert.ok(result);
  assert.equal(result.status, 'not_proved');
  assert.equal(result.attempts.length, 1);
  assert.equal(engine.calls.length, 1, 'no fix turn was generated');
  await until(() => double.messages.some((m) => /open a Lean project folder/.test(m.text)), 'Set Up Lean asks');
  const texts = collectShown('no Lean');
  const outcome = double.messages.find((m) => /Lean is missing/.test(m.text))!;
  assert.equal(outcome.level, 'error');
  assert.match(outcome.text, /1 attempt,/);
  assert.deepEqual(outcome.items, ['Set Up Lean', 'Show Log']);
  assert.ok(texts.includes('Lean is missing'), 'the Proof view says it');
  assert.ok(
    texts.some((t) => t.includes('The Lean REPL could not be started: `kimina-test-lean-repl` was not found.')),
    texts.join('\n'),
  );
});

test('no Lean at all (no REPL, no lake, no elan): the status and the guidance name Lean; proving stops at once', async () => {
  const path = (process.env.PATH ?? '')
    .split(delimiter)
    .filter((d) => d && !existsSync(join(d, 'lake')))
    .join(delimiter);
  const home = mkdtempSync(join(tmpdir(), 'kimina-messages-home-'));
  dirs.push(home);
  const engine = new ScriptedEngine(() => WELL_FORMED);
  const { ctx, run } = await extension({ env: { PATH: path, HOME: home }, engine: () => engine });
  assert.equal(ctx.currentStatus.setup?.lean, true, JSON.stringify(ctx.currentStatus));
  assert.match(double.statusBar['kimina.status'].text, /Lean missing/);
  assert.match(double.messages[0].text, /^Kimina needs Lean/);
  const result = (await run('kimina.proveTheorem', 4, 2)) as { verifierFailure?: { leanMissing: boolean } };
  assert.equal(result.verifierFailure?.leanMissing, true, JSON.stringify(result.verifierFailure));
  assert.equal(engine.calls.length, 1, 'no fix turn');
  await settle();
  const texts = collectShown('no Lean at all');
  assert.ok(texts.includes('Lean is missing'), texts.join('\n'));
  assert.ok(
    texts.some((t) => t.includes('Lean could not be started: `lake` was not found')),
    texts.join('\n'),
  );
});

test("Lean that a sandbox cannot start: Lean is missing, in words without the sandbox's", async () => {
  // a `lake` that fails as `unshare --net -- lake env repl` does when the sandbox cannot find lake
  const bin = mkdtempSync(join(tmpdir(), 'kimina-messages-bin-'));
  dirs.push(bin);
  mkdirSync(join(bin, 'toolchain'));
  const lake = join(bin, 'toolchain', 'lake');
  writeFileSync(lake, '#!/bin/sh\necho "unshare: failed to execute lake: No such file or directory" >&2\nexit 127\n');
  chmodSync(lake, 0o755);
  const engine = new ScriptedEngine(() => WELL_FORMED);
  const { run } = await extension({ env: { KIMINA_REPL_COMMAND: `${lake} env repl` }, engine: () => engine });
  const result = (await run('kimina.proveTheorem', 4, 2)) as { verifierFailure?: { leanMissing: boolean } };
  assert.equal(result.verifierFailure?.leanMissing, true, JSON.stringify(result.verifierFailure));
  assert.equal(engine.calls.length, 1, 'no fix turn');
  const texts = collectShown('sandbox without lake');
  assert.ok(texts.includes('Lean is missing'), texts.join('\n'));
  assert.ok(
    texts.some((t) => t.includes('could not be started: `lake` was not found')),
    texts.join('\n'),
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
  const { run } = await extension({ env: standInReplEnv(), engine: () => engine, settings: { 'kimina.samples': 2 } });
  const result = (await run('kimina.proveTheorem', 4, 2)) as {
    attempts: { sample: number; format: { ok: boolean } }[];
  };
  assert.equal(result.attempts.length, 3, "two first answers and the second sample's fix turn");
  assert.equal(result.attempts.find((a) => a.sample === 0)?.format.ok, false);
  await settle();
  const texts = collectShown('bad format');
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
  const { run } = await extension({ env: standInReplEnv(), engine: () => new ScriptedEngine(() => WELL_FORMED) });
  await run('kimina.proveTheorem', 0, 0);
  await settle();
  const texts = collectShown('outside a theorem');
  const offer = double.messages.find((m) => m.items.includes('Pick a Theorem'));
  assert.ok(offer, texts.join('\n'));
  assert.equal(offer.level, 'info');
  assert.ok(texts.includes('No theorem here'), texts.join('\n'));
  assert.ok(!texts.includes('Not proved'));
});

test('commands with nothing to act on, and an editor that is no file on disk, say so', async () => {
  await extension({ env: standInReplEnv(), engine: () => new ScriptedEngine(() => WELL_FORMED) });
  double.activeTextEditor = undefined;
  for (const command of [
    'kimina.cancel',
    'kimina.retry',
    'kimina.acceptProof',
    'kimina.showAttempts',
    'kimina.proveTheorem',
    'kimina.proveAllSorries',
    'kimina.setupLean',
  ])
    await vscode.commands.executeCommand(command);
  const untitled = await vscode.workspace.openTextDocument({ language: 'lean4', content: FILE });
  double.focus(untitled, new vscode.Position(4, 2));
  await vscode.commands.executeCommand('kimina.proveTheorem');
  await settle();
  const texts = collectShown('nothing to act on');
  assert.ok(double.messages.length >= 8, texts.join('\n'));
});

test('server errors: a model server that is not there, then one that fails mid-proof', async () => {
  const { run } = await extension({
    env: { ...standInReplEnv(), KIMINA_ENGINE: 'openai', KIMINA_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
  });
  await run('kimina.proveTheorem', 4, 2);
  await settle();
  collectShown('server errors');
  // the engine throws while generating (a server error inside the prove loop)
  const failing = new ScriptedEngine(() => {
    throw new Error('upstream model server answered 500 Internal Server Error');
  });
  const again = await extension({ env: standInReplEnv(), engine: () => failing });
  await again.run('kimina.proveTheorem', 4, 2);
  await settle();
  const texts = collectShown('server errors');
  assert.ok(
    double.messages.some((m) => m.level === 'error' || m.level === 'warning' || m.level === 'info'),
    texts.join('\n'),
  );
});

test('no message shown on these paths has an RPC wrapper, a CLI flag or command, an env variable, a raw enum or internals', () => {
  const paths = new Set(shown.map((s) => s.path));
  for (const p of [
    'no model',
    'no Lean',
    'no Lean at all',
    'sandbox without lake',
    'bad format',
    'outside a theorem',
    'server errors',
  ])
    assert.ok(paths.has(p), `${p} was collected`);
  const bad = shown
    .map((s) => ({ ...s, wrong: wrongLayer(s.text) }))
    .filter((s) => s.wrong.length > 0)
    .map((s) => `${s.path}: ${s.wrong.join(', ')} in ${JSON.stringify(s.text)}`);
  assert.deepEqual([...new Set(bad)], []);
});
