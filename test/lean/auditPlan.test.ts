// The audit plan and the answer parser under red-team inputs (docs/verifier.md, "Red-team review"):
// the pieces that must name exactly the declaration Lean added, written against real Lean's reading of
// names (the stand-in REPL does not model `«»` names, so these are tested here directly).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planAudit } from '../../backend/lean/auditPlan';
import { auditAnswers, auditCommand } from '../../backend/lean/runner';
import { nameComponents, readAxiomAnswer, sameDeclarationName } from '../../backend/lean/verdict';

const info = (data: string, line = 1) => ({ pos: { line, column: 0 }, endPos: null, severity: 'info' as const, data });
const names = (body: string): string[] => {
  const r = planAudit(body);
  assert.ok(r.ok, r.ok ? '' : r.problem);
  return r.plan.names;
};
const refused = (body: string): string => {
  const r = planAudit(body);
  assert.equal(r.ok, false, `planned: ${JSON.stringify(r)}`);
  return r.ok ? '' : r.problem;
};

test('a quoted namespace stays one component: the audit asks for «A.B».t, not its clean twin A.B.t', () => {
  const plan = names('namespace «A.B»\ntheorem t : False := sorryAx _\nend «A.B»\ntheorem A.B.t : True := trivial');
  assert.deepEqual(plan, ['«A.B».t', 'A.B.t']);
  assert.equal(auditCommand(plan), '#print axioms _root_.«A.B».t\n#print axioms _root_.A.B.t');
  // Lean prints `«A.B».t` for the first; an answer for the twin `A.B.t` does not count for it
  assert.equal(readAxiomAnswer([info("'A.B.t' does not depend on any axioms")], '«A.B».t').ok, false);
  assert.deepEqual(readAxiomAnswer([info("'«A.B».t' depends on axioms: [sorryAx]")], '«A.B».t'), {
    ok: true,
    axioms: ['sorryAx'],
  });
  assert.deepEqual(names('namespace «A»\ntheorem t : True := trivial\nend A'), ['«A».t']);
});

test('names compare by components as Lean reads them', () => {
  assert.deepEqual(nameComponents('«A.B».t'), ['A.B', 't']);
  assert.deepEqual(nameComponents('A.«b c».d'), ['A', 'b c', 'd']);
  assert.deepEqual(nameComponents('_private.Foo.Bar.0.Baz.t'), ['Baz', 't']);
  assert.ok(sameDeclarationName('«foo»', 'foo'));
  assert.ok(sameDeclarationName('Foo.t', '_root_.Foo.t'));
  assert.ok(!sameDeclarationName('A.B.t', '«A.B».t'));
  assert.ok(!sameDeclarationName('«A.B»', 'A.B'));
  // `_root_` is dropped only from the name asked for, never from the printed one
  assert.ok(!sameDeclarationName('_root_.t', 't'));
});

test('names Lean may read otherwise are refused, not guessed', () => {
  assert.match(refused('theorem «tar\nget» : False := sorryAx _'), /line break or control/);
  assert.match(refused('theorem «a\u2028b» : False := sorryAx _'), /line break or control/);
  assert.match(refused('theorem x.«» : False := sorryAx _'), /empty name component/);
  assert.match(refused('namespace _root_.Foo\ntheorem t : False := sorryAx _\nend _root_.Foo'), /_root_/);
  assert.match(refused('namespace Foo\ntheorem A._root_.t : False := sorryAx _\nend Foo'), /_root_/);
  assert.deepEqual(
    names('namespace Foo\ntheorem _root_.t : True := trivial\ntheorem «_root_».u : True := trivial\nend Foo'),
    ['t', 'u'],
  );
});

test('commands that add declarations the plan does not follow are refused', () => {
  assert.match(refused('irreducible_def junk : (1 : ℕ) = 2 := sorryAx _'), /irreducible_def/);
  assert.match(refused('theorem bad : False := sorryAx _\nalias good := bad'), /alias/);
  assert.match(refused('end Foo\ntheorem t : True := trivial'), /does not close/);
});

test('a name declared twice is refused (a hidden "already declared" would leave the audit answering for the first)', () => {
  assert.match(refused('theorem t : True := trivial\ntheorem t : False := sorryAx _'), /declared twice/);
  assert.match(refused('theorem t : True := trivial\nprivate theorem t : False := sorryAx _'), /declared twice/);
  assert.match(
    refused('namespace A\ntheorem t : True := trivial\nend A\ntheorem A.t : False := sorryAx _'),
    /declared twice/,
  );
  assert.match(refused('theorem «t» : True := trivial\ntheorem t : False := sorryAx _'), /declared twice/);
  // the caller's trusted name is the source's own declaration, not a twin
  const r = planAudit('theorem t : True := trivial', ['t']);
  assert.ok(r.ok && r.plan.names.length === 1);
});

test('every declaration keyword is audited wherever it stands: mutual, where, protected, private, mid-line', () => {
  assert.deepEqual(names('mutual\ntheorem a : True := trivial\ntheorem b : True := trivial\nend'), ['a', 'b']);
  assert.deepEqual(names('namespace Foo\nprotected theorem t : True := trivial\nprivate def d : Nat := 0\nend Foo'), [
    'Foo.t',
    'Foo.d',
  ]);
  assert.deepEqual(names('theorem t : True := trivial; theorem u : True := trivial'), ['t', 'u']);
  assert.deepEqual(
    names(
      'namespace A.B\ntheorem t : True := trivial\nend A.B\nnamespace A\nnamespace B\ntheorem u : True := trivial\nend B\nend A',
    ),
    ['A.B.t', 'A.B.u'],
  );
});

test("audit answers are matched by line: an answer on another name's line never counts for this one", () => {
  const audit = auditAnswers(
    ['t', 'u'],
    [info("'t' does not depend on any axioms", 2), info("'u' does not depend on any axioms", 1)],
  );
  assert.equal(readAxiomAnswer(audit.get('t') ?? [], 't').ok, false);
  assert.equal(readAxiomAnswer(audit.get('u') ?? [], 'u').ok, false);
});

test('kimina check per declaration: a def the audit names differently is never "valid" unaudited', async () => {
  const { standInVerifier } = await import('./standInVerifier');
  const { verdictsPerDeclaration } = await import('../../backend/lean/perDeclaration');
  const s = standInVerifier({ maxRepls: 1 });
  try {
    // `end B` closes one of the two scopes `namespace A.B` opened: `junk` is `A.junk`
    const code =
      'import Mathlib\n\nnamespace A.B\nend B\nset_option warn.sorry false in\ndef junk : (1 : ℕ) = 2 := sorryAx _\nend A\ntheorem target : (1 : ℕ) = 1 := rfl';
    const out = await s.verifier.check(code);
    assert.equal(out.verdict.status, 'sorry');
    const [junk, target] = verdictsPerDeclaration(code, out, s.verifier.policy).declarations;
    assert.deepEqual([junk.name, junk.status], ['A.junk', 'sorry']);
    assert.deepEqual([target.name, target.status], ['target', 'valid']);
    // a name without an audit answer fails closed, whatever its kind
    const unaudited = verdictsPerDeclaration(
      code,
      { ...out, verdict: { ...out.verdict, axiomsByDeclaration: {} } },
      s.verifier.policy,
    ).declarations;
    assert.deepEqual(
      unaudited.map((d) => d.status),
      ['lean_error', 'lean_error'],
    );
  } finally {
    await s.verifier.close();
  }
});

test('line endings and odd characters: the filter ends a `--` comment where Lean does (at \\n only)', async () => {
  const { findUntrustedCode } = await import('../../backend/lean/untrusted');
  const rules = (code: string): string[] => findUntrustedCode(code).map((r) => r.rule);
  assert.deepEqual(rules('theorem t : True := trivial -- c\r\naxiom x : False'), ['axiom-declaration']); // CRLF ends it
  assert.ok(rules('theorem t : True := trivial\u0000axiom x : False').includes('axiom-declaration')); // NUL hides nothing
  // Lean reads on to the \n after a lone CR, U+2028 or a vertical tab: so does the filter (both see a comment)
  for (const sep of ['\r', '\u2028', '\u000b'])
    assert.deepEqual(rules(`theorem t : True := trivial -- c${sep}axiom x : False`), []);
  // a header line is only `import` and module names: nothing opens a comment or string there
  assert.deepEqual(
    findUntrustedCode('import Mathlib.Tactic/-\nrun_cmd pure ()\n-- -/', {}, 1).map((r) => r.rule),
    ['header'],
  );
  assert.deepEqual(
    findUntrustedCode('import Mathlib.Tactic «x\n', {}, 1)
      .map((r) => r.rule)
      .includes('header'),
    true,
  );
  // one module per `import` (Lean's header grammar): `import A B` leaves B out of the header, and Lean then fails
  assert.deepEqual(
    findUntrustedCode(
      'import Mathlib.Tactic Aesop\n\nimport Mathlib.Data.Real.Basic\ntheorem t : True := trivial',
      {},
      3,
    ).map((r) => [r.rule, r.line, r.column]),
    [
      ['header', 1, 22],
      ['header', 3, 0],
    ],
  );
  assert.deepEqual(
    findUntrustedCode(
      'import Mathlib.Tactic\nimport Aesop\n\nimport Mathlib.Data.Real.Basic\ntheorem t : True := trivial',
      {},
      4,
    ),
    [],
  );
});
