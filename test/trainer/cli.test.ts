// `kimina train …` and `kimina trainer setup` as a user runs them (the CLI from source through tsx), against a
// real backend with the stand-in REPL (TEST DOUBLE for Lean).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PROMPTS, removeDir, startBackend, waitFor, type Backend } from './harness';
import { repoRoot, testPython, testVenv } from './pythonSetup';

let backend: Backend;
before(async () => {
  backend = await startBackend();
});
after(async () => {
  if (backend) {
    await backend.close();
    removeDir(backend.dir);
  }
});

/** Runs the CLI without blocking this process (which also hosts the backend it talks to). */
function kimina(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(repoRoot, 'backend', 'cli.ts'), ...args], {
      cwd: repoRoot,
      env: { ...process.env, KIMINA_SERVER_URL: backend.url, KIMINA_HOME: join(backend.dir, 'home'), ...env },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      err += d.toString();
    });
    child.on('close', (code) => resolve({ code, out, err }));
  });
}

test('start, status, cancel and logs through the CLI; bad settings are named', { timeout: 180_000 }, async () => {
  const python = await testPython();
  const file = join(backend.dir, 'prompts.jsonl');
  writeFileSync(
    file,
    PROMPTS.map((p) => JSON.stringify({ id: p.id, formalStatement: p.formalStatement })).join('\n') + '\n',
  );
  const bad = await kimina(['train', 'start', '--model', '/m', '--prompts', file, '--set', 'bogus=1']);
  assert.equal(bad.code, 1);
  assert.match(bad.err, /unknown setting 'bogus'/);
  const started = await kimina(
    [
      'train',
      'start',
      '--model',
      join(backend.dir, 'no-such-model'),
      '--preset',
      'tiny-cpu',
      '--prompts',
      file,
      '--gpus',
      'cpu',
      '--set',
      'maxSteps=50',
      '--set',
      'heldOutShare=0',
      '--name',
      'cli run',
    ],
    { KIMINA_TRAINER_PYTHON: python },
  );
  assert.equal(started.code, 0, started.err);
  const id = /^(run-\S+)/.exec(started.out)?.[1];
  assert.ok(id, started.out);
  assert.match(started.out, /4 training prompts, 0 held out/);
  const list = await kimina(['train', 'status']);
  assert.match(list.out, new RegExp(`${id}\\s+\\w+\\s+step 0/50`));
  const cancelled = await kimina(['train', 'cancel', id]);
  assert.equal(cancelled.code, 0, cancelled.err);
  assert.match(cancelled.out, /cancelled/);
  await waitFor('the trainer to exit', () => !backend.service.jobs.isActive(id) || undefined, 30_000);
  const json = JSON.parse((await kimina(['train', 'status', id, '--json'])).out);
  assert.equal(json.run.state, 'cancelled');
  assert.match((await kimina(['train', 'logs', id])).out, /created: 4 training prompts/);
  const missing = await kimina(['train', 'pause', 'run-nope']);
  assert.equal(missing.code, 1);
  assert.match(missing.err, /404 no training run 'run-nope'/);
});

test('the CLI names an unreachable backend', async () => {
  const r = await kimina(['train', 'status'], { KIMINA_SERVER_URL: 'http://127.0.0.1:9' });
  assert.equal(r.code, 1);
  assert.match(r.err, /cannot reach the Kimina backend at http:\/\/127\.0\.0\.1:9: .*\(is `kimina serve` running\?\)/);
});

test(
  'export-verl: miniF2F test validation by default, the Distill start, duplicates kept unless --dedupe',
  { timeout: 180_000 },
  async () => {
    const python = await testPython();
    const file = join(backend.dir, 'verl-prompts.jsonl');
    const lines = PROMPTS.map((p) => JSON.stringify({ formalStatement: p.formalStatement, informal: 'A problem.' }));
    writeFileSync(file, [...lines, lines[0], lines[0]].join('\n') + '\n'); // a hard prompt repeated on purpose
    const home = join(backend.dir, 'kimina-home');
    const out = join(backend.dir, 'verl-job');
    const args = [
      'train',
      'export-verl',
      '--out',
      out,
      '--reward-url',
      'http://10.1.2.3:8000',
      '--prompts',
      file,
      '--nodes',
      '2',
    ];
    const missing = await kimina(args, { KIMINA_TRAINER_PYTHON: python, KIMINA_HOME: home });
    assert.equal(missing.code, 1);
    assert.match(missing.err, /AI-MO\/minif2f_test is not downloaded .*run `kimina eval fetch`/);

    // What `kimina eval fetch` leaves behind (3 rows of the recipe's columns are enough here).
    mkdirSync(join(home, 'benchmarks'), { recursive: true });
    writeFileSync(
      join(home, 'benchmarks', 'minif2f_test.jsonl'),
      ['mathd_algebra_10', 'amc12a_2019_p21', 'imo_1959_p1']
        .map((name) =>
          JSON.stringify({
            name,
            split: 'test',
            formal_statement: `import Mathlib\n\ntheorem ${name} : True := by\n`,
            informal_problem: `/-- Show ${name}. -/`,
          }),
        )
        .join('\n') + '\n',
    );
    const r = await kimina(args, { KIMINA_TRAINER_PYTHON: python, KIMINA_HOME: home });
    assert.equal(r.code, 0, r.err);
    assert.match(r.out, /\(6 train prompts; 3 validation prompts from AI-MO\/minif2f_test\)/);
    assert.match(
      r.out,
      /ray job submit --address=http:\/\/HEAD_NODE:8265 --runtime-env=runtime_env.yaml --no-wait -- bash run_verl.sh/,
    );
    for (const f of [
      'data/train.parquet',
      'data/test.parquet',
      'kimina_reward.py',
      'kimina_dataset.py',
      'kimina_verifiers.py',
      'run_verl.sh',
      'runtime_env.yaml',
    ])
      assert.ok(existsSync(join(out, f)), f);
    const overrides = JSON.parse(readFileSync(join(out, 'overrides.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(overrides['actor_rollout_ref.model.path'], 'AI-MO/Kimina-Prover-Distill-1.7B');
    assert.equal(overrides['trainer.experiment_name'], 'kimina-prover-1.7B');
    assert.equal(overrides['data.custom_cls.name'], 'KiminaMultiturnDataset');
    assert.equal(overrides['trainer.total_epochs'], 15);
    // No verl in the trainer environment and no --verl: written for the newest release, verl's reward loop.
    assert.match(
      r.out,
      /written for verl 0\.9\.1 \(the newest known; --verl for another\), scoring through verl's per-sample reward loop/,
    );
    assert.equal(overrides['reward.custom_reward_function.name'], 'compute_score');
    assert.match(readFileSync(join(out, 'run_verl.sh'), 'utf8'), /^JOB_VERL=0\.9\.1$/m);
    const legacy = await kimina([...args, '--verl', '0.5.0'], { KIMINA_TRAINER_PYTHON: python, KIMINA_HOME: home });
    assert.equal(legacy.code, 0, legacy.err);
    assert.match(legacy.out, /written for verl 0\.5\.0 \(from the flag\), scoring through the batch reward/);
    const o05 = JSON.parse(readFileSync(join(out, 'overrides.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(o05['reward_model.reward_manager'], 'batch');
    assert.equal(o05['reward_model.launch_reward_fn_async'], true);
    const unknown = await kimina([...args, '--verl', '0.10.0'], { KIMINA_TRAINER_PYTHON: python, KIMINA_HOME: home });
    assert.equal(unknown.code, 1);
    assert.match(
      unknown.err,
      /verl 0\.10\.0 \(given with --verl\) is not a release the export knows how to write a job for/,
    );

    const deduped = await kimina(
      [
        ...args,
        '--dedupe',
        '--val',
        'held-out',
        '--set',
        'heldOutShare=0.5',
        '--set',
        'maxSteps=20',
        '--model',
        'AI-MO/Kimina-Prover-Distill-0.6B',
      ],
      { KIMINA_TRAINER_PYTHON: python, KIMINA_HOME: home },
    );
    assert.equal(deduped.code, 0, deduped.err);
    assert.match(deduped.out, /2 exact repeats dropped/);
    assert.match(deduped.out, /validation prompts from kimina\/held-out/);
    const o2 = JSON.parse(readFileSync(join(out, 'overrides.json'), 'utf8')) as Record<string, unknown>;
    assert.equal(o2['trainer.total_training_steps'], 20);
    assert.equal(o2['trainer.total_epochs'], undefined);
    assert.equal(o2['trainer.experiment_name'], 'kimina-prover-0.6B');

    const noUrl = await kimina(['train', 'export-verl', '--out', out, '--prompts', file]);
    assert.equal(noUrl.code, 1);
    assert.match(noUrl.err, /--reward-url/);
  },
);

test('trainer setup on an existing environment returns at once with its versions', { timeout: 60_000 }, async () => {
  await testPython();
  const r = await kimina(['trainer', 'setup', '--venv', testVenv]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /already up to date/);
  assert.match(r.out, /trl 1\.16\.0/);
  const noPython = await kimina([
    'trainer',
    'setup',
    '--venv',
    join(backend.dir, 'fresh-venv'),
    '--python',
    'python-does-not-exist',
  ]);
  assert.equal(noPython.code, 1);
  assert.match(noPython.err, /no usable Python for the trainer: python-does-not-exist: not found/);
});
