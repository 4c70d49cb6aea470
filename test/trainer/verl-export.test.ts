// verl export: the parquet datasets, the launch script and overrides (checked against the recipe's keys),
// the runtime env, and the generated reward module run on sample rollouts against a real backend whose
// reward service uses the stand-in REPL (TEST DOUBLE for Lean).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { exportVerl, launchScript, verlOverrides } from '../../backend/training/verlExport';
import { chooseVerl, NEWEST_VERL, VerlVersionError } from '../../backend/training/verlVersions';
import { presetHyper } from '../../backend/training/presets';
import { PROMPTS, removeDir, startBackend, tempDir, type Backend } from './harness';
import { testPython, trainerSource } from './pythonSetup';

const execFileAsync = promisify(execFile);
let backend: Backend;
let out: string;

before(async () => {
  backend = await startBackend({ token: 'tok' });
  out = tempDir('kimina-verl-');
});
after(async () => {
  await backend.close();
  removeDir(backend.dir);
  removeDir(out);
});

test('recipe overrides: Dr.GRPO, asymmetric clipping, no KL, batch reward with dicts (verl 0.5, 0.6)', () => {
  const o = verlOverrides(
    { model: 'AI-MO/Kimina-Prover-Distill-1.7B', hyper: presetHyper('recipe-8gpu') },
    { wiring: 'batch', keys: 'top-level', v1Trainer: false },
  );
  assert.equal(o['algorithm.adv_estimator'], 'grpo');
  assert.equal(o['algorithm.norm_adv_by_std_in_grpo'], false);
  assert.equal(o['actor_rollout_ref.actor.loss_agg_mode'], 'seq-mean-token-sum-norm');
  assert.equal(o['actor_rollout_ref.actor.clip_ratio_low'], 0.2);
  assert.equal(o['actor_rollout_ref.actor.clip_ratio_high'], 0.3);
  assert.equal(o['actor_rollout_ref.actor.use_kl_loss'], false);
  assert.equal(o['actor_rollout_ref.actor.optim.lr'], 2e-6);
  assert.equal(o['data.train_batch_size'], 256);
  assert.equal(o['actor_rollout_ref.rollout.n'], 8);
  assert.equal(o['actor_rollout_ref.actor.ppo_mini_batch_size'], 32, '256 sequences per optimizer step, in prompts');
  assert.equal(o['data.max_prompt_length'], 8192);
  assert.equal(o['data.max_response_length'], 24576);
  assert.equal(o['reward_model.reward_manager'], 'batch');
  assert.equal(o['reward_model.launch_reward_fn_async'], true);
  assert.equal(o['custom_reward_function.name'], 'reward');
  assert.equal(o['+custom_reward_function.reward_kwargs.return_dict'], true);
  assert.equal(o['data.dataloader_num_workers'], 0);
  // The error-fix turn: our dataset class with the recipe's multi-turn settings.
  assert.equal(o['data.custom_cls.path'], 'kimina_dataset.py');
  assert.equal(o['data.custom_cls.name'], 'KiminaMultiturnDataset');
  assert.equal(o['+data.multiturn'], true);
  assert.equal(o['+data.multiturn_sampling_rate'], 0.5);
  assert.equal(o['+data.multiturn_n_samples_in_cache'], 5000);
  assert.equal(o['+data.multiturn_max_feedback_length'], 3000);
  assert.equal(o['actor_rollout_ref.ref.log_prob_max_token_len_per_gpu'], 32768);
  assert.equal(o['trainer.total_epochs'], 15);
  assert.equal(o['trainer.experiment_name'], 'kimina-prover-1.7B');
});

test('verl 0.7 to 0.9: the reward loop calls compute_score per answer; no launch_reward_fn_async; the rest unchanged', () => {
  const job = { model: 'AI-MO/Kimina-Prover-Distill-1.7B', hyper: presetHyper('recipe-8gpu') };
  const loop = verlOverrides(job, chooseVerl('0.9.1', undefined));
  const batch = verlOverrides(job, chooseVerl('0.5.0', undefined));
  // Under `reward`: 0.9's main_ppo no longer moves the top-level keys there (they would be ignored).
  assert.equal(loop['reward.reward_manager.name'], 'naive');
  assert.equal(loop['reward.custom_reward_function.path'], 'kimina_reward.py');
  assert.equal(loop['reward.custom_reward_function.name'], 'compute_score');
  assert.ok(!Object.keys(loop).some((k) => k.startsWith('custom_reward_function') || k.startsWith('reward_model.')));
  assert.ok(!('reward_model.launch_reward_fn_async' in loop), 'the key Hydra refuses from 0.7.1');
  // 0.7.0, the one reward-loop release without the `reward` group, reads them at the top level.
  const early = verlOverrides(job, chooseVerl('0.7.0', undefined));
  assert.equal(early['reward_model.reward_manager'], 'naive');
  assert.equal(early['custom_reward_function.name'], 'compute_score');
  assert.ok(!Object.keys(early).some((k) => k.startsWith('reward.')));
  // 0.9's default v1 trainer never calls the dataset's on_batch_end: the job runs the one that does.
  assert.equal(loop['trainer.use_v1'], false);
  const { 'trainer.use_v1': _v1, ...loop08 } = loop;
  assert.deepEqual(verlOverrides(job, chooseVerl('0.7.1', undefined)), loop08);
  assert.deepEqual(verlOverrides(job, chooseVerl('0.8.0', undefined)), loop08);
  assert.ok(!('trainer.use_v1' in batch), 'no such key before 0.9');
  assert.ok(!Object.keys(loop).some((k) => k.includes('reward_kwargs')), 'compute_score always answers a dict');
  const rewardKey = (k: string) =>
    k.startsWith('reward') || k.includes('custom_reward_function') || k === 'trainer.use_v1';
  const rest = (o: Record<string, unknown>) => Object.entries(o).filter(([k]) => !rewardKey(k));
  assert.deepEqual(rest(loop), rest(batch));
  assert.deepEqual(verlOverrides(job), loop, 'the default is the newest wiring');
});

test('the verl release: --verl, else the trainer environment’s, else the newest; an unknown one refused', () => {
  assert.deepEqual(chooseVerl(undefined, undefined), {
    version: NEWEST_VERL,
    series: '0.9',
    wiring: 'reward-loop',
    keys: 'reward',
    v1Trainer: true,
    accepts: ['0.9.*'],
    from: 'default',
  });
  assert.equal(NEWEST_VERL, '0.9.1');
  assert.deepEqual(chooseVerl(undefined, '0.5.0'), {
    version: '0.5.0',
    series: '0.5',
    wiring: 'batch',
    keys: 'top-level',
    v1Trainer: false,
    accepts: ['0.5.*'],
    from: 'trainer environment',
  });
  assert.equal(chooseVerl('0.6.1', '0.9.1').wiring, 'batch', 'the flag wins');
  assert.equal(chooseVerl('0.7.0', undefined).wiring, 'reward-loop');
  assert.equal(chooseVerl('0.8.0', undefined).series, '0.8');
  assert.equal(chooseVerl('0.5.0.dev', undefined).series, '0.5', "the recipe's fork says 0.5.0.dev");
  for (const v of ['0.4.1', '0.10.0', '1.0.0', 'latest', ''])
    assert.throws(
      () => chooseVerl(v, undefined),
      (e: unknown) =>
        e instanceof VerlVersionError &&
        e.message.includes(`verl ${v} (given with --verl) is not a release the export knows`) &&
        e.message.includes('0.5.x (newest 0.5.0)') &&
        e.message.includes('0.9.x (newest 0.9.1)') &&
        e.message.includes('--verl 0.9.1'),
      v,
    );
  assert.throws(() => chooseVerl(undefined, '0.3.0.post1'), /installed in the trainer's environment/);
});

test('an unknown verl is refused before anything is written', async () => {
  const dir = join(tempDir('kimina-verl-refused-'), 'job');
  try {
    await assert.rejects(
      exportVerl({
        env: process.env,
        outDir: dir,
        model: 'm',
        train: PROMPTS.slice(0, 1),
        test: PROMPTS.slice(1, 2),
        hyper: presetHyper('recipe-8gpu'),
        rewardUrl: 'http://127.0.0.1:9',
        python: 'python3',
        sourceDir: trainerSource,
        verl: '0.10.0',
      }),
      /verl 0\.10\.0 \(given with --verl\) is not a release the export knows/,
    );
    assert.equal(existsSync(dir), false);
  } finally {
    removeDir(join(dir, '..'));
  }
});

test('run_verl.sh checks the cluster’s verl: a mismatch or none says what to do; the same series starts', async () => {
  const dir = tempDir('kimina-verl-check-');
  try {
    // A stand-in python3 first on PATH: `-c` answers the installed verl (FAKE_VERL; empty: not installed),
    // `-m verl.trainer.main_ppo` says it started.
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    writeFileSync(
      join(bin, 'python3'),
      '#!/usr/bin/env bash\nif [ "$1" = "-c" ]; then [ -n "$FAKE_VERL" ] && echo "$FAKE_VERL" && exit 0; exit 1; fi\necho "started $2"\n',
    );
    chmodSync(join(bin, 'python3'), 0o755);
    const job = { model: 'm', hyper: presetHyper('recipe-8gpu') };
    const target = chooseVerl('0.9.1', undefined);
    writeFileSync(join(dir, 'run_verl.sh'), launchScript(verlOverrides(job, target), target), { mode: 0o755 });
    const runWith = (fake: string, extra: NodeJS.ProcessEnv = {}) =>
      execFileAsync('bash', [join(dir, 'run_verl.sh')], {
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, FAKE_VERL: fake, ...extra },
      }).then(
        (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
        (e: { code: number; stdout: string; stderr: string }) => ({ code: e.code, out: e.stdout, err: e.stderr }),
      );
    const same = await runWith('0.9.0');
    assert.equal(same.code, 0, same.err);
    assert.match(same.out, /started verl\.trainer\.main_ppo/);
    const old = await runWith('0.5.0');
    assert.equal(old.code, 3);
    assert.match(old.err, /written for verl 0\.9\.1 \(0\.9\.\*\) but this cluster runs verl 0\.5\.0/);
    assert.match(old.err, /pip install verl==0\.9\.1/);
    assert.match(old.err, /kimina train export-verl --verl 0\.5\.0/);
    assert.equal(old.out, '', 'verl not started');
    const none = await runWith('');
    assert.equal(none.code, 3);
    assert.match(none.err, /verl is not installed .* pip install verl==0\.9\.1/);
    const forced = await runWith('0.5.0', { KIMINA_VERL_ANY: '1' });
    assert.equal(forced.code, 0);
    // A job for 0.7.1 (reward settings under `reward`) is not started on 0.7.0, which has no such group.
    const t71 = chooseVerl('0.7.1', undefined);
    writeFileSync(join(dir, 'run_verl.sh'), launchScript(verlOverrides(job, t71), t71), { mode: 0o755 });
    assert.equal((await runWith('0.7.0')).code, 3);
    assert.equal((await runWith('0.7.2')).code, 0);
    const t70 = chooseVerl('0.7.0', undefined);
    writeFileSync(join(dir, 'run_verl.sh'), launchScript(verlOverrides(job, t70), t70), { mode: 0o755 });
    assert.equal((await runWith('0.7.0.dev')).code, 0);
    assert.equal((await runWith('0.7.1')).code, 3);
  } finally {
    removeDir(dir);
  }
});

test(
  'export writes valid parquet, script, env and a reward module that scores through the backend',
  { timeout: 300_000 },
  async () => {
    const python = await testPython();
    const result = await exportVerl({
      env: process.env,
      outDir: out,
      model: 'AI-MO/Kimina-Prover-Distill-1.7B',
      train: PROMPTS.slice(0, 3),
      test: [PROMPTS[3]],
      hyper: presetHyper('recipe-8gpu'),
      rewardUrl: backend.url,
      python,
      sourceDir: trainerSource,
      nodes: 2,
    });
    for (const f of result.files) assert.ok(statSync(join(out, f)).size > 0, f);
    assert.deepEqual(
      result.verl,
      { version: '0.9.1', from: 'default', wiring: 'reward-loop' },
      'no verl in the trainer env',
    );
    assert.deepEqual(result.submitCommand.slice(0, 3), ['ray', 'job', 'submit']);

    const script = readFileSync(join(out, 'run_verl.sh'), 'utf8');
    assert.match(script, /^#!\/usr\/bin\/env bash/);
    assert.match(script, /python3 -m verl\.trainer\.main_ppo/);
    assert.match(script, /trainer\.nnodes=2 /);
    await execFileAsync('bash', ['-n', join(out, 'run_verl.sh')]); // syntax check
    assert.match(readFileSync(join(out, 'runtime_env.yaml'), 'utf8'), /KIMINA_REWARD_URL: "http:\/\/127\.0\.0\.1:\d+"/);

    // The datasets: recipe columns, prompts as [system, user] messages, the trusted statement in extra_info.
    const check = `
import json, sys, pyarrow.parquet as pq
t = pq.read_table(sys.argv[1]).to_pylist()
print(json.dumps({"n": len(t), "cols": sorted(t[0].keys()), "roles": [m["role"] for m in t[0]["prompt"]],
  "fs": t[0]["extra_info"]["formal_statement"], "idx": t[0]["extra_info"]["index"], "gt": t[0]["reward_model"]["ground_truth"]}))`;
    const { stdout } = await execFileAsync(python, ['-c', check, join(out, 'data', 'train.parquet')]);
    const info = JSON.parse(stdout);
    assert.equal(info.n, 3);
    assert.deepEqual(info.cols, ['ability', 'data_source', 'extra_info', 'prompt', 'reward_model']);
    assert.deepEqual(info.roles, ['system', 'user']);
    assert.equal(info.fs, PROMPTS[0].formalStatement);
    assert.equal(info.idx, 'p1');
    assert.equal(info.gt, 'Should be solved in Lean 4.');

    // The reward module, as verl's batch reward manager calls it, on sample rollouts.
    const statement = PROMPTS[2].formalStatement; // theorem t3 (n : ℕ) : n + 0 = n
    const good = [
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
    const bad = good.replaceAll('  simp\n```', '  exact bogus_fact\n```');
    const call = `
import json, sys
sys.path.insert(0, sys.argv[1])
import kimina_reward
infos = [{"formal_statement": sys.argv[2], "index": "p3"}] * 3
sols = [sys.argv[3], sys.argv[4], "no answer"]
import asyncio
async def per_answer():  # as verl's reward loop (0.7+) calls it: one coroutine per answer, started together
    return await asyncio.gather(*(kimina_reward.compute_score(data_source="s", solution_str=x, ground_truth=None,
                                                               extra_info=i) for x, i in zip(sols, infos)))
print(json.dumps({"plain": kimina_reward.reward(["s"] * 3, sols, [None] * 3, infos),
                  "dicts": kimina_reward.reward(["s"] * 3, sols, [None] * 3, infos, return_dict=True),
                  "per_answer": asyncio.run(per_answer())}))`;
    const env = { ...process.env, KIMINA_API_TOKEN: 'tok' };
    const run = await execFileAsync(python, ['-c', call, out, statement, good, bad], { env });
    const scored = JSON.parse(run.stdout);
    assert.deepEqual(scored.plain, [1, 0, 0]);
    assert.deepEqual(
      scored.dicts.map((d: { acc: number }) => d.acc),
      [1, 0, 0],
    );
    assert.equal(scored.dicts[0].tool_feedback, 'valid proof found.');
    assert.match(scored.dicts[1].tool_feedback, /^# Error 1:/);
    assert.equal(scored.dicts[2].tool_feedback, 'filtered proof.');
    assert.equal(scored.dicts[2].format_error, 'Could not find a valid lean4 code block.');
    assert.deepEqual(scored.per_answer, scored.dicts, 'the per-answer path answers what the batch path does');

    const denied = await execFileAsync(python, ['-c', call, out, statement, good, bad], {
      env: { ...process.env, KIMINA_API_TOKEN: 'wrong' },
    }).catch((e: { stderr: string }) => e);
    assert.match((denied as { stderr: string }).stderr, /refused the batch: 401/);
  },
);
