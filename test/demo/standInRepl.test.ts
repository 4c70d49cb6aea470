// The stand-in REPL (test double) keeps the real REPL's protocol: other suites rely on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { standInReplScript } from '../../backend/demo/stand-in-repl/index';

function talk(input: string, lean?: string) {
  const env = { ...process.env, ...(lean ? { STAND_IN_LEAN: lean } : {}) };
  const r = spawnSync(process.execPath, [standInReplScript], { input, encoding: 'utf8', timeout: 10_000, env });
  const answers = r.stdout
    .split('\n\n')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => JSON.parse(s));
  return { code: r.status, answers, stderr: r.stderr };
}

test('framing: multi-line JSON requests, comment requests skipped, exit 0 on EOF', () => {
  const r = talk(
    '{"cmd":\n  "import Mathlib"}\n\n-- a comment request\n\n# another\n\n{"cmd": "theorem t : True := trivial",\n "env": 0}\n\n',
  );
  assert.equal(r.code, 0);
  assert.deepEqual(r.answers, [{ env: 0 }, { env: 1 }]);
});

test('env ids increment; unknown env; imports only in the first env-less command', () => {
  const r = talk(
    [
      '{"cmd": "import Mathlib"}',
      '{"cmd": "import Aesop", "env": 0}',
      '{"cmd": "#check Nat", "env": 7}',
      '{"cmd": "#check Nat", "env": 1}',
    ].join('\n\n') + '\n\n',
  );
  assert.equal(r.answers[0].env, 0);
  assert.equal(r.answers[1].env, 1);
  assert.match(r.answers[1].messages[0].data, /invalid 'import' command/);
  assert.deepEqual(r.answers[2], { message: 'Unknown environment.' });
  assert.equal(r.answers[3].env, 2);
});

test('sorries with goals and codepoint positions; admit only warns; axioms per declaration', () => {
  const cmd =
    'theorem 𝔽t : True := by sorry\ntheorem u : 1 = 1 := by admit\ntheorem v : 1 = 1 := by simp\n#print axioms 𝔽t\n#print axioms v';
  const r = talk(JSON.stringify({ cmd }) + '\n\n');
  const a = r.answers[0];
  assert.deepEqual(a.sorries, [
    {
      pos: { line: 1, column: 24 },
      endPos: { line: 1, column: 29 },
      goal: '⊢ True',
      proofState: 0,
    },
  ]);
  assert.equal(a.messages.filter((m: { data: string }) => m.data === 'declaration uses `sorry`').length, 2);
  assert.ok(a.messages.some((m: { data: string }) => m.data === "'𝔽t' depends on axioms: [sorryAx]"));
  assert.ok(
    a.messages.some(
      (m: { data: string }) => m.data === "'v' depends on axioms: [Classical.choice, Quot.sound, propext]",
    ),
  );
});

test('unparsable input ends the process with an error, as the real REPL', () => {
  const r = talk('{"cmd": \n\n');
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Could not parse JSON/);
});

const data = (answer: { messages?: { data: string; severity: string }[] }) =>
  (answer.messages ?? []).map((m) => `${m.severity}: ${m.data}`);

test('two Lean generations: current texts by default, v4.15 texts with STAND_IN_LEAN=4.15', () => {
  const cmd =
    JSON.stringify({ cmd: 'theorem a : True := sorry\ntheorem b : True := bogus_b\n#print axioms nope' }) + '\n\n';
  assert.deepEqual(data(talk(cmd).answers[0]), [
    'warning: declaration uses `sorry`',
    'error: Unknown identifier `bogus_b`',
    'error: Unknown constant `nope`',
  ]);
  assert.deepEqual(data(talk(cmd, '4.15').answers[0]), [
    "warning: declaration uses 'sorry'",
    "error: unknown identifier 'bogus_b'",
    "error: unknown constant 'nope'",
  ]);
});

test('no sorry warning for a declaration with an error; warn.sorry false silences it; #guard_msgs swallows', () => {
  const r = talk(
    [
      JSON.stringify({ cmd: 'theorem a : True := by\n  sorry\n  exact bogus_a' }),
      JSON.stringify({
        cmd: 'set_option warn.sorry false in\ntheorem b : True := sorryAx _\ntheorem c : True := sorryAx _',
      }),
      JSON.stringify({ cmd: '#guard_msgs in\ntheorem d : True := sorryAx _\n#print axioms d' }),
    ].join('\n\n') + '\n\n',
  );
  assert.deepEqual(data(r.answers[0]), ['error: Unknown identifier `bogus_a`']);
  assert.equal(r.answers[0].sorries.length, 1);
  assert.deepEqual(data(r.answers[1]), ['warning: declaration uses `sorry`']);
  assert.equal(r.answers[1].messages[0].pos.line, 3);
  assert.deepEqual(data(r.answers[2]), ["info: 'd' depends on axioms: [sorryAx]"]);
});

test('every spelling of sorryAx is the axiom: `#print axioms` lists it, `sorries` stays empty (only the word `sorry`)', () => {
  const spellings = [
    '_root_.sorryAx _ false',
    '«sorryAx» _ false',
    '@sorryAx _ false',
    'sorryAx.{0} _ false',
    '@_root_.«sorryAx».{0} _ false',
  ];
  const cmd = spellings
    .map(
      (w, i) =>
        `set_option warn.sorry false in\ntheorem t${i} : (1 : Nat) = 2 := by\n  exact ${w}\n#print axioms t${i}`,
    )
    .join('\n');
  const r = talk(JSON.stringify({ cmd }) + '\n\n');
  assert.deepEqual(
    data(r.answers[0]),
    spellings.map((_, i) => `info: 't${i}' depends on axioms: [sorryAx]`),
  );
  assert.equal(r.answers[0].sorries, undefined);
});

test('«»-named theorems and mutual blocks resolve as Lean does: `#print axioms _root_.«two plus two»`, `Foo.c` after `mutual … end`', () => {
  const cmd =
    'theorem «two plus two» : 2 + 2 = 4 := rfl\n#print axioms _root_.«two plus two»\n#print axioms «two plus two»\nnamespace Foo\nmutual\ntheorem a : True := trivial\nend\ntheorem c : False := sorryAx False\nend Foo\n#print axioms Foo.c\n#print axioms _root_.Foo.«a»';
  const r = talk(JSON.stringify({ cmd }) + '\n\n');
  assert.deepEqual(data(r.answers[0]), [
    "info: '«two plus two»' does not depend on any axioms",
    "info: '«two plus two»' does not depend on any axioms",
    'warning: declaration uses `sorry`',
    "info: 'Foo.c' depends on axioms: [sorryAx]",
    "info: 'Foo.a' does not depend on any axioms",
  ]);
});

test('namespaces, open and _root_ resolve as Lean does; examples add nothing; theorems see only the variables they mention', () => {
  const cmd =
    'namespace Foo\ntheorem t : True := sorryAx _\nend Foo\ntheorem t : True := trivial\nopen Foo\n#print axioms t\n#print axioms _root_.t\nexample : True := trivial\n#print axioms _example\nsection\nvariable (n : Nat)\ndef d : Nat := n\ntheorem w : True := by exact n\nend';
  const r = talk(JSON.stringify({ cmd }) + '\n\n');
  assert.deepEqual(data(r.answers[0]), [
    'warning: declaration uses `sorry`',
    "info: 't' does not depend on any axioms",
    "info: 'Foo.t' depends on axioms: [sorryAx]",
    "info: 't' does not depend on any axioms",
    'error: Unknown constant `_example`',
    'error: Unknown identifier `n`',
  ]);
});

test('a structure, class or inductive is a constant `#print axioms` answers for, under its namespace (the Mathematics in Lean audit)', () => {
  const cmd =
    'namespace C06S01\nnoncomputable section\n@[ext]\nstructure Point where\n  x : Nat\n  y : Nat\nclass Pointy (α : Type) where\n  pt : α\nattribute [class] Point\nclass inductive Two\n  | a | b\ninductive Three\n  | a | b | c\nend\nend C06S01\n#print axioms _root_.C06S01.Point\n#print axioms C06S01.Pointy\n#print axioms C06S01.Two\n#print axioms C06S01.Three';
  const r = talk(JSON.stringify({ cmd }) + '\n\n');
  assert.deepEqual(data(r.answers[0]), [
    "info: 'C06S01.Point' does not depend on any axioms",
    "info: 'C06S01.Pointy' does not depend on any axioms",
    "info: 'C06S01.Two' does not depend on any axioms",
    "info: 'C06S01.Three' does not depend on any axioms",
  ]);
});

const moduleCmd = JSON.stringify({
  cmd: '/- Copyright (c) 2026 Someone -/\nmodule\n\npublic import Mathlib.Order.Basic\nmeta import Lean\nimport all Own.Basic\n\n@[expose] public section\n\ntheorem t : (1 : ℕ) = 1 := by\n  simp\n\nend',
});

test('module headers as Lean reads them: comments, module, public/meta/all imports (one module each); the body is the rest', () => {
  const r = talk(`${moduleCmd}\n\n{"cmd": "#check t", "env": 0}\n\n`);
  assert.equal(r.code, 0);
  assert.deepEqual(r.answers[0], { env: 0 });
  assert.equal(r.answers[1].env, 1);
});

test('#print axioms in a module env: answered on current Lean; before v4.30 the error of lean4 Print.lean at `#print`, also on envs built on it', () => {
  const input = `${moduleCmd}\n\n{"cmd": "#print axioms t", "env": 0}\n\n{"cmd": "theorem u : True := trivial", "env": 0}\n\n{"cmd": "#print axioms u", "env": 2}\n\n`;
  const current = talk(input);
  assert.equal(current.answers[1].messages[0].data, "'t' depends on axioms: [Classical.choice, Quot.sound, propext]");
  const older = talk(input, '4.29');
  const refused = {
    pos: { line: 1, column: 0 },
    endPos: { line: 1, column: 6 },
    severity: 'error',
    data: 'cannot use `#print axioms` in a `module`; consider temporarily removing the `module` header or placing the command in a separate file',
  };
  assert.deepEqual(older.answers[1].messages, [refused]);
  assert.deepEqual(older.answers[3].messages, [refused]);
  // a file without `module` answers on those releases too
  const plain = talk('{"cmd": "theorem t : True := trivial"}\n\n{"cmd": "#print axioms t", "env": 0}\n\n', '4.29');
  assert.equal(plain.answers[1].messages[0].data, "'t' does not depend on any axioms");
});

test('pickleTo / unpickleEnvFrom answer as the REPL (same env; a new env, not a module env; unknown env)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'stand-in-pickle-'));
  const path = join(dir, 'a.olean');
  const r = talk(
    [
      moduleCmd,
      JSON.stringify({ pickleTo: path, env: 0 }),
      JSON.stringify({ unpickleEnvFrom: path }),
      '{"cmd": "#print axioms t", "env": 1}',
      JSON.stringify({ pickleTo: path, env: 9 }),
    ].join('\n\n') + '\n\n',
    '4.29',
  );
  // repl test/pickle_environment.expected.out: {"env": 0} for the pickle of env 0, then {"env": 1} for the unpickle
  assert.deepEqual(r.answers.slice(0, 3), [{ env: 0 }, { env: 0 }, { env: 1 }]);
  assert.equal(r.answers[3].messages[0].data, "'t' depends on axioms: [Classical.choice, Quot.sound, propext]");
  assert.deepEqual(r.answers[4], { message: 'Unknown environment.' });
});
