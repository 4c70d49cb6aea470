// The reward service: format reward x strict Lean verdict over the stand-in REPL (TEST DOUBLE for Lean), its
// metrics, and the HTTP routes the trainer and verl's reward module call.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RewardItem, RewardResponse } from '../../backend/protocol';
import { createApp, listen, type Listening } from '../../backend/api/server';
import { trainingRouterOf } from '../../backend/api/trainingMount';
import { buildVerifier, verifierSettingsOf, type BuiltVerifier } from '../../backend/lean/buildVerifier';
import { readSettings } from '../../backend/settings/settings';
import { openDb } from '../../backend/store/db';
import { TrainingStore } from '../../backend/store/training';
import { AttemptStore } from '../../backend/store/attempts';
import { openTrainingService, type TrainingService } from '../../backend/training/service';
import { leanRewardScorer, rewardMetrics } from '../../backend/training/rewardService';
import { standInReplCommand } from '../../backend/demo/stand-in-repl';

const STATEMENT = 'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  sorry';
const GOOD = [
  '<think>',
  'The hypothesis is linear in x, so subtracting 3 and halving should give the claim.',
  '',
  '```tactics',
  'theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by',
  '  have h₁ : 2 * x = 8 := by linarith',
  '```',
  '',
  '```tactics',
  '  have h₁ : 2 * x = 8 := by linarith',
  '  linarith',
  '```',
  '</think>',
  'Isolate 2x, then finish with linear arithmetic.',
  '',
  '```lean4',
  'import Mathlib',
  '',
  'theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by',
  '  have h₁ : 2 * x = 8 := by linarith',
  '  linarith',
  '```',
].join('\n');
const WRONG_LEMMA = GOOD.replaceAll('  linarith\n```', '  exact bogus_lemma\n```');
const NO_THINK = GOOD.replace('<think>\n', '');
const NO_CODE = '<think>\nno idea\n</think>\nI give up.';

const item = (response: string, extra: Partial<RewardItem> = {}): RewardItem => ({
  promptId: 'p',
  turn: 1,
  formalStatement: STATEMENT,
  previous: [],
  response,
  ...extra,
});

let built: BuiltVerifier;
before(() => {
  built = buildVerifier({
    ...verifierSettingsOf(readSettings()),
    replCommand: standInReplCommand(),
    sandbox: 'none',
    replMemoryMb: 0,
    initRepls: {},
    maxRepls: 2,
  });
});
after(async () => {
  await built.verifier.close();
});

test('a well-formed valid answer scores 1; the checked code is the trusted statement plus the proof', async () => {
  const [r] = await leanRewardScorer({ verifier: built.verifier })([item(GOOD)]);
  assert.deepEqual(
    { score: r.score, acc: r.acc, formatError: r.formatError, verdict: r.verdict, feedback: r.feedback },
    { score: 1, acc: 1, formatError: 'NONE', verdict: 'valid', feedback: null },
  );
  assert.equal(r.formatErrorText, 'No error.');
  assert.ok(
    r.code?.startsWith('import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by'),
  );
  assert.match(r.think, /linear in x/);
});

test('a Lean error scores 0 and yields the fix-turn feedback; a format error alone keeps acc 1 but scores 0', async () => {
  const [wrong, noThink, noCode] = await leanRewardScorer({ verifier: built.verifier })([
    item(WRONG_LEMMA),
    item(NO_THINK),
    item(NO_CODE),
  ]);
  assert.equal(wrong.score, 0);
  assert.equal(wrong.acc, 0);
  assert.equal(wrong.verdict, 'lean_error');
  assert.match(wrong.feedback ?? '', /^# Error 1:\n/);
  assert.match(wrong.feedback ?? '', /bogus_lemma/);
  assert.deepEqual([noThink.score, noThink.acc, noThink.formatError], [0, 1, 'NO_VALID_THINK_BLOCK']);
  assert.equal(noThink.feedback, null, 'Lean-valid: no fix prompt');
  assert.deepEqual(
    [noCode.score, noCode.acc, noCode.verdict, noCode.feedback, noCode.code],
    [0, 0, null, null, null],
    'filtered: never reaches Lean',
  );
});

test('turn 2 scores only when the earlier answer passes the format checks too', async () => {
  const score = leanRewardScorer({ verifier: built.verifier });
  const [afterGood, afterMalformed] = await score([
    item(GOOD, { turn: 2, previous: [WRONG_LEMMA] }),
    item(GOOD, { turn: 2, previous: [NO_THINK] }),
  ]);
  assert.equal(afterGood.score, 1);
  assert.equal(afterMalformed.score, 0);
  assert.equal(afterMalformed.acc, 1);
});

test('batch metrics use the recipe names: acc and format errors per turn, zeros included', () => {
  const items = [item('a'), item('b'), item('c', { turn: 2 })];
  const m = rewardMetrics(items, [
    { acc: 1, score: 1, formatError: 'NONE' },
    { acc: 1, score: 0, formatError: 'NO_VALID_THINK_BLOCK' },
    { acc: 0, score: 0, formatError: 'NONE' },
  ]);
  assert.equal(m['acc/turn_1'], 1);
  assert.equal(m['score/turn_1'], 0.5);
  assert.equal(m['acc/turn_2'], 0);
  assert.equal(m['format_error/turn_1/No error.'], 1);
  assert.equal(m['format_error/turn_1/Could not find a valid think block.'], 1);
  assert.equal(m['format_error/turn_1/Generation repeats.'], 0);
  assert.equal(m['format_error_rate/turn_1'], 0.5);
  assert.equal(m['count/turn_2'], 1);
});

test('HTTP: the trainer route stores chunked batch metrics and rollouts; the stateless route stores nothing', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-reward-'));
  const db = openDb(join(dir, 'k.db'));
  let url = '';
  const service: TrainingService = await openTrainingService({
    settings: readSettings(),
    store: new TrainingStore(db),
    attempts: new AttemptStore(db),
    verifier: built.verifier,
    backendUrl: () => url,
    runsRoot: join(dir, 'runs'),
    jobs: {
      launcher: () => {
        throw new Error('no trainer in this test');
      },
    },
  });
  const app = await createApp({ verifier: built.verifier }, [() => trainingRouterOf(service)], { token: 'secret' });
  const http: Listening = await listen(app, '127.0.0.1', 0, 'secret');
  url = http.url;
  const post = async (path: string, body: unknown, token = 'secret') => {
    const res = await fetch(url + path, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as unknown };
  };
  try {
    const created = await post('/v1/training/runs', {
      preset: 'tiny-cpu',
      model: '/nowhere',
      prompts: [{ id: 'p', prompt: [{ role: 'user', content: 'x' }], formalStatement: STATEMENT }],
      heldOut: [],
      gpus: 'cpu',
    });
    assert.equal(created.status, 201);
    const id = (created.body as { id: string; state: string }).id;
    assert.equal(service.jobs.get(id).state, 'failed', 'the launcher refused: the run failed with a reason');
    assert.match(service.jobs.get(id).error ?? '', /could not start the trainer/);

    const first = await post(`/v1/training/runs/${id}/reward`, {
      step: 3,
      purpose: 'train',
      items: [item(GOOD), item(NO_CODE)],
    });
    assert.equal(first.status, 200);
    assert.deepEqual(
      (first.body as RewardResponse).results.map((r) => r.score),
      [1, 0],
    );
    await post(`/v1/training/runs/${id}/reward`, { step: 3, purpose: 'train', items: [item(WRONG_LEMMA)] });
    const step3 = service.store.metrics(id, { kind: 'train' }).find((s) => s.step === 3)!;
    assert.equal(step3.metrics['count/turn_1'], 3, 'both chunks of step 3 counted');
    assert.equal(step3.metrics['acc/turn_1'], 1 / 3);
    assert.equal(service.store.rollouts(id).length, 3);

    const unauthorized = await post(`/v1/training/runs/${id}/reward`, { step: 1, items: [] }, 'wrong');
    assert.equal(unauthorized.status, 401);
    const bad = await post(`/v1/training/runs/${id}/reward`, { step: 1, items: [{ response: 1 }] });
    assert.equal(bad.status, 400);

    const stateless = await post('/v1/training/reward', { step: 0, purpose: 'train', items: [item(GOOD)] });
    assert.equal((stateless.body as RewardResponse).results[0].score, 1);
    assert.equal(service.store.rollouts(id).length, 3, 'nothing stored');
  } finally {
    await service.close();
    await http.close();
    db.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('verdict modes: recipe mode scores what kimina-client accepts; strict refuses it; filter refusals score 0 in both', async () => {
  // A TEST DOUBLE verifier answering with verdicts of the shapes the strict verifier gives.
  const verdicts: Record<string, import('../../backend/protocol').Verdict> = {
    native: {
      status: 'rejected',
      reason: 'The proof depends on axioms outside the allow-list: Lean.ofReduceBool.',
      axioms: ['Lean.ofReduceBool'],
      messages: [],
      sorries: [],
      time: 0.2,
    },
    filtered: {
      status: 'rejected',
      reason: 'Rejected before Lean (line 5): #eval',
      messages: [],
      sorries: [],
      time: 0,
    },
    valid: { status: 'valid', reason: 'Lean accepted', axioms: [], messages: [], sorries: [], time: 0.2 },
  };
  let next = 'native';
  const verifier = { check: async () => ({ verdict: verdicts[next] }), close: async () => {} };
  const scorer = leanRewardScorer({ verifier });
  const item: RewardItem = { promptId: 'p', turn: 1, formalStatement: STATEMENT, previous: [], response: GOOD };
  const score = async (mode?: 'strict' | 'recipe') => (await scorer([item], { mode }))[0];
  assert.deepEqual([(await score()).score, (await score('strict')).score, (await score('recipe')).score], [0, 0, 1]);
  assert.equal((await score('recipe')).feedback, null, 'accepted: no fix turn');
  next = 'filtered';
  assert.deepEqual([(await score('strict')).score, (await score('recipe')).score], [0, 0]);
  next = 'valid';
  assert.deepEqual([(await score('strict')).score, (await score('recipe')).score], [1, 1]);
});

test('the trusted theorem is audited per item: decoys next to an unproved, sorried or renamed target score 0; honest answers 1', async () => {
  const decoy = '\n\ntheorem decoy : (1 : ℕ) = 1 := rfl';
  const body = (proof: string) =>
    GOOD.replace(/(```lean4\n[^`]*:= by\n)[^`]*```$/, (_m, head: string) => `${head}${proof}${decoy}\n\`\`\``);
  const sorried = body('  sorry');
  const sorryAx = body('  exact sorryAx _ false');
  const renamed = body('  linarith').replaceAll('theorem algebra_example', "theorem algebra_example'");
  const honest = GOOD;
  const NS = 'import Mathlib\n\nnamespace Foo\n\ntheorem target : (1 : ℕ) = 1 := by\n  sorry';
  const nsAnswer = GOOD.replace(
    /```lean4[\s\S]*```$/,
    '```lean4\nimport Mathlib\n\nnamespace Foo\n\ntheorem target : (1 : ℕ) = 1 := by\n  simp\n```',
  );
  const items = [item(sorried), item(sorryAx), item(renamed), item(honest), item(nsAnswer, { formalStatement: NS })];

  // the names the verifier receives, per snippet (a TEST DOUBLE wrapping the real stand-in verifier)
  const seen: (readonly (readonly string[] | undefined)[] | undefined)[] = [];
  const recording = {
    check: built.verifier.check.bind(built.verifier),
    close: async () => {},
    checkBatch: (codes: string[], options: Parameters<typeof built.verifier.checkBatch>[1] = {}) => {
      seen.push(options.theoremsEach);
      return built.verifier.checkBatch(codes, options);
    },
  };
  const results = await leanRewardScorer({ verifier: recording })(items);
  assert.ok(
    sorried.endsWith('  sorry\n\ntheorem decoy : (1 : ℕ) = 1 := rfl\n```') &&
      renamed.includes("theorem algebra_example' (x"),
    'the answers are as described',
  );
  assert.deepEqual(
    results.map((r) => r.acc),
    [0, 0, 0, 1, 1],
    JSON.stringify(results.map((r) => [r.verdict, r.code])),
  );
  assert.deepEqual(results.map((r) => r.score).slice(0, 4), [0, 0, 0, 1]);
  assert.deepEqual(
    results.map((r) => r.verdict),
    ['sorry', 'sorry', null, 'valid', 'valid'],
    'the renamed target is not even extracted',
  );
  // the extracted items (all but the renamed one) each carry their statement's theorem, namespace included
  assert.deepEqual(seen, [[['algebra_example'], ['algebra_example'], ['algebra_example'], ['Foo.target']]]);

  // without a batch route, each check gets its own name too
  const names: (string[] | undefined)[] = [];
  const single = {
    check: (code: string, o: { theorems?: string[] } = {}) => {
      names.push(o.theorems);
      return built.verifier.check(code, o);
    },
    close: async () => {},
  };
  const one = await leanRewardScorer({ verifier: single, concurrency: 1 })([
    item(honest),
    item(nsAnswer, { formalStatement: NS }),
  ]);
  assert.deepEqual(
    one.map((r) => r.acc),
    [1, 1],
  );
  assert.deepEqual(names, [['algebra_example'], ['Foo.target']]);
});

test('per-snippet trusted names reach the audit: a batch where only one snippet holds its named theorem', async () => {
  const [missing, present, batchWide] = await built.verifier.checkBatch(
    [
      'import Mathlib\n\ntheorem decoy : (1 : ℕ) = 1 := rfl',
      'import Mathlib\n\ntheorem target : (1 : ℕ) = 1 := rfl',
      'import Mathlib\n\ntheorem target : (1 : ℕ) = 1 := rfl\ntheorem other : (2 : ℕ) = 2 := rfl',
    ],
    { theoremsEach: [['target'], ['target'], ['other']] },
  );
  assert.notEqual(missing.verdict.status, 'valid', missing.verdict.reason);
  assert.equal(present.verdict.status, 'valid', present.verdict.reason);
  assert.equal(batchWide.verdict.status, 'valid', batchWide.verdict.reason);
  // the batch-wide list still works, and adds to each snippet's own
  const [both] = await built.verifier.checkBatch(['import Mathlib\n\ntheorem target : (1 : ℕ) = 1 := rfl'], {
    theorems: ['target'],
    theoremsEach: [['nowhere']],
  });
  assert.notEqual(both.verdict.status, 'valid', both.verdict.reason);
  const [wide] = await built.verifier.checkBatch(['import Mathlib\n\ntheorem decoy : (1 : ℕ) = 1 := rfl'], {
    theorems: ['target'],
  });
  assert.notEqual(wide.verdict.status, 'valid', wide.verdict.reason);
});
