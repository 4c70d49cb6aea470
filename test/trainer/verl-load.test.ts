// The exported verl job loads in verl itself: the verl release the recipe's fork is built on (verl 0.5.0, pinned in
// backend/trainer/requirements-verl.txt) is installed into its own environment, test/trainer/.venv-verl (git-ignored,
// created on first run, layered on the trainer suite's environment for torch), and test/trainer/verl_load_check.py composes verl's PPO config from its own
// ppo_trainer.yaml with our overrides, loads our dataset class the way main_ppo does, and reads turn-1 and turn-2
// samples. The fix-prompt rules of the Python class and of the TypeScript fix turn run on the same cases.
// The newest release, verl 0.9.1, is installed beside it (test/trainer/.venv-verl-0.9): the job exported for 0.9.1
// composes with 0.9.1's own ppo_trainer.yaml, our dataset class loads through its create_rl_dataset, and
// test/trainer/verl_reward_loop_check.py scores answers through 0.9.1's reward loop (RewardLoopWorker and its
// per-sample NaiveRewardManager, as RewardLoopManager.compute_rm_score runs them, without Ray) against a live
// backend (kimina serve's reward service over the stand-in REPL, TEST DOUBLE for Lean).
// Skipped, with the reason, only when the environment cannot be installed (e.g. no package index).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ChatMessage, TrainingPrompt } from '../../backend/protocol';
import { planFixTurn } from '../../backend/prover/fixTurn';
import { buildPrompt } from '../../backend/prover/prompt';
import { presetHyper } from '../../backend/training/presets';
import { exportVerl, RECIPE_START_MODEL } from '../../backend/training/verlExport';
import { PROMPTS, removeDir, startBackend, tempDir, type Backend } from './harness';
import { repoRoot, testPython, trainerSource } from './pythonSetup';
import { verl09Python, verlPython } from './verlVenv';

const execFileAsync = promisify(execFile);
let job: string;
let python: string | null = null;
let skipReason = '';

before(async () => {
  job = tempDir('kimina-verl-load-');
  try {
    python = await verlPython();
  } catch (e) {
    skipReason = `verl 0.5.0 could not be installed: ${(e as Error).message.split('\n')[0]}`;
  }
});
after(() => removeDir(job));

let python09: string | null = null;
let skip09 = '';
before(async () => {
  try {
    python09 = await verl09Python();
  } catch (e) {
    skip09 = `verl 0.9.1 could not be installed: ${(e as Error).message.split('\n')[0]}`;
  }
});

// A validation set in the recipe's shape (AI-MO/minif2f_test rows as prepare_data.py formats them).
const VAL: TrainingPrompt[] = ['mathd_algebra_10', 'amc12a_2019_p21', 'imo_1959_p1', 'aime_1983_p2'].map((name, i) => {
  const statement = `import Mathlib\n\ntheorem ${name} (x : ℝ) (h : x = ${i}) : x = ${i} := by\n`;
  return { id: name, prompt: buildPrompt(statement, `Show that x = ${i}.`), formalStatement: statement };
});

test(
  'the exported job composes with verl 0.5.0 and our dataset class serves turn-1 and turn-2 prompts at the configured rate',
  { timeout: 1_800_000 },
  async (t) => {
    if (!python) {
      t.skip(skipReason);
      return;
    }
    const backend: Backend = await startBackend({ token: 'tok' });
    t.after(async () => {
      await backend.close();
      removeDir(backend.dir);
    });
    const hyper = presetHyper('recipe-8gpu');
    // Deliberate duplicates (the recipe repeats hard prompts) go through as they are.
    const train = [...PROMPTS, PROMPTS[0], PROMPTS[0]];
    // The trainer environment here is the verl 0.5.0 one: the export reads the release installed there.
    const exported = await exportVerl({
      env: process.env,
      outDir: job,
      model: RECIPE_START_MODEL,
      train,
      test: VAL,
      testSource: 'AI-MO/minif2f_test',
      hyper,
      rewardUrl: 'http://127.0.0.1:9',
      python,
      sourceDir: trainerSource,
    });
    assert.deepEqual(exported.verl, { version: '0.5.0', from: 'trainer environment', wiring: 'batch' });
    const cases = fixCases();
    const casesFile = join(job, 'cases.json');
    writeFileSync(casesFile, JSON.stringify(cases));
    const answersFile = join(job, 'answers.json');
    writeFileSync(answersFile, JSON.stringify(answerRows(6)));
    const { stdout } = await execFileAsync(
      python,
      [join(repoRoot, 'test', 'trainer', 'verl_load_check.py'), job, casesFile, answersFile],
      {
        env: {
          ...process.env,
          PYTHONPATH: `${trainerSource}:${job}`,
          HYDRA_FULL_ERROR: '1',
          RAY_DISABLE_IMPORT_WARNING: '1',
          KIMINA_REWARD_URL: backend.url,
          KIMINA_API_TOKEN: 'tok',
        },
        maxBuffer: 64 << 20,
        timeout: 600_000,
      },
    );
    const r = JSON.parse(stdout.trim().split('\n').pop()!);
    t.diagnostic(
      `verl ${r.verl_version}: ${r.turn2_reads} of ${r.reads_after} reads were turn-2 fix prompts (rate 0.5, cache ${r.cache_after_step});` +
        ` turn-1 sample roles ${r.turn1_sample.join(',')}; turn-2 sample roles ${r.turn2_sample.roles.join(',')}, feedback ${JSON.stringify(r.turn2_sample.last.slice(0, 40))}`,
    );
    assert.equal(r.verl_version, '0.5.0');
    assert.equal(r.dataset_class, 'KiminaMultiturnDataset');
    assert.equal(r.reward_fn, 'reward');
    assert.deepEqual(r.reward_kwargs, { return_dict: true });
    assert.equal(r.reward_manager, 'BatchRewardManager');
    // verl 0.5.0's batch reward manager, as its trainer calls it, through the live backend.
    assert.deepEqual(r.reward.scores, [1, 0, 0, 1, 0, 0]);
    assert.equal(r.reward.tool_feedback[0], 'valid proof found.');
    assert.match(r.reward.tool_feedback[1], /^# Error 1:/);
    assert.equal(r.reward.format_error[2], 'Could not find a valid lean4 code block.');
    assert.deepEqual(r.config, {
      multiturn: true,
      sampling_rate: 0.5,
      cache: 5000,
      feedback_cap: 3000,
      custom_cls: 'KiminaMultiturnDataset',
      model: 'AI-MO/Kimina-Prover-Distill-1.7B',
      loss_agg_mode: 'seq-mean-token-sum-norm',
      train_batch_size: 256,
      ppo_mini_batch_size: 32,
      val_n: 8,
      total_epochs: 15,
      total_training_steps: null,
      workers: 0,
    });
    assert.equal(r.train_rows, train.length, 'duplicates kept');
    assert.equal(r.val_rows, VAL.length);
    assert.equal(r.val_data_source, 'AI-MO/minif2f_test');
    assert.deepEqual(r.turns_before_any_failure, [1], 'an empty cache serves dataset rows only');
    // 8 answers: 5 failed with short feedback (cached), 1 valid, 1 filtered, 1 feedback over 3000 characters.
    assert.equal(r.cache_after_step, 5);
    assert.equal(r.metrics['multiturn/turn_1/added_in_database'], 5);
    assert.equal(r.metrics['multiturn/turn_1/valid'], 1);
    assert.equal(r.metrics['multiturn/turn_1/filtered'], 1);
    assert.equal(r.metrics['multiturn/turn_1/feedback_too_long'], 1);
    assert.equal(r.metrics['format_error/turn_1/No error.'], 7);
    assert.equal(r.metrics['format_error/turn_1/Generation repeats.'], 1);
    // Sampling rate 0.5 over 400 reads: binomial sd 10, so 160..240 is over 4 sd wide.
    assert.ok(r.turn2_reads >= 160 && r.turn2_reads <= 240, `turn-2 reads ${r.turn2_reads} of ${r.reads_after}`);
    assert.deepEqual(r.turn1_sample, ['system', 'user']);
    assert.deepEqual(r.turn2_sample.roles, ['system', 'user', 'assistant', 'user']);
    assert.match(r.turn2_sample.last, /^# Error 1:\nError message: \nunknown identifier 'bogus'/);
    assert.match(r.turn2_sample.assistant, /^<think>try \d<\/think> answer \d$/);
    assert.equal(r.turn2_sample.data_source, 'multiturn');
    assert.deepEqual(
      r.turn2_sample.extra_prompt_roles,
      ['system', 'user', 'assistant', 'user'],
      'the reward sees the turn-1 answer',
    );
    assert.equal(r.turn2_sample.input_ids_len, 8192, 'left-padded to max_prompt_length');
    // Two-turn validation: every failed row gets its fix turn.
    assert.deepEqual(r.validation.positions, [1, 2, 3]);
    assert.equal(r.validation.second_rows, 3);
    assert.deepEqual(r.validation.second_roles, ['system', 'user', 'assistant', 'user']);
    // One rule in both languages: the Python dataset's plan and the TypeScript fix turn agree on every case.
    const engine = { countPromptTokens: async (m: ChatMessage[]) => m.reduce((n, x) => n + [...x.content].length, 0) };
    assert.equal(r.plans.length, cases.length);
    for (const [i, c] of cases.entries()) {
      const ts = await planFixTurn({
        conversation: c.conversation,
        response: c.response,
        feedback: c.feedbackTs,
        maxFixTurns: c.nTurns - 1,
        engine,
        maxFeedbackChars: c.maxFeedbackChars,
        maxPromptTokens: c.maxPromptTokens,
      });
      const py = r.plans[i];
      assert.equal(ts.ok ? 'added_in_database' : ts.reason, py.outcome, `case ${i}: ${c.name}`);
      assert.deepEqual(ts.ok ? ts.conversation : null, py.conversation, `case ${i}: ${c.name}`);
    }
  },
);

interface FixCase {
  name: string;
  conversation: ChatMessage[];
  response: string;
  feedback: string;
  feedbackTs: string | null | 'filtered';
  nTurns: number;
  maxFeedbackChars: number;
  maxPromptTokens: number;
}

/** Edge cases of the filters: each limit exactly met and just passed, in code points (astral Mathlib letters count once). */
function fixCases(): FixCase[] {
  const base = buildPrompt('theorem t (𝕜 : Type) : True := by\n', 'Show it.');
  const turn2 = [...base, { role: 'assistant' as const, content: 'first' }, { role: 'user' as const, content: 'fb' }];
  const promptChars = base.reduce((n, m) => n + [...m.content].length, 0);
  const c = (name: string, o: Partial<FixCase>): FixCase => ({
    name,
    conversation: base,
    response: 'answer 𝕜',
    feedback: '# Error 1:\n',
    feedbackTs: '# Error 1:\n',
    nTurns: 2,
    maxFeedbackChars: 3000,
    maxPromptTokens: 100_000,
    ...o,
  });
  const astral = '𝕜'.repeat(3000); // 3000 code points, 6000 UTF-16 units
  return [
    c('valid', { feedback: 'valid proof found.', feedbackTs: null }),
    c('filtered', { feedback: 'filtered proof.', feedbackTs: 'filtered' }),
    c('feedback at the cap', { feedback: 'x'.repeat(3000), feedbackTs: 'x'.repeat(3000) }),
    c('feedback over the cap', { feedback: 'x'.repeat(3001), feedbackTs: 'x'.repeat(3001) }),
    c('astral feedback at the cap in code points', { feedback: astral, feedbackTs: astral }),
    c('astral feedback over the cap', { feedback: astral + '𝕜', feedbackTs: astral + '𝕜' }),
    c('empty feedback (sorry-only failure) passes', { feedback: '', feedbackTs: '' }),
    c('already turn 2', { conversation: turn2 }),
    c('prompt exactly at the token limit', {
      maxPromptTokens: promptChars + [...'answer 𝕜'].length + [...'# Error 1:\n'].length,
    }),
    c('prompt one token over', {
      maxPromptTokens: promptChars + [...'answer 𝕜'].length + [...'# Error 1:\n'].length - 1,
    }),
    c('feedback over the cap wins over turn 2', {
      conversation: turn2,
      feedback: 'x'.repeat(3001),
      feedbackTs: 'x'.repeat(3001),
    }),
  ];
}

// Answers for t3 (n + 0 = n) in the recipe's format (two tactics blocks in the thinking, then the proof): one Lean
// accepts, one it refuses, one with no code block.
const T3 = PROMPTS[2].formalStatement;
const GOOD = [
  '<think>',
  'Simplify.',
  '```tactics',
  'import Mathlib',
  'theorem t3 (n : ℕ) : n + 0 = n := by',
  '  simp',
  '```',
  '```tactics',
  '  simp',
  '```',
  '</think>',
  'Done.',
  '',
  '```lean4',
  'import Mathlib',
  '',
  'theorem t3 (n : ℕ) : n + 0 = n := by',
  '  simp',
  '```',
].join('\n');
const BAD = GOOD.replaceAll('  simp\n```', '  exact bogus_fact\n```');

test(
  "verl 0.9.1: the job composes with 0.9.1's own config and its reward loop scores each answer through the live backend",
  { timeout: 1_800_000 },
  async (t) => {
    if (!python09) {
      t.skip(skip09);
      return;
    }
    const backend: Backend = await startBackend({ token: 'tok' });
    const dir = tempDir('kimina-verl-09-');
    try {
      const result = await exportVerl({
        env: process.env,
        outDir: dir,
        model: RECIPE_START_MODEL,
        train: PROMPTS,
        test: VAL,
        testSource: 'AI-MO/minif2f_test',
        hyper: presetHyper('recipe-8gpu'),
        rewardUrl: backend.url,
        python: await testPython(),
        sourceDir: trainerSource,
      });
      assert.deepEqual(result.verl, { version: '0.9.1', from: 'default', wiring: 'reward-loop' });
      // The tiny character tokenizer stands in for the model's (nothing downloaded).
      const tokDir = join(dir, 'tokenizer');
      await execFileAsync(
        python09,
        [
          '-c',
          'import sys; from kimina_trainer.tiny import build_tokenizer; build_tokenizer().save_pretrained(sys.argv[1])',
          tokDir,
        ],
        { env: { ...process.env, PYTHONPATH: trainerSource } },
      );
      // 12 answers: 4 valid, 4 refused by Lean, 4 without a code block; 12 over 8 workers pads to 16.
      const rows = answerRows(12);
      const answers = join(dir, 'answers.json');
      writeFileSync(answers, JSON.stringify(rows));
      const { stdout } = await execFileAsync(
        python09,
        [join(repoRoot, 'test', 'trainer', 'verl_reward_loop_check.py'), dir, tokDir, answers],
        {
          env: {
            ...process.env,
            PYTHONPATH: `${trainerSource}:${dir}`,
            HYDRA_FULL_ERROR: '1',
            RAY_DISABLE_IMPORT_WARNING: '1',
            KIMINA_REWARD_URL: backend.url,
            KIMINA_API_TOKEN: 'tok',
          },
          maxBuffer: 64 << 20,
          timeout: 600_000,
        },
      );
      const r = JSON.parse(stdout.trim().split('\n').pop()!);
      t.diagnostic(
        `verl ${r.verl_version}: ${r.reward_manager} over ${r.num_workers} workers scored ${r.scores.length} answers in ${r.seconds.toFixed(2)} s`,
      );
      t.diagnostic(
        `feedback: ${JSON.stringify(r.tool_feedback.slice(0, 3))} ${JSON.stringify(r.format_error.slice(0, 3))}`,
      );
      assert.equal(r.verl_version, '0.9.1');
      assert.equal(r.use_v1, false, 'the trainer that calls on_batch_end');
      assert.match(
        r.legacy_key_refused,
        /Could not override 'reward_model\.launch_reward_fn_async'/,
        'a job written for 0.5 does not compose on 0.9.1',
      );
      assert.equal(r.dataset_class, 'KiminaMultiturnDataset');
      assert.equal(r.train_rows, PROMPTS.length);
      assert.equal(r.reward_manager, 'NaiveRewardManager', 'registered as naive in verl 0.9.1');
      assert.equal(r.reward_fn, 'compute_score');
      assert.equal(r.reward_fn_async, true, 'awaited, not run in a thread per answer');
      assert.deepEqual(
        r.scores,
        rows.map((_, i) => (i % 3 === 0 ? 1 : 0)),
      );
      assert.equal(r.rm_scores_at_last_token, true);
      assert.deepEqual(r.rm_scores_sum, r.scores);
      for (const k of ['acc', 'format_error', 'pred', 'response', 'score', 'tool_feedback'])
        assert.ok(r.extra_keys.includes(k), k);
      assert.equal(r.tool_feedback[0], 'valid proof found.');
      assert.match(r.tool_feedback[1], /^# Error 1:/);
      assert.equal(r.tool_feedback[2], 'filtered proof.');
      assert.equal(r.format_error[2], 'Could not find a valid lean4 code block.');
      assert.equal(r.cache_after_step, 4, 'the four Lean refusals wait for their fix turn');
    } finally {
      await backend.close();
      removeDir(backend.dir);
      removeDir(dir);
    }
  },
);

/** n answers to t3 (PROMPTS[2], row 2 of the train set): valid, refused by Lean, no code block, in turn. */
function answerRows(n: number): { row: number; formal_statement: string; response: string }[] {
  const kinds = [GOOD, BAD, 'no answer'];
  return Array.from({ length: n }, (_, i) => ({ row: 2, formal_statement: T3, response: kinds[i % 3] }));
}
