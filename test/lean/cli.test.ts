// `kimina check`, `kimina serve` and `kimina lean` as a user runs them, over the stand-in REPL (test double).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';
import { MAIN_AFTER, fakeLake, makeReplFixture, type ReplFixture } from './replFixture';

const root = join(__dirname, '..', '..');
const cli = join(root, 'backend', 'cli.ts');

function kimina(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, ['--import', 'tsx', cli, ...args], {
    cwd: root,
    encoding: 'utf8',
    timeout: 60_000,
    env: {
      ...process.env,
      KIMINA_REPL_COMMAND: standInReplCommand(),
      KIMINA_SANDBOX: 'none',
      KIMINA_MAX_REPLS: '2',
      ...env,
    },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** Running (not gone, not a zombie waiting for a reaper). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function tempFile(name: string, text: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-check-'));
  const file = join(dir, name);
  writeFileSync(file, text);
  return file;
}

test('kimina check: one verdict per declaration, exit 1 when any is not valid', () => {
  const file = tempFile(
    'Mixed.lean',
    [
      'import Mathlib',
      '',
      'theorem good (a : ℕ) : a = a := by simp',
      '',
      'theorem holey : 1 = 1 := by',
      '  sorry',
      '',
      'lemma broken : True := bogus_z',
      '',
      'example : 2 = 2 := by omega',
    ].join('\n'),
  );
  const r = kimina(['check', file]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /Mixed\.lean:3: theorem good valid: axioms clean/);
  assert.match(r.stdout, /Mixed\.lean:5: theorem holey sorry/);
  assert.match(r.stdout, /Mixed\.lean:8: lemma broken lean_error: line 8: Unknown identifier `bogus_z`/);
  assert.match(r.stdout, /Mixed\.lean:10: example valid: axioms clean \(propext\)/);
  assert.match(r.stdout, /2\/4 declarations valid/);
});

test("kimina check on the reviewer's mutual file: names Foo.c as the declaration using sorryAx, exits 1", () => {
  const r = kimina(['check', join(root, 'test', 'lean', 'data', 'ReviewerMutual.lean')]);
  assert.equal(r.code, 1, r.stderr + r.stdout);
  assert.match(r.stdout, /ReviewerMutual\.lean:3: theorem c valid/);
  assert.match(r.stdout, /ReviewerMutual\.lean:8: theorem Foo\.a valid/);
  assert.match(r.stdout, /ReviewerMutual\.lean:12: theorem Foo\.c sorry/);
  assert.match(r.stdout, /ReviewerMutual\.lean: sorry: /);
  assert.match(r.stdout, /3\/4 declarations valid/);
});

test('kimina check --json; exit 0 when everything is valid', () => {
  const file = tempFile('Good.lean', 'theorem a : 1 = 1 := by simp\ntheorem b : True := trivial');
  const r = kimina(['check', '--json', file]);
  assert.equal(r.code, 0, r.stderr + r.stdout);
  const out = JSON.parse(r.stdout);
  assert.equal(out.ok, true);
  assert.deepEqual(
    out.files[0].declarations.map((d: { name: string; status: string }) => [d.name, d.status]),
    [
      ['a', 'valid'],
      ['b', 'valid'],
    ],
  );
});

test("kimina check --verdict strict|recipe: an explicit sorryAx is sorry strictly, valid by kimina-client's rule", () => {
  const file = tempFile(
    'Modes.lean',
    'import Mathlib\n\ntheorem target : (1 : ℕ) = 2 := by\n  exact sorryAx _ false\n\ntheorem broken : True := bogus_z',
  );
  const strict = kimina(['check', '--json', file]);
  assert.equal(strict.code, 1, strict.stderr);
  const s = JSON.parse(strict.stdout);
  assert.equal(s.mode, 'strict');
  assert.deepEqual(
    s.files[0].declarations.map((d: { name: string; status: string }) => [d.name, d.status]),
    [
      ['target', 'sorry'],
      ['broken', 'lean_error'],
    ],
  );
  assert.deepEqual(
    JSON.parse(kimina(['check', '--json', '--verdict', 'strict', file]).stdout).files[0].declarations,
    s.files[0].declarations,
  );
  const recipe = kimina(['check', '--json', '--verdict', 'recipe', file]);
  assert.equal(recipe.code, 1, 'the Lean error still fails the file');
  const r = JSON.parse(recipe.stdout);
  assert.equal(r.mode, 'recipe');
  assert.deepEqual(
    r.files[0].declarations.map((d: { name: string; status: string }) => [d.name, d.status]),
    [
      ['target', 'valid'],
      ['broken', 'lean_error'],
    ],
  );
  const alone = tempFile(
    'SorryAx.lean',
    'import Mathlib\n\ntheorem target : (1 : ℕ) = 2 := by\n  exact sorryAx _ false',
  );
  assert.equal(kimina(['check', alone]).code, 1);
  const text = kimina(['check', '--verdict', 'recipe', alone]);
  assert.equal(text.code, 0, text.stdout + text.stderr);
  assert.match(text.stdout, /SorryAx\.lean:3: theorem target valid: no error, no sorry listed \(kimina-client's rule/);
  assert.match(text.stdout, /1\/1 declarations valid \(recipe verdict/);
  const bad = kimina(['check', '--verdict', 'lenient', alone]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /verdict mode must be strict or recipe/);
});

test("kimina check --untrusted: a rejected file names the rule at the offending declaration; as the user's file the audit refuses it", () => {
  const file = tempFile('Cheat.lean', 'theorem ok : True := trivial\n\ntheorem t : 2 + 2 = 4 := by native_decide');
  const r = kimina(['check', '--untrusted', file]);
  assert.equal(r.code, 1);
  assert.match(r.stdout, /Cheat\.lean:3: theorem t rejected: rejected before Lean: 'native_decide' is not allowed/);
  // the user's own file reaches Lean; the axiom audit still refuses what native_decide adds
  const own = kimina(['check', file]);
  assert.equal(own.code, 1);
  assert.match(own.stdout, /Cheat\.lean:1: theorem ok valid/);
  assert.match(
    own.stdout,
    /Cheat\.lean:3: theorem t rejected: depends on axioms outside the allow-list: Lean\.ofReduceBool/,
  );
});

/** A module file as real projects write them: copyright, `module`, `public import`s, its own notation and macros. */
const userModuleFile = [
  '/-',
  'Copyright (c) 2026 Someone. All rights reserved.',
  'Released under Apache 2.0 license as described in the file LICENSE.',
  '-/',
  'module',
  '',
  'public import Mathlib.Order.Basic',
  'public import Mathlib.Tactic.Ring',
  '',
  '/-!',
  '# Own notation and macros',
  '-/',
  '',
  '@[expose] public section',
  '',
  'namespace Own',
  '',
  'set_option doc.verso.suggestions true',
  '',
  'notation "twice " x => x + x',
  'infixl:65 " +++ " => fun a b => a + b',
  'macro "my_simp" : tactic => `(tactic| simp)',
  '',
  '#eval 1 + 1',
  '',
  'attribute [local simp] Nat.add_comm',
  '',
  'theorem uses_macro (a : ℕ) : a + 0 = a := by',
  '  my_simp',
  '',
  'def double (n : ℕ) : ℕ := n + n',
  '',
  'theorem double_eq (n : ℕ) : double n = n + n := by',
  '  simp [double]',
  '',
  'end Own',
  '',
  'end',
].join('\n');

test("kimina check: the user's module file with its own notation/macro/set_option/#eval/@[expose] reaches Lean, every declaration judged", () => {
  const file = tempFile('Own.lean', userModuleFile);
  const r = kimina(['check', file]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.doesNotMatch(r.stdout, /before Lean/);
  assert.match(r.stdout, /Own\.lean:28: theorem Own\.uses_macro valid: axioms clean/);
  assert.match(r.stdout, /Own\.lean:31: def Own\.double valid/);
  assert.match(r.stdout, /Own\.lean:33: theorem Own\.double_eq valid/);
  assert.match(r.stdout, /3\/3 declarations valid/);
  // the same text from nobody: the filter refuses the notation, macro, option and #eval
  const untrusted = kimina(['check', '--untrusted', file]);
  assert.equal(untrusted.code, 1);
  assert.match(untrusted.stdout, /rejected before Lean: 'notation' is not allowed/);
  assert.doesNotMatch(untrusted.stdout, /'import' after the header|meta namespace 'Mathlib'/);
});

test('kimina check on a module file for a Lean before v4.30: the audit answers outside module mode, a sorry is still found', () => {
  const file = tempFile(
    'OldModule.lean',
    userModuleFile.replace(
      'theorem double_eq (n : ℕ) : double n = n + n := by\n  simp [double]',
      'theorem double_eq (n : ℕ) : double n = n + n := by\n  sorry',
    ),
  );
  const r = kimina(['check', file], { KIMINA_REPL_COMMAND: `STAND_IN_LEAN=4.29 ${standInReplCommand()}` });
  assert.equal(r.code, 1);
  assert.match(r.stdout, /OldModule\.lean:28: theorem Own\.uses_macro valid: axioms clean/);
  assert.match(r.stdout, /OldModule\.lean:33: theorem Own\.double_eq sorry/);
  assert.doesNotMatch(r.stdout, /cannot use `#print axioms`|not audited/);
});

test('kimina check: missing file -> exit 2 with the reason', () => {
  const r = kimina(['check', '/nonexistent/X.lean']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /cannot read \/nonexistent\/X.lean/);
});

test('kimina serve: prints the URL, answers /api/check, stops REPLs on SIGINT', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-serve-'));
  const log = join(dir, 'repl.log');
  const child = spawn(process.execPath, ['--import', 'tsx', cli, 'serve', '--port', '0'], {
    cwd: root,
    env: {
      ...process.env,
      KIMINA_REPL_COMMAND: `STAND_IN_LOG=${log} ${standInReplCommand()}`,
      KIMINA_SANDBOX: 'none',
      KIMINA_MAX_REPLS: '1',
      KIMINA_HOME: dir,
    },
  });
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (c: Buffer) => {
        out += c.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) resolve(m[1]);
      });
      child.on('exit', (code) => reject(new Error(`serve exited early (${code})`)));
      setTimeout(() => reject(new Error('no URL printed')), 20_000);
    });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+$/);
    const { token } = JSON.parse(readFileSync(join(dir, 'serve.json'), 'utf8')) as { token: string }; // a random one: none is configured
    const res = await fetch(`${url}/api/check`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
      body: JSON.stringify({ snippets: [{ id: 'a', code: 'theorem t : True := trivial' }] }),
    });
    assert.equal(res.status, 200);
    const body = (await res.json()) as { results: { response: { env: number } }[] };
    assert.equal(body.results[0].response.env, 1);
    const replPid = Number(readFileSync(log, 'utf8').split(' ')[0]);
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    child.kill('SIGINT');
    assert.equal(await exited, 0);
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(!alive(replPid), 'the REPL was stopped with the server');
  } finally {
    child.kill('SIGKILL');
  }
});

test('kimina serve refuses a non-loopback host without a token', () => {
  const r = kimina(['serve', '--host', '0.0.0.0', '--port', '0'], { KIMINA_API_TOKEN: '', LEAN_SERVER_API_KEY: '' });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /refusing to listen on 0.0.0.0 without an API token/);
});

let fixture: ReplFixture | undefined;
function setupEnv(dir: string): Record<string, string> {
  fixture ??= makeReplFixture();
  return {
    PATH: `${fakeLake(dir)}:${process.env.PATH}`,
    KIMINA_HOME: join(dir, 'home'),
    KIMINA_REPL_COMMAND: '',
    KIMINA_REPL_GIT_URL: fixture.dir,
    KIMINA_REPL_FLUSH_FIX: fixture.flushFix,
  };
}

function leanProject(dir: string, release: string, manifest?: object): string {
  const project = join(dir, `proj-${release}`);
  mkdirSync(project, { recursive: true });
  writeFileSync(join(project, 'lean-toolchain'), `leanprover/lean4:${release}\n`);
  if (manifest) writeFileSync(join(project, 'lake-manifest.json'), JSON.stringify(manifest));
  return project;
}

test('kimina lean setup: resolves the repl revision, builds with progress, and the verifier then finds the binary', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-setup-'));
  const project = leanProject(dir, 'v4.24.0');
  const env = setupEnv(dir);
  const r = kimina(['lean', 'setup', '--project', project], env);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /\[1\/4\] cloning /);
  assert.match(r.stderr, /\[2\/4\] repl for v4\.24\.0: tag v4\.24\.0 \([0-9a-f]{12}\); has the flush fix/);
  assert.match(r.stderr, /\[3\/4\] lake build/);
  assert.match(r.stderr, /Building \(TEST DOUBLE\)/);
  const binary = r.stdout.trim();
  assert.equal(binary, join(dir, 'home', 'repl', 'v4.24.0', '.lake', 'build', 'bin', 'repl'));
  assert.ok(existsSync(binary));
  const status = kimina(['lean', 'status', '--project', project], env);
  assert.match(status.stdout, new RegExp(`REPL pool, lake env ${binary.replace(/[.]/g, '\\.')}`));
  const again = kimina(['lean', 'setup', '--project', project], env);
  assert.match(again.stderr, /already built \(tag v4\.24\.0/);
  // `lake --version` ran inside the project, where the elan-like lake double picks the project's toolchain
  // (elsewhere elan without a default toolchain reports lake missing), the build inside the repl folder.
  const runs = lakeRuns(dir);
  const versions = runs.filter((r) => r.args === '--version');
  assert.ok(versions.length > 0, 'lake --version ran');
  for (const v of versions) {
    assert.equal(realpathSync(v.cwd), realpathSync(project), `lake --version ran in ${v.cwd}`);
    assert.equal(v.toolchain, 'leanprover/lean4:v4.24.0');
  }
  const build = runs.find((r) => r.args === 'build');
  assert.equal(realpathSync(build!.cwd), realpathSync(join(dir, 'home', 'repl', 'v4.24.0')));
});

/** The lake double's runs: arguments, working folder, the toolchain elan would pick there ('none': refused). */
function lakeRuns(dir: string): Array<{ args: string; cwd: string; toolchain: string }> {
  return readFileSync(join(dir, 'lake-runs.log'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [args, cwd, toolchain] = l.split('\t');
      return { args, cwd, toolchain };
    });
}

test('the lake double answers as elan does outside a project with no default toolchain', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-lake-'));
  const lake = join(fakeLake(dir), 'lake');
  const outside = spawnSync(lake, ['--version'], { cwd: dir, encoding: 'utf8', env: { PATH: process.env.PATH } });
  assert.equal(outside.status, 1);
  assert.match(outside.stderr, /^error: no default toolchain configured/);
  assert.deepEqual(lakeRuns(dir), [{ args: '--version', cwd: dir, toolchain: 'none' }]);
});

test('kimina lean setup: the flush fix where ancestry says it is missing, branches, master commits, and v4.12.0 from the nearest older source', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-setup-'));
  const env = setupEnv(dir);
  const main = (release: string) => readFileSync(join(dir, 'home', 'repl', release, 'REPL', 'Main.lean'), 'utf8');
  const v49 = kimina(['lean', 'setup', '--project', leanProject(dir, 'v4.9.0')], env);
  assert.equal(v49.code, 0, v49.stderr);
  assert.match(v49.stderr, /tag v4\.9\.0 .*flush fix [0-9a-f]{7} applied \(missing by ancestry\)/);
  assert.equal(main('v4.9.0'), MAIN_AFTER);
  const rc = kimina(['lean', 'setup', '--project', leanProject(dir, 'v4.10.0-rc1')], env);
  assert.match(rc.stderr, /tag v4\.10\.0-rc1 .*flush fix [0-9a-f]{7} applied/);
  const v411 = kimina(['lean', 'setup', '--project', leanProject(dir, 'v4.11.0')], env);
  assert.equal(v411.code, 0, v411.stderr);
  assert.match(v411.stderr, /repl for v4\.11\.0: master master \(([0-9a-f]{12})\); has the flush fix/);
  assert.equal(main('v4.11.0'), MAIN_AFTER);
  const v420 = kimina(['lean', 'setup', '--project', leanProject(dir, 'v4.20.0')], env);
  assert.match(v420.stderr, /repl for v4\.20\.0: branch bump_to_v4\.20\.0 /);
  const v412 = kimina(['lean', 'setup', '--project', leanProject(dir, 'v4.12.0')], env);
  assert.equal(v412.code, 0, v412.stderr);
  assert.match(
    v412.stderr,
    /repl has no revision for v4\.12\.0: building the nearest older source, [0-9a-f]{12} \(made for v4\.11\.0\), with the project's toolchain leanprover\/lean4:v4\.12\.0/,
  );
});

// Releases repl never named: Mathlib's stable v4.29.1 and v4.32.2 (out after repl's master moved on) and one newer
// than the fixture's snapshot (8948401, 2026-08-03). Each is built from the nearest older source with the project's
// own toolchain, smoke-tested, and its provenance recorded and shown by `kimina lean status`.
for (const [release, madeFor, commit] of [
  ['v4.29.1', 'v4.29.0', '495777293cb9cc3c62787a8c11393da1a9dd9505'],
  ['v4.32.2', 'v4.32.0', '68a3b3a059787a7db44fb1e6281e4a657efee470'],
  ['v4.34.0-rc1', 'v4.33.0-rc2', '8948401ab4924499421c94b7facdfca5ff27d81d'],
]) {
  test(`kimina lean setup ${release}: repl has no revision; the source made for ${madeFor} is built with the project's toolchain, smoke-tested, and its provenance shown`, () => {
    const dir = mkdtempSync(join(tmpdir(), 'kimina-setup-'));
    const env = setupEnv(dir);
    const project = leanProject(dir, release);
    const r = kimina(['lean', 'setup', '--project', project], env);
    assert.equal(r.code, 0, r.stderr);
    const generated = fixture!.generated.get(commit)!;
    assert.match(
      r.stderr,
      new RegExp(
        `repl has no revision for ${release.replace(/\./g, '\\.')}: building the nearest older source, ${generated.slice(0, 12)} \\(made for ${madeFor.replace(/\./g, '\\.')}\\)`,
      ),
    );
    assert.match(r.stderr, /smoke test passed/);
    const replDir = join(dir, 'home', 'repl', release);
    // Built in the repl folder on the project's toolchain (the lake double picks it as elan does).
    assert.equal(readFileSync(join(replDir, 'lean-toolchain'), 'utf8').trim(), `leanprover/lean4:${release}`);
    const runs = lakeRuns(dir);
    const build = runs.find((x) => x.args === 'build');
    assert.equal(realpathSync(build!.cwd), realpathSync(replDir));
    assert.equal(build!.toolchain, `leanprover/lean4:${release}`);
    // The smoke test ran the binary as the verifier does: lake env inside the project.
    const smoke = runs.find((x) => x.args.startsWith('env '));
    assert.ok(smoke, 'smoke test ran through lake env');
    assert.equal(realpathSync(smoke.cwd), realpathSync(project));
    const marker = JSON.parse(readFileSync(join(replDir, '.kimina-setup.json'), 'utf8'));
    assert.equal(marker.how, 'nearest');
    assert.equal(marker.provenance.commit, generated);
    assert.equal(marker.provenance.madeFor, madeFor);
    assert.equal(marker.provenance.builtWith, `leanprover/lean4:${release}`);
    const status = kimina(['lean', 'status', '--project', project], env);
    assert.match(
      status.stdout,
      new RegExp(
        `repl: +repl ${generated.slice(0, 12)} \\(nearest ${madeFor.replace(/\./g, '\\.')}\\): repl has no revision for ${release.replace(/\./g, '\\.')}; the source made for ${madeFor.replace(/\./g, '\\.')}, built with the project's toolchain leanprover/lean4:${release.replace(/\./g, '\\.')}, smoke test passed 20`,
      ),
    );
    assert.match(status.stdout, /checks by: REPL pool, lake env /);
    const again = kimina(['lean', 'setup', '--project', project], env);
    assert.match(again.stderr, new RegExp(`already built \\(nearest ${madeFor.replace(/\./g, '\\.')}`));
  });
}

test('kimina lean setup: a nearest older source that does not build, or builds but fails the smoke test, is refused with its log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-setup-'));
  const env = setupEnv(dir);
  const broken = kimina(['lean', 'setup', '--project', leanProject(dir, 'v4.32.2')], {
    ...env,
    LAKE_DOUBLE_BREAKS_BUILD_ON: 'leanprover/lean4:v4.32.2',
  });
  assert.equal(broken.code, 1);
  assert.match(
    broken.stderr,
    /unsupported: repl has no revision for v4\.32\.2, and its nearest older source \([0-9a-f]{12}, made for v4\.32\.0\) does not build with leanprover\/lean4:v4\.32\.2/,
  );
  assert.match(broken.stderr, /unknown constant IO\.FS\.Stream\.flush \(TEST DOUBLE\)/, 'the build log is shown');
  const log = join(dir, 'home', 'repl', 'v4.32.2.log');
  assert.match(readFileSync(log, 'utf8'), /\$ lake build .*\n(.|\n)*error: build failed/);
  assert.ok(!existsSync(join(dir, 'home', 'repl', 'v4.32.2')), 'no half-set-up folder left');

  const wrong = kimina(['lean', 'setup', '--project', leanProject(dir, 'v4.34.0-rc1')], {
    ...env,
    LAKE_DOUBLE_BREAKS_REPL_ON: 'leanprover/lean4:v4.34.0-rc1',
  });
  assert.equal(wrong.code, 1);
  assert.match(
    wrong.stderr,
    /built with leanprover\/lean4:v4\.34\.0-rc1 but failed the smoke test: the command was not answered with an environment/,
  );
  assert.match(
    wrong.stderr,
    /uncaught exception: unknown declaration kimina_smoke \(TEST DOUBLE\)/,
    'the exchange is shown',
  );
  assert.ok(!existsSync(join(dir, 'home', 'repl', 'v4.34.0-rc1')));
  const status = kimina(['lean', 'status', '--project', leanProject(dir, 'v4.34.0-rc1')], env);
  assert.match(status.stdout, /checks by: lake env lean --json per snippet/);
});

test('kimina lean setup: an unbuilt Mathlib project is reported with the command that builds it; --build runs it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-setup-'));
  const env = setupEnv(dir);
  const manifest = {
    version: 7,
    packagesDir: '.lake/packages',
    name: 'proj',
    packages: [{ name: 'mathlib', type: 'git' }],
  };
  const project = leanProject(dir, 'v4.24.0', manifest);
  const r = kimina(['lean', 'setup', '--project', project], env);
  assert.equal(r.code, 3, r.stderr);
  assert.match(r.stderr, /not built for import Mathlib \(no \.olean found\).*lake exe cache get && lake build/);
  assert.equal(r.stdout.trim(), join(dir, 'home', 'repl', 'v4.24.0', '.lake', 'build', 'bin', 'repl'));
  const built = kimina(['lean', 'setup', '--project', project, '--build'], env);
  assert.equal(built.code, 0, built.stderr);
  assert.match(built.stderr, /\[4\/4\] building the project for import Mathlib: lake exe cache get && lake build/);
  assert.match(built.stderr, /Downloading Mathlib's cache \(TEST DOUBLE\)/);
  assert.match(built.stderr, /project built for import Mathlib/);
  const log = readFileSync(join(dir, 'lake.log'), 'utf8');
  assert.ok(log.indexOf('lake exe cache get') < log.lastIndexOf('lake build'), log);
});

test('kimina lean setup: clear errors offline, without lake, and outside a Lean project', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kimina-setup-'));
  writeFileSync(join(dir, 'lean-toolchain'), 'leanprover/lean4:v4.24.0\n');
  const offline = kimina(['lean', 'setup', '--project', dir], {
    ...setupEnv(dir),
    KIMINA_REPL_GIT_URL: 'https://github.invalid/leanprover-community/repl',
  });
  assert.equal(offline.code, 1);
  assert.match(offline.stderr, /could not clone .* \(offline\?\): .*github\.invalid/);
  const noLake = kimina(['lean', 'setup', '--project', dir], { PATH: '/nonexistent', KIMINA_HOME: join(dir, 'home') });
  assert.match(noLake.stderr, /'lake' was not found on PATH \(ran in .*\)\. Install Lean with elan/);
  const notProject = kimina(['lean', 'setup', '--project', tmpdir()]);
  assert.match(notProject.stderr, /no lean-toolchain in/);
});
