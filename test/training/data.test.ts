// Personal proofs and the prompt set: harvesting Lean files and the prover's history, deduplication, the
// stable held-out split, win-rate estimation (scripted engine and scorer TEST DOUBLES) and filtering.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TrainingPrompt } from '../../backend/protocol';
import { openDb } from '../../backend/store/db';
import { AttemptStore } from '../../backend/store/attempts';
import { harvestAttempts, harvestWorkspace, promptsFromSource } from '../../backend/training/harvest';
import {
  estimateWinRates,
  filterByWinRate,
  splitFraction,
  splitHeldOut,
  trainerRows,
} from '../../backend/training/promptSet';

const SOURCE = `import Mathlib

open Real

/-- The sum of two even numbers is even. -/
theorem even_add (a b : ℕ) (ha : Even a) (hb : Even b) : Even (a + b) := by
  sorry

theorem proven_one (n : ℕ) : n + 0 = n := by
  simp

def helper : ℕ := 3

example : True := by trivial
`;

test('a Lean file gives one prompt per theorem: sorry ones open, proven ones known provable; defs and examples skipped', () => {
  const prompts = promptsFromSource(SOURCE, 'A.lean');
  assert.deepEqual(
    prompts.map((p) => [p.source, p.status]),
    [
      ['A.lean:6 even_add', 'open'],
      ['A.lean:9 proven_one', 'proven'],
    ],
  );
  const first = prompts[0];
  assert.equal(
    first.formalStatement,
    'import Mathlib\n\nopen Real\n\ntheorem even_add (a b : ℕ) (ha : Even a) (hb : Even b) : Even (a + b) := by',
  );
  assert.equal(first.prompt[0].content, 'You are an expert in mathematics and proving theorems in Lean 4.');
  assert.match(
    first.prompt[1].content,
    /# Problem:\nThe sum of two even numbers is even\.\n\n# Formal Statement:\n```lean4\nimport Mathlib/,
  );
});

test('workspace harvest walks .lean files, skips .lake and build, and deduplicates statements', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-harvest-'));
  try {
    mkdirSync(join(dir, 'Sub'), { recursive: true });
    mkdirSync(join(dir, '.lake', 'packages'), { recursive: true });
    writeFileSync(join(dir, 'A.lean'), SOURCE);
    writeFileSync(join(dir, 'Sub', 'B.lean'), SOURCE.replace('proven_one', 'proven_two'));
    writeFileSync(join(dir, '.lake', 'packages', 'C.lean'), SOURCE.replace('even_add', 'from_dependency'));
    writeFileSync(join(dir, 'notes.txt'), 'theorem x : True := by sorry');
    const h = await harvestWorkspace(dir);
    assert.equal(h.files, 2);
    assert.deepEqual(h.prompts.map((p) => p.source).sort(), [
      'A.lean:6 even_add',
      'A.lean:9 proven_one',
      'Sub/B.lean:9 proven_two',
    ]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('attempt history: prompts per run, failed first answers with feedback become fix seeds', () => {
  const db = openDb(':memory:');
  const store = new AttemptStore(db);
  const statement = 'import Mathlib\n\ntheorem t (x : ℕ) : x = x := by';
  store.startRun({ id: 'r1', theorem: 't', statement, informal: '', engine: 'onnx', model: 'm', settings: {} });
  const messages = [
    { role: 'system' as const, content: 's' },
    { role: 'user' as const, content: 'u' },
  ];
  const verdict = (status: 'lean_error' | 'valid' | 'sorry') => ({
    status,
    reason: '',
    messages: [],
    sorries: [],
    time: 0,
  });
  store.recordAttempt('r1', messages, {
    sample: 0,
    turn: 1,
    response: 'bad answer',
    think: '',
    code: 'c',
    format: { ok: true, error: 'NONE' },
    verdict: verdict('lean_error'),
    feedback: '# Error 1:\nboom\n',
  });
  store.recordAttempt('r1', messages, {
    sample: 1,
    turn: 1,
    response: 'good',
    think: '',
    code: 'c',
    format: { ok: true, error: 'NONE' },
    verdict: verdict('valid'),
    feedback: null,
  });
  // A sorry-only failure has an empty feedback, which the recipe keeps as a fix prompt.
  store.recordAttempt('r1', messages, {
    sample: 2,
    turn: 1,
    response: 'sorry answer',
    think: '',
    code: 'c',
    format: { ok: true, error: 'NONE' },
    verdict: verdict('sorry'),
    feedback: '',
  });
  store.finishRun('r1', 'proved', 'c');
  const h = harvestAttempts(store);
  assert.equal(h.prompts.length, 1);
  assert.equal(h.prompts[0].status, 'proven');
  assert.equal(h.fixSeeds.length, 2);
  assert.deepEqual(
    h.fixSeeds[0].prompt.map((m) => m.role),
    ['system', 'user', 'assistant', 'user'],
  );
  assert.equal(h.fixSeeds[0].prompt[3].content, '# Error 1:\nboom\n');
  assert.equal(h.fixSeeds[1].prompt[3].content, '');
  db.close();
});

const P = (i: number): TrainingPrompt => ({
  id: `p${i}`,
  prompt: [{ role: 'user', content: String(i) }],
  formalStatement: `theorem t${i} : ${i} = ${i} := by`,
});

test('held-out split is stable per statement and never leaves training empty', () => {
  const prompts = Array.from({ length: 200 }, (_, i) => P(i));
  const a = splitHeldOut(prompts, 0.1);
  const b = splitHeldOut([...prompts].reverse(), 0.1);
  assert.deepEqual(new Set(a.heldOut.map((p) => p.id)), new Set(b.heldOut.map((p) => p.id)));
  assert.ok(a.heldOut.length > 5 && a.heldOut.length < 40, String(a.heldOut.length));
  assert.equal(splitFraction('theorem x  :\n True'), splitFraction('theorem x : True'), 'whitespace does not matter');
  const all = splitHeldOut([P(1)], 0.99);
  assert.equal(all.train.length, 1);
});

test('win rates from k samples; easy prompts dropped, never-won ones duplicated', async () => {
  // TEST DOUBLES: an engine that answers "win" for prompt 0 always, half the time for prompt 1, never for prompt 2,
  // and a scorer that scores "win" 1.
  let call = 0;
  const engine = {
    generate: async (convs: { content: string }[][]) =>
      convs.map((c, i) => {
        const n = Number(c[0].content);
        const win = n === 0 || (n === 1 && (call + i) % 2 === 0);
        return { text: win ? 'win' : 'lose', tokens: 1, finishReason: 'stop' as const };
      }),
  };
  const scorer = async (items: { response: string }[]) =>
    items.map((it) => ({
      score: it.response === 'win' ? 1 : 0,
      acc: 0,
      formatError: 'NONE' as const,
      formatErrorText: 'No error.',
      verdict: null,
      feedback: null,
      code: null,
      think: '',
    }));
  const prompts = [P(0), P(1), P(2)];
  const rates = await estimateWinRates(prompts, {
    engine,
    scorer,
    samples: 4,
    sampling: { maxTokens: 8, temperature: 1, topP: 1 },
  });
  call++;
  assert.deepEqual(rates, [1, 0.5, 0]);
  const kept = filterByWinRate(prompts, rates, { maxWinRate: 0.5, hardCopies: 2 });
  assert.deepEqual(
    kept.map((p) => [p.id, p.winRate]),
    [
      ['p1', 0.5],
      ['p2', 0],
      ['p2#2', 0],
    ],
  );
  assert.throws(() => filterByWinRate(prompts, [1], { maxWinRate: 0.5, hardCopies: 1 }), /1 win rates for 3 prompts/);
  const rows = trainerRows(kept)
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(Object.keys(rows[0]).sort(), ['formal_statement', 'prompt', 'prompt_id']);
});
