// The replaying REPL (a TEST DOUBLE of the Lean REPL) and its data: recorded commands are answered
// byte for byte, everything else gets an answer that can never pass a proof.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { recordingsFile, replayReplScript, type Recording } from '../fixtures/replay-repl/index';
import { declaredNames } from '../fixtures/replay-repl/replay-repl.mjs';
import { casesOf, expectedClass, knownMismatches, knownMismatchKey, leanVersions, recordings } from './replayCases';

/** Raw protocol client: sends a request, returns the answer text exactly as printed (without the blank line). */
class RawRepl {
  private readonly child: ChildProcessWithoutNullStreams;
  private out = '';
  private waiting: ((text: string) => void) | undefined;
  constructor(lean: string) {
    this.child = spawn(process.execPath, [replayReplScript], { env: { ...process.env, REPLAY_LEAN: lean } });
    this.child.stdout.setEncoding('utf8');
    this.child.stdout.on('data', (chunk: string) => {
      this.out += chunk;
      this.deliver();
    });
  }
  private deliver(): void {
    const end = this.out.indexOf('\n\n');
    if (end < 0 || !this.waiting) return;
    const text = this.out.slice(0, end);
    this.out = this.out.slice(end + 2);
    const w = this.waiting;
    this.waiting = undefined;
    w(text);
  }
  send(request: object | string): Promise<string> {
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.child.stdin.write(`${typeof request === 'string' ? request : JSON.stringify(request)}\n\n`);
      this.deliver();
    });
  }
  close(): void {
    this.child.kill();
  }
}

const withEnv = (answer: string, env: number): string => answer.replace(/"env": \d+\}$/, `"env": ${env}}`);

test('the data: at least 100 recorded commands from the real REPL, each with its source and a parsable answer', () => {
  assert.ok(recordings.recordings.length >= 100, `only ${recordings.recordings.length} recordings`);
  const ids = new Set<string>();
  for (const r of recordings.recordings) {
    assert.ok(!ids.has(r.id), `duplicate id ${r.id}`);
    ids.add(r.id);
    assert.match(r.commit, /^[0-9a-f]{40}$/);
    assert.match(r.path, /^test\/.*\.in$/);
    assert.equal(r.answerPath, r.path.replace(/\.in$/, '.expected.out'));
    assert.equal(typeof r.request.cmd, 'string');
    assert.match(r.answer, /"env": \d+\}$/, `${r.id}: the answer ends with its env`);
    assert.doesNotThrow(() => JSON.parse(r.answer));
    assert.ok(leanVersions.includes(r.lean));
  }
  for (const s of recordings.snapshots) {
    const skipped = Object.values(s.skipped).reduce((a, b) => a + b, 0);
    assert.equal(s.kept + skipped, s.commands, `${s.lean}: every command is kept or counted under a reason`);
    assert.equal(casesOf(s.lean).length, s.kept);
  }
  // the double's audit names no axiom but sorryAx: no recording may bring in another one
  for (const r of recordings.recordings)
    assert.doesNotMatch(r.request.cmd, /\b(axiom|native_decide|bv_decide|ofReduceBool|implemented_by|extern)\b/, r.id);
  // both generations of the sorry warning are in the data
  assert.ok(recordings.recordings.some((r) => r.answer.includes("declaration uses 'sorry'")));
  assert.ok(recordings.recordings.some((r) => r.answer.includes('declaration uses `sorry`')));
});

const mirror = process.env.LEAN_REPL_GIT_DIR;
test(
  'the data is what the converter makes from the REPL repository',
  {
    skip:
      mirror && existsSync(mirror)
        ? false
        : 'LEAN_REPL_GIT_DIR does not name a git directory of leanprover-community/repl',
  },
  () => {
    const out = join(mkdtempSync(join(tmpdir(), 'kimina-replay-')), 'recordings.json');
    const r = spawnSync(
      process.execPath,
      [join(__dirname, '..', '..', 'scripts', 'convert-repl-recordings.mjs'), mirror!, '--out', out],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(readFileSync(out, 'utf8'), readFileSync(recordingsFile, 'utf8'));
  },
);

test('every known mismatch names recorded cases', () => {
  const keys = new Set(recordings.recordings.map(knownMismatchKey));
  for (const k of Object.keys(knownMismatches)) assert.ok(keys.has(k), `knownMismatches: no recording ${k}`);
});

test('expectedClass: errors win, then sorries or the sorry warning in either spelling, else valid', () => {
  const msg = (severity: string, data: string) => ({
    severity,
    pos: { line: 1, column: 0 },
    endPos: { line: 1, column: 1 },
    data,
  });
  const answer = (o: object) => JSON.stringify({ ...o, env: 0 });
  assert.equal(expectedClass(answer({})), 'valid');
  assert.equal(
    expectedClass(answer({ messages: [msg('info', 'Nat : Type'), msg('warning', 'unused variable `h`')] })),
    'valid',
  );
  assert.equal(expectedClass(answer({ messages: [msg('warning', "declaration uses 'sorry'")] })), 'sorry');
  assert.equal(expectedClass(answer({ messages: [msg('warning', 'declaration uses `sorry`')] })), 'sorry');
  assert.equal(expectedClass(answer({ sorries: [{ goal: '⊢ False' }] })), 'sorry');
  assert.equal(
    expectedClass(answer({ sorries: [{ goal: '⊢ False' }], messages: [msg('error', 'unsolved goals')] })),
    'lean_error',
  );
  assert.equal(expectedClass(answer({ messages: [msg('info', "declaration uses 'sorry'")] })), 'valid');
});

for (const lean of leanVersions) {
  test(`the double on Lean ${lean}: every recording, sent as recorded, gets its recorded answer byte for byte`, async () => {
    const repl = new RawRepl(lean);
    try {
      let env = 0;
      const headers = new Map<string, number>();
      const bodies: Recording[] = [];
      for (const r of casesOf(lean)) {
        if (r.runsOn === null) {
          assert.equal(await repl.send({ cmd: r.request.cmd }), withEnv(r.answer, env), r.id);
          if (r.request.cmd.startsWith('import')) headers.set(r.request.cmd, env);
          env++;
        } else bodies.push(r);
      }
      for (const r of bodies) {
        const header = headers.get(r.runsOn!);
        assert.ok(header !== undefined, `${r.id}: its import header ${r.runsOn} is recorded too`);
        assert.equal(await repl.send({ cmd: r.request.cmd, env: header }), withEnv(r.answer, env++), r.id);
      }
    } finally {
      repl.close();
    }
  });
}

test('the double: the empty header, a body on it, audits in every form, unrecorded commands and unknown envs', async () => {
  const lean = 'v4.33.0-rc2';
  const sorryCase = casesOf(lean).find(
    (r) => r.runsOn === null && r.request.cmd === 'theorem foo (x : Int) : x = x := by sorry',
  )!;
  const cleanCase = casesOf(lean).find((r) => r.runsOn === null && r.request.cmd.startsWith('def X.Y : Nat := 37'))!;
  const failedCase = casesOf(lean).find(
    (r) => r.runsOn === null && r.request.cmd === 'def f : Nat := by apply Nat.succ',
  )!;
  const repl = new RawRepl(lean);
  try {
    assert.equal(await repl.send({ cmd: '' }), '{"env": 0}');
    assert.equal(await repl.send({ cmd: sorryCase.request.cmd, env: 0 }), withEnv(sorryCase.answer, 1));
    const audit = JSON.parse(
      await repl.send({ cmd: '#print axioms foo\n#print axioms _root_.foo\n#print axioms bar', env: 1 }),
    );
    assert.equal(audit.env, 2);
    assert.deepEqual(
      audit.messages.map((m: { severity: string; pos: { line: number }; data: string }) => [
        m.pos.line,
        m.severity,
        m.data.startsWith('replay double') ? 'double' : m.data,
      ]),
      [
        [1, 'info', "'foo' depends on axioms: [sorryAx]"],
        [2, 'info', "'foo' depends on axioms: [sorryAx]"],
        [3, 'error', 'double'],
      ],
    );
    assert.equal(await repl.send({ cmd: cleanCase.request.cmd, env: 0 }), withEnv(cleanCase.answer, 3));
    const clean = JSON.parse(await repl.send({ cmd: '#print axioms _root_.X.Y', env: 3 }));
    assert.deepEqual(clean.messages, [
      {
        severity: 'info',
        pos: { line: 1, column: 0 },
        endPos: { line: 1, column: 6 },
        data: "'X.Y' does not depend on any axioms",
      },
    ]);
    // a command Lean refused: the double does not know what Lean would say about its declarations
    assert.equal(await repl.send({ cmd: failedCase.request.cmd, env: 0 }), withEnv(failedCase.answer, 5));
    const failedAudit = JSON.parse(await repl.send({ cmd: '#print axioms f', env: 5 }));
    assert.equal(failedAudit.messages[0].severity, 'error');
    // never invents Lean's judgement: a REPL error, no env used up
    const unrecorded = JSON.parse(await repl.send({ cmd: 'theorem t : 1 = 1 := rfl', env: 0 }));
    assert.match(unrecorded.message, /^replay double \(Lean v4\.33\.0-rc2\): no recording of this command/);
    assert.match(JSON.parse(await repl.send({ cmd: 'theorem t : 1 = 1 := rfl' })).message, /no recording/);
    assert.match(
      JSON.parse(await repl.send({ cmd: 'example : True := trivial', env: 1 })).message,
      /after the recorded command/,
    );
    assert.match(JSON.parse(await repl.send({ tactic: 'rfl', proofState: 0 })).message, /only \{"cmd": …\} commands/);
    assert.equal(await repl.send({ cmd: '', env: 42 }), '{"message":"Unknown environment."}');
    assert.equal(await repl.send({ cmd: '', env: 1 }), '{"env": 7}');
  } finally {
    repl.close();
  }
});

test('the double: framing as the real REPL (multi-line requests, skipped # and -- requests, exit codes)', () => {
  const run = (input: string) =>
    spawnSync(process.execPath, [replayReplScript], {
      input,
      encoding: 'utf8',
      env: { ...process.env, REPLAY_LEAN: 'v4.26.0' },
    });
  const ok = run('-- a comment request\n\n{"cmd":\n ""}\n\n{"cmd": "", "env": 0}');
  assert.equal(ok.status, 0);
  assert.equal(ok.stdout, '{"env": 0}\n\n{"env": 1}\n\n');
  const bad = run('{"cmd": \n\n');
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /Could not parse JSON/);
  const noLean = spawnSync(process.execPath, [replayReplScript], {
    input: '',
    encoding: 'utf8',
    env: { ...process.env, REPLAY_LEAN: '' },
  });
  assert.equal(noLean.status, 2);
});

test('declaredNames: namespaces, _root_, modifiers and `set_option … in`', () => {
  assert.deepEqual(declaredNames('theorem foo : True := trivial\nlemma bar : True := trivial'), ['foo', 'bar']);
  assert.deepEqual(
    declaredNames(
      'namespace A.B\ntheorem foo : True := trivial\ntheorem _root_.top : True := trivial\nend A.B\ndef g := 1',
    ),
    ['A.B.foo', 'top', 'g'],
  );
  assert.deepEqual(declaredNames('set_option pp.all true in theorem self_application : 1 = 0 := by sorry'), [
    'self_application',
  ]);
  assert.deepEqual(declaredNames('@[simp] private def X.Y : Nat := 37 -- theorem hidden\n/- lemma gone -/'), ['X.Y']);
  assert.deepEqual(declaredNames('example : True := trivial\ninstance : Inhabited Nat := ⟨0⟩'), []);
});
