// End to end with the project's test doubles: the scripted ONNX model (real OnnxEngine, real tokenizer and
// chat template code; its weights make greedy decoding write fixed Kimina answers) and the stand-in REPL
// (the real verifier and REPL pool around a text-rule REPL). Path: generate -> format -> extract -> verify
// -> fix turn -> verified, through POST /v1/prove.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import type { ProveEvent, ProveResult } from '../../backend/protocol';
import { ApiClient } from '../../backend/client/apiClient';
import { OnnxEngine } from '../../backend/model/onnx/engine';
import { buildVerifier, verifierSettingsOf } from '../../backend/lean/buildVerifier';
import { readSettings } from '../../backend/settings/settings';
import { createProveRouter } from '../../backend/api/proveRoutes';
import { RunningProofs } from '../../backend/prover/running';
import { createApp, listen } from '../../backend/api/server';
import { openDb } from '../../backend/store/db';
import { AttemptStore } from '../../backend/store/attempts';
import { writeScriptedModel } from '../../backend/demo/models/scriptedModel';
import { standInReplCommand } from '../../backend/demo/stand-in-repl';
import { readFileSync } from 'node:fs';

const root = join(__dirname, '..', '..');
const EXAMPLE = readFileSync(join(root, 'examples', 'algebra_example.lean'), 'utf8');
const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];

async function scriptedEngine(variant: 'fix' | 'direct'): Promise<OnnxEngine> {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-scripted-'));
  dirs.push(dir);
  writeScriptedModel(dir, { variant });
  const engine = await OnnxEngine.load(dir, { inThread: true, threads: 1, log: () => {} });
  closers.push(() => engine.close());
  return engine;
}

function standInBuilt() {
  const built = buildVerifier({
    ...verifierSettingsOf(readSettings()),
    replCommand: standInReplCommand(),
    sandbox: 'none',
    replMemoryMb: 0,
    maxRepls: 2,
    initRepls: {},
  });
  closers.push(() => built.verifier.close());
  return built;
}

function standInVerifier() {
  const built = buildVerifier({
    ...verifierSettingsOf(readSettings()),
    replCommand: standInReplCommand(),
    sandbox: 'none',
    replMemoryMb: 0,
    maxRepls: 2,
    initRepls: {},
  });
  closers.push(() => built.verifier.close());
  return built.verifier;
}

async function serve(router: express.Router): Promise<string> {
  const app = express();
  app.use(router);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  closers.push(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

after(async () => {
  for (const close of closers.reverse()) await close();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

let url = '';
let store: AttemptStore;
before(async () => {
  store = new AttemptStore(openDb(':memory:'));
  url = await serve(
    createProveRouter(
      {
        engine: await scriptedEngine('fix'),
        verifier: standInVerifier(),
        store,
        options: { defaults: { samples: 2, fixTurns: 1, temperature: 0, topP: 1, maxTokens: 400 } },
      },
      { proofs: new RunningProofs() },
    ),
  );
});

test(
  'POST /v1/prove (SSE): wrong first answer, Lean feedback, fix turn, verified proof',
  { timeout: 60_000 },
  async () => {
    const events: ProveEvent[] = [];
    for await (const e of new ApiClient({ url }).stream('prove', { body: { code: EXAMPLE, samples: 2 } }))
      events.push(e);
    const done = events.at(-1) as Extract<ProveEvent, { type: 'done' }>;
    assert.equal(done.type, 'done');
    const result = done.result;
    assert.equal(result.status, 'proved');
    assert.equal(
      result.proof,
      'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  have h₁ : 2 * x = 8 := by linarith\n  linarith',
    );

    const first = result.attempts.filter((a) => a.turn === 1);
    assert.equal(first.length, 2);
    for (const a of first) {
      assert.equal(a.format.error, 'NONE');
      assert.equal(a.verdict?.status, 'lean_error');
      assert.ok(a.code?.endsWith('exact bogus_lemma h₁'));
      assert.ok(a.feedback?.startsWith('# Error 1:\nError message: \n'), a.feedback ?? '');
      assert.ok(a.feedback?.includes('Lean 4 code snippet with error:\n```lean4\n'));
      // The released models' numbering (default): the marker one line above the error line in this layout.
      assert.ok(
        a.feedback?.includes(' >|   have h₁ : 2 * x = 8 := by linarith\n') &&
          a.feedback.includes('  |   exact bogus_lemma h₁\n```\n'),
        a.feedback ?? '',
      );
    }
    const fixed = result.attempts.find((a) => a.turn === 2 && a.verdict?.status === 'valid');
    assert.ok(fixed, 'a fix-turn answer was verified');
    assert.equal(fixed.format.error, 'NONE', 'both turns pass the multi-turn format check');

    const stored = store.attemptsOf(result.id);
    const fixConversation = stored.find((a) => a.turn === 2)?.messages;
    assert.deepEqual(
      fixConversation?.map((m) => m.role),
      ['system', 'user', 'assistant', 'user'],
    );
    assert.equal(fixConversation?.[3].content, first[0].feedback);
    assert.ok(
      fixConversation?.[1].content.includes(
        '# Problem:\nGiven that $2x + 3 = 11$ for a real number $x$, show that $x = 4$.\n',
      ),
    );
    assert.ok(events.some((e) => e.type === 'think') && events.some((e) => e.type === 'progress'));
  },
);

test(
  'POST /v1/prove (JSON) with a model that is right the first time: one turn, no fix',
  { timeout: 60_000 },
  async () => {
    const direct = await serve(
      createProveRouter(
        { engine: await scriptedEngine('direct'), verifier: standInVerifier() },
        { proofs: new RunningProofs() },
      ),
    );
    const res = await fetch(`${direct}/v1/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: EXAMPLE, samples: 1, temperature: 0 }),
    });
    const result = (await res.json()) as ProveResult;
    assert.equal(result.status, 'proved');
    assert.deepEqual(
      result.attempts.map((a) => [a.turn, a.verdict?.status]),
      [[1, 'valid']],
    );
  },
);

test(
  'mounted in the server app (createApp): its body reader and the prove router work together',
  { timeout: 60_000 },
  async () => {
    const verifier = standInBuilt().verifier;
    const engine = await scriptedEngine('fix');
    const app = await createApp({ verifier }, [
      (ctx) => createProveRouter({ engine, verifier: ctx.verifier }, { proofs: new RunningProofs() }),
    ]);
    const listening = await listen(app, '127.0.0.1', 0, undefined);
    closers.push(() => listening.close());
    const res = await fetch(`${listening.url}/v1/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: EXAMPLE, samples: 1, temperature: 0 }),
    });
    assert.equal(res.status, 200);
    const result = (await res.json()) as ProveResult;
    assert.equal(result.status, 'proved');
    assert.deepEqual(
      result.attempts.map((a) => [a.turn, a.verdict?.status]),
      [
        [1, 'lean_error'],
        [2, 'valid'],
      ],
    );
    const bad = await fetch(`${listening.url}/v1/prove`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ code: EXAMPLE, samples: 0 }),
    });
    assert.equal(bad.status, 422);
  },
);
