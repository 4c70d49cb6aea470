// Repairing broken proofs: the real prove loop in repair mode, the real verifier over the stand-in REPL (a TEST
// DOUBLE for Lean: text rules; its deprecated names give Lean's deprecation warning and an error) and a scripted
// engine (a TEST DOUBLE for the model: repairDoubles.ts applies the renames the feedback names).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage, LspProveEvent } from '../../backend/protocol';
import { prove } from '../../backend/prover/prove';
import { checkAnswer } from '../../backend/prover/format';
import { renameOf, userAnswer } from '../../backend/prover/repair';
import { findBroken, brokenFrom } from '../../backend/editor/editorRepair';
import { proveInEditor } from '../../backend/editor/editorProve';
import { applyEdit } from '../../backend/editor/splice';
import { offsetAt } from '../../backend/editor/leanSource';
import type { ProveService } from '../../backend/editor/service';
import { ScriptedEngine } from '../prover/doubles';
import { standInVerifier, type StandInSetup } from '../lean/standInVerifier';
import { BROKEN_FILE, repairAnswer } from './repairDoubles';

let lean: StandInSetup;
before(() => {
  lean = standInVerifier();
});
after(async () => {
  await lean.pool.close();
});

function service(engine: ScriptedEngine, options = {}): ProveService {
  const deps = { engine, verifier: lean.verifier, options };
  return {
    kind: 'in-process',
    describe: async () => ({}),
    prove: (req, onEvent, signal) => prove(req, deps, onEvent, signal),
    check: (code, signal) => lean.verifier.check(code, { signal }),
    close: async () => {},
  };
}

test('the stand-in names the replacement; every broken declaration is found, with its rename', async () => {
  const found = await findBroken({ uri: 'file:///R.lean', code: BROKEN_FILE }, (c, s) =>
    lean.verifier.check(c, { signal: s }),
  );
  assert.equal(found.source, 'check');
  assert.equal(found.problem, undefined);
  assert.deepEqual(
    found.declarations.map((d) => [d.name, d.range.start.line, d.renames]),
    [
      ['ratio_one', 2, [{ from: 'div_le_iff', to: 'div_le_iff₀' }]],
      ['ratio_two', 6, [{ from: 'div_le_iff', to: 'div_le_iff₀' }]],
      ['ratio_three', 10, [{ from: 'div_le_iff', to: 'div_le_iff₀' }]],
    ],
  );
  const warning = found.diagnostics.find((d) => d.severity === 'warning');
  assert.equal(warning?.message, '`div_le_iff` has been deprecated: Use `div_le_iff₀` instead');
  // the client's diagnostics (vscode-lean4, simulated) say the same without a check
  const client = brokenFrom(BROKEN_FILE, [
    {
      range: { start: { line: 7, character: 2 }, end: { line: 7, character: 9 } },
      severity: 'error',
      message: 'unsolved goals',
    },
  ]);
  assert.deepEqual(
    client.map((d) => d.name),
    ['ratio_two'],
  );
});

test("the user's proof as the assistant turn is well formed; the deprecation text is read in both Lean styles", () => {
  const code = 'import Mathlib\n\ntheorem t (x : ℕ) : x = x := by\n  rfl';
  const answer = userAnswer(code);
  assert.equal(checkAnswer(answer, 'import Mathlib\n\ntheorem t (x : ℕ) : x = x := by').error, 'NONE');
  assert.ok(answer.endsWith('```lean4\n' + code + '\n```'));
  const at = { line: 1, column: 0 };
  assert.deepEqual(
    renameOf({ severity: 'warning', pos: at, endPos: null, data: '`a` has been deprecated: Use `b` instead' }),
    {
      from: 'a',
      to: 'b',
    },
  );
  assert.deepEqual(
    renameOf({ severity: 'warning', pos: at, endPos: null, data: '`a` has been deprecated, use `b` instead' }),
    {
      from: 'a',
      to: 'b',
    },
  );
  assert.equal(renameOf({ severity: 'warning', pos: at, endPos: null, data: '`a` has been deprecated' }), null);
});

test('Repair with Kimina: the fix turn holds the user proof and Lean messages; only a verified in-place repair is proposed', async () => {
  const engine = new ScriptedEngine((c) => repairAnswer(c));
  const events: LspProveEvent[] = [];
  const result = await proveInEditor(
    {
      id: 'r1',
      uri: 'file:///R.lean',
      code: BROKEN_FILE,
      position: { line: 7, character: 0 },
      mode: 'repair',
      samples: 1,
    },
    BROKEN_FILE,
    service(engine),
    (e) => events.push(e),
    new AbortController().signal,
  );
  assert.equal(result.status, 'proved', result.problem);
  assert.equal(result.mode, 'repair');
  // one model call: [system, user, assistant(the user's proof), user(Lean's messages)]
  assert.equal(engine.calls.length, 1);
  const sent: ChatMessage[] = engine.calls[0].conversations[0];
  assert.deepEqual(
    sent.map((m) => m.role),
    ['system', 'user', 'assistant', 'user'],
  );
  assert.match(sent[1].content, /theorem ratio_two .*:= by\n```\n$/);
  assert.ok(!sent[1].content.includes('ratio_one'), 'the other broken proofs stay out of the statement');
  assert.match(
    sent[2].content,
    /```lean4\nimport Mathlib\n\ntheorem ratio_two[^\n]*:= by\n {2}rw \[div_le_iff hc\]\n {2}nlinarith\n```$/,
  );
  assert.match(sent[3].content, /^# Error 1:\n[\s\S]*Error message: \nunsolved goals\n/);
  assert.match(sent[3].content, /# Error 2:\n[\s\S]*`div_le_iff` has been deprecated: Use `div_le_iff₀` instead/);
  assert.equal(result.repair?.messagesShown, 2);
  assert.equal(result.repair?.rounds, 1);
  // turn 1 is the user's own proof, marked as such; the model's answer is turn 2
  assert.deepEqual(
    result.attempts.map((a) => [a.turn, a.user === true, a.verdict?.status]),
    [
      [1, true, 'lean_error'],
      [2, false, 'valid'],
    ],
  );
  assert.ok(events.some((e) => e.type === 'stage' && /in place/.test((e as { message: string }).message)));
  // the edit touches ratio_two's body only
  const after = applyEdit(BROKEN_FILE, result.edit!, (l, c) => offsetAt(BROKEN_FILE, l, c));
  assert.equal(after, BROKEN_FILE.replace('div_le_iff hc]\n  nlinarith', 'div_le_iff₀ hc]\n  nlinarith'));
});

test('a repair that Lean still rejects is not proposed; later rounds are fresh samples of the same fix turn', async () => {
  // a "model" that answers the user's proof unchanged
  const engine = new ScriptedEngine((c) => userAnswer(/```lean4\n([\s\S]*?)\n```/.exec(c[2].content)![1]));
  const result = await proveInEditor(
    { id: 'r2', code: BROKEN_FILE, position: { line: 3, character: 0 }, mode: 'repair', samples: 2, fixTurns: 2 },
    BROKEN_FILE,
    service(engine),
    () => {},
    new AbortController().signal,
  );
  assert.equal(result.status, 'not_proved');
  assert.equal(result.edit, null);
  assert.equal(result.repair?.rounds, 3);
  assert.equal(engine.calls.length, 3);
  for (const call of engine.calls) {
    assert.equal(call.conversations.length, 2);
    for (const c of call.conversations) assert.deepEqual(c, engine.calls[0].conversations[0]);
  }
  assert.ok(result.attempts.filter((a) => !a.user).every((a) => a.turn === 2 && a.fixSkipped === 'exceed_max_turn'));
});

test('nothing is sent when the proof checks, or when the fix turn is over the prompt limit even shortened', async () => {
  const engine = new ScriptedEngine((c) => repairAnswer(c));
  const fixed = BROKEN_FILE.replaceAll('div_le_iff hc', 'div_le_iff₀ hc');
  const ok = await proveInEditor(
    { id: 'r3', code: fixed, position: { line: 3, character: 0 }, mode: 'repair', samples: 1 },
    fixed,
    service(engine),
    () => {},
    new AbortController().signal,
  );
  assert.equal(ok.status, 'not_proved');
  assert.match(ok.problem ?? '', /Lean accepts the proof/);
  const long = await proveInEditor(
    { id: 'r4', code: BROKEN_FILE, position: { line: 3, character: 0 }, mode: 'repair', samples: 1 },
    BROKEN_FILE,
    service(engine, { maxPromptTokens: 100 }),
    () => {},
    new AbortController().signal,
  );
  assert.equal(long.status, 'not_proved');
  assert.match(long.problem ?? '', /does not fit.*tokens/);
  assert.equal(engine.calls.length, 0);
});

test('a verified repair is a personal training prompt; the broken proof with its feedback is a fix seed', async () => {
  const { openDb } = await import('../../backend/store/db');
  const { AttemptStore } = await import('../../backend/store/attempts');
  const { harvestAttempts } = await import('../../backend/training/harvest');
  const store = new AttemptStore(openDb(':memory:'));
  const engine = new ScriptedEngine((c) => repairAnswer(c));
  const code = BROKEN_FILE.split('\n\ntheorem ratio_two')[0] + '\n';
  const result = await prove({ code, repair: true, samples: 1 }, { engine, verifier: lean.verifier, store });
  assert.equal(result.status, 'proved');
  const harvest = harvestAttempts(store);
  assert.equal(harvest.prompts.length, 1);
  assert.equal(harvest.prompts[0].status, 'proven');
  assert.match(harvest.prompts[0].formalStatement, /theorem ratio_one .*:= by$/);
  assert.equal(harvest.fixSeeds.length, 1);
  assert.deepEqual(harvest.fixSeeds[0].prompt, engine.calls[0].conversations[0]);
});
