// File sessions (backend/lean/fileSession.ts) over the real pool and the stand-in REPL (a TEST DOUBLE): the file up to
// the target is elaborated once, each candidate runs on its env; what Lean is sent is counted from the stand-in's log
// and compared with checking the whole file per candidate (today's main: one body command per check).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { modelText, userSource } from '../../backend/lean/authorship';
import { openFileSession } from '../../backend/lean/fileSession';
import { standInVerifier } from './standInVerifier';
import { cheats, knownOpen } from './data/cheatCorpus';
import { bigModuleFile } from './data/bigModuleFile';

const candidates = [
  'theorem target (n : ℕ) : n + 0 = n := by\n  simp',
  'theorem target (n : ℕ) : n + 0 = n := by\n  sorry',
  'theorem target (n : ℕ) : n + 0 = n := by\n  exact bogus_lemma n',
  'import Mathlib\n\ntheorem target (n : ℕ) : n + 0 = n := by\n  omega',
];

/** Commands and elaborated lines the stand-in logged (`<pid> command lines=N`). */
function sent(log: string[]): { commands: number; lines: number; imports: number } {
  const commands = log.filter((l) => / command lines=\d+$/.test(l));
  return {
    commands: commands.length,
    lines: commands.reduce((n, l) => n + Number(/lines=(\d+)$/.exec(l)?.[1] ?? 0), 0),
    imports: log.filter((l) => / import /.test(l)).length,
  };
}

test('a file session elaborates the file once; candidates are judged on its env (valid, sorry, lean_error; a repeated header ignored)', async () => {
  const { file, targetLine } = bigModuleFile(200);
  const s = standInVerifier({ maxRepls: 1, logLines: true, printAxiomsInModules: true });
  try {
    const session = await openFileSession(s.verifier, { file: userSource(file), line: targetLine });
    assert.equal(session.prefix.status, 'ok');
    const out = [];
    // as the prover calls it: a LeanVerifier whose check takes the candidate's text
    const verifier = session.asVerifier();
    for (const c of candidates) out.push(await verifier.check(c, { theorems: ['Big.target'] }));
    await session.close();
    assert.deepEqual(
      out.map((o) => o.verdict.status),
      ['valid', 'sorry', 'lean_error', 'valid'],
    );
    // the target is audited under its namespace (Big.target), found by following the prefix's `namespace Big`
    assert.deepEqual(Object.keys(out[0].verdict.axiomsByDeclaration ?? {}), ['Big.target']);
    const log = sent(s.log());
    assert.equal(log.imports, 1, 'one import');
    // one prefix command, then per candidate its command and its audit
    assert.equal(log.commands, 1 + 2 * candidates.length);
  } finally {
    await s.verifier.close();
  }
});

test('model text in a session is still filtered: the cheat is refused before Lean, the prefix is not', async () => {
  const { file, targetLine } = bigModuleFile(60);
  const s = standInVerifier({ maxRepls: 1, printAxiomsInModules: true });
  try {
    const session = await openFileSession(s.verifier, { file: userSource(file), line: targetLine });
    const cheat = await session.check(
      modelText('notation "cheat!" => sorry\ntheorem target (n : ℕ) : n + 0 = n := by\n  exact cheat!'),
      { theorems: ['Big.target'] },
    );
    assert.equal(cheat.verdict.status, 'rejected');
    assert.match(cheat.verdict.reason, /^Rejected before Lean \(line 1\)/);
    await session.close();
  } finally {
    await s.verifier.close();
  }
});

test('measured: Lean commands and elaborated lines per prove request (8 samples + 8 fix turns) on a 2,000-line file', async () => {
  const { file, targetLine } = bigModuleFile(2000);
  const lines = file.split('\n');
  const checks = 16; // n = 8 samples, one fix turn each (the prover's default fixTurns = 1)
  const candidate = (k: number): string => candidates[k % candidates.length];
  // today's main: each candidate spliced into the file and the whole file checked
  const before = standInVerifier({ maxRepls: 1, logLines: true, printAxiomsInModules: true });
  try {
    for (let k = 0; k < checks; k++) {
      const spliced = [
        ...lines.slice(0, targetLine - 1),
        candidate(k).replace(/^import Mathlib\n\n/, ''),
        '',
        'end Big',
      ];
      await before.verifier.checkUserFile(userSource(spliced.join('\n')), { theorems: ['Big.target'] });
    }
  } finally {
    await before.verifier.close();
  }
  const after = standInVerifier({ maxRepls: 1, logLines: true, printAxiomsInModules: true });
  try {
    const session = await openFileSession(after.verifier, { file: userSource(file), line: targetLine });
    for (let k = 0; k < checks; k++) await session.check(modelText(candidate(k)), { theorems: ['Big.target'] });
    await session.close();
  } finally {
    await after.verifier.close();
  }
  const a = sent(before.log());
  const b = sent(after.log());
  console.log(
    `2,000-line file, ${checks} checks: whole file per check ${a.commands} commands, ${a.lines} lines elaborated, ${a.imports} import; ` +
      `file session ${b.commands} commands, ${b.lines} lines elaborated, ${b.imports} import`,
  );
  assert.equal(lines.length, 2000);
  assert.equal(b.commands, 1 + 2 * checks);
  assert.ok(b.lines < a.lines / 10, `${b.lines} vs ${a.lines}`);
  assert.ok(b.lines < lines.length + checks * 10);
});

const sessionFiles = [
  { name: 'a plain file', lean: undefined, file: 'import Mathlib\n\ntheorem helper_ok : True := trivial\n' },
  {
    name: 'a module file on Lean 4.29 (audit outside module mode)',
    lean: '4.29',
    file: '/- Copyright -/\nmodule\n\npublic import Mathlib\n\n@[expose] public section\n\ntheorem helper_ok : True := trivial\n',
  },
];
for (const setup of sessionFiles) {
  test(`every cheat of the corpus as model text in ${setup.name}: none valid, the filter's cheats refused before Lean`, async () => {
    const s = standInVerifier({ maxRepls: 1, ...(setup.lean ? { lean: setup.lean } : {}) });
    try {
      const line = setup.file.split('\n').length + 1;
      const session = await openFileSession(s.verifier, { file: userSource(setup.file), line });
      assert.equal(session.prefix.status, 'ok');
      let checked = 0;
      for (const c of cheats) {
        if (knownOpen.includes(c.id)) continue;
        const out = await session.check(modelText(c.code), c.theorems ? { theorems: c.theorems } : {});
        assert.notEqual(out.verdict.status, 'valid', `${c.id}: ${out.verdict.reason}`);
        if (c.caughtBy === 'filter') assert.equal(out.verdict.status, 'rejected', `${c.id}: ${out.verdict.reason}`);
        checked++;
      }
      assert.ok(checked >= 40);
      // an honest candidate is valid in the same session (the corpus is not passing by refusing everything)
      const honest = await session.check(modelText('theorem target : (1 : ℕ) = 1 := by\n  simp'), {
        theorems: ['target'],
      });
      assert.equal(honest.verdict.status, 'valid', honest.verdict.reason);
      await session.close();
    } finally {
      await s.verifier.close();
    }
  });
}

test('a module file on Lean before v4.30: `#print axioms` in the module env is refused as Lean refuses it; the verifier audits outside module mode', async () => {
  const file = '/- Copyright -/\nmodule\n\npublic import Mathlib\n\ntheorem t : (1 : ℕ) = 1 := by\n  simp\n';
  // the direct audit, as a verifier that believed #print axioms answers in modules would run it
  const direct = standInVerifier({ maxRepls: 1, lean: '4.29', printAxiomsInModules: true, logLines: true });
  try {
    const out = await direct.verifier.checkUserFile(userSource(file));
    assert.equal(out.verdict.status, 'lean_error');
    assert.match(
      out.verdict.reason,
      /Could not audit the axioms of 't': cannot use `#print axioms` in a `module`; consider temporarily removing the `module` header or placing the command in a separate file/,
    );
  } finally {
    await direct.verifier.close();
  }
  // the verifier's way on those releases: pickle the checked env, unpickle it (not a module env), audit there
  const pickled = standInVerifier({ maxRepls: 1, lean: '4.29' });
  try {
    const out = await pickled.verifier.checkUserFile(userSource(file));
    assert.equal(out.verdict.status, 'valid', out.verdict.reason);
    assert.deepEqual(out.verdict.axiomsByDeclaration, { t: ['Classical.choice', 'Quot.sound', 'propext'] });
    const log = pickled.log().map((l) => l.replace(/^\d+ /, ''));
    assert.deepEqual(log, ['import Mathlib', 'command', 'pickle', 'import Mathlib', 'command']);
    // a sorry behind a silenced warning is still found there
    const hidden = await pickled.verifier.checkUserFile(
      userSource(
        file.replace('by\n  simp', 'sorryAx _').replace('theorem t', 'set_option warn.sorry false in\ntheorem t'),
      ),
    );
    assert.equal(hidden.verdict.status, 'sorry', hidden.verdict.reason);
  } finally {
    await pickled.verifier.close();
  }
});

test('a file whose imports Lean refuses: the session says so once, every candidate gets the imports’ error', async () => {
  const s = standInVerifier({ maxRepls: 1 });
  try {
    const file = 'import Mathlib\nimport Bogus.Thing\n\ntheorem target : (1 : ℕ) = 1 := by\n  sorry\n';
    const session = await openFileSession(s.verifier, { file: userSource(file), line: 4 });
    assert.equal(session.prefix.status, 'failed');
    const out = await session.check(modelText('theorem target : (1 : ℕ) = 1 := by\n  simp'), { theorems: ['target'] });
    assert.equal(out.verdict.status, 'lean_error');
    assert.match(out.verdict.reason, /^The imports failed \(line 2\): unknown module prefix 'Bogus'/);
    await session.close();
  } finally {
    await s.verifier.close();
  }
});

test('a file that switches the kernel off above the target: no candidate is valid there', async () => {
  const s = standInVerifier({ maxRepls: 1 });
  try {
    const file =
      'import Mathlib\n\nset_option debug.skipKernelTC true\n\ntheorem target : (1 : ℕ) = 1 := by\n  sorry\n';
    const session = await openFileSession(s.verifier, { file: userSource(file), line: 5 });
    assert.deepEqual(session.prefix.weakeningOptions, ['debug.skipKernelTC']);
    const out = await session.check(modelText('theorem target : (1 : ℕ) = 1 := by\n  simp'), { theorems: ['target'] });
    assert.equal(out.verdict.status, 'rejected');
    assert.match(out.verdict.reason, /the file sets 'debug\.skipKernelTC' above it/);
    await session.close();
    // `X in section` expands to `section X … end`: the option stays on for the rest of the section, candidate included
    const sectioned = await openFileSession(s.verifier, {
      file: userSource(file.replace('true\n', 'true in\nsection\n')),
      line: 6,
    });
    assert.deepEqual(sectioned.prefix.weakeningOptions, ['debug.skipKernelTC']);
    const underSection = await sectioned.check(modelText('theorem target : (1 : ℕ) = 1 := by\n  simp'), {
      theorems: ['target'],
    });
    assert.equal(underSection.verdict.status, 'rejected');
    assert.match(underSection.verdict.reason, /the file sets 'debug\.skipKernelTC' above it/);
    await sectioned.close();
  } finally {
    await s.verifier.close();
  }
});

test('scopes above the target the tracker cannot follow: the session refuses every candidate (no root-name audit)', async () => {
  const s = standInVerifier({ maxRepls: 1 });
  try {
    // `end` with its name on the next line: Lean closes S, the scope tracker cannot tell (namespaceAtEnd: undefined)
    const file = 'import Mathlib\n\nsection S\nend\n  S\n\ntheorem target : (1 : ℕ) = 1 := by\n  sorry\n';
    const session = await openFileSession(s.verifier, { file: userSource(file), line: 7 });
    assert.equal(session.prefix.status, 'failed');
    const out = await session.check(modelText('theorem target : (1 : ℕ) = 1 := by\n  simp'), { theorems: ['target'] });
    assert.equal(out.verdict.status, 'rejected');
    assert.match(out.verdict.reason, /namespaces and sections above the target could not be followed/);
    await session.close();
  } finally {
    await s.verifier.close();
  }
});

test("the user's own file that switches the kernel off is never valid (checked, not refused before Lean)", async () => {
  const s = standInVerifier({ maxRepls: 1 });
  try {
    const out = await s.verifier.checkUserFile(
      userSource('import Mathlib\n\nset_option debug.skipKernelTC true\n\ntheorem t : (1 : ℕ) = 1 := by\n  simp\n'),
    );
    assert.equal(out.verdict.status, 'rejected');
    assert.match(out.verdict.reason, /^Lean accepted the file, but it sets 'debug\.skipKernelTC'/);
    // `… in` weakens the command it prefixes: the theorem under it was not checked by the kernel either
    for (const code of [
      'import Mathlib\n\nset_option debug.skipKernelTC true in\ntheorem t : (1 : ℕ) = 1 := by\n  simp\n',
      'import Mathlib\n\nset_option debug.skipKernelTC true in\nsection\ntheorem t : (1 : ℕ) = 1 := by\n  simp\nend\n',
    ]) {
      const scoped = await s.verifier.checkUserFile(userSource(code));
      assert.equal(scoped.verdict.status, 'rejected', code);
      assert.match(scoped.verdict.reason, /^Lean accepted the file, but it sets 'debug\.skipKernelTC'/);
    }
  } finally {
    await s.verifier.close();
  }
});
