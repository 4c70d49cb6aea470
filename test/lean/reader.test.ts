// The one Lean source reader (backend/lean/source/): the header as Lean's parser reads it, where statements end,
// and every sorry with its enclosing declaration and innermost targetable term.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  commandsOf,
  findDeclarations,
  readHeader,
  readLean,
  sorriesOf,
  headerText,
} from '../../backend/lean/source/reader';
import { splitHeader } from '../../backend/lean/header';

const modules = (src: string): string[] => readHeader(src).imports.map((i) => i.module);

// ---- the header (Lean.Parser.Module: header := "module"? "prelude"? import*; import := "public"? "meta"? "import" "all"? ident)

test('a copyright comment, `module` and the import forms of the module system are one header', () => {
  const src = [
    '/-',
    'Copyright (c) 2024 Someone. All rights reserved.',
    'Released under Apache 2.0 license as described in the file LICENSE.',
    '-/',
    'module',
    '',
    'public import Mathlib.Data.Nat.Basic',
    'meta import Lean.Elab.Command',
    'public meta import Batteries.Tactic.Init',
    'import all MyProject.Internal',
    'import MyProject.Chapter2',
    '',
    '/-! # Title -/',
    '',
    '@[expose] public section',
    '',
    'theorem t : True := trivial',
  ].join('\n');
  const h = readHeader(src);
  assert.equal(h.module, true);
  assert.equal(h.prelude, false);
  assert.deepEqual(
    h.imports.map((i) => [i.module, i.public, i.meta, i.all]),
    [
      ['Mathlib.Data.Nat.Basic', true, false, false],
      ['Lean.Elab.Command', false, true, false],
      ['Batteries.Tactic.Init', true, true, false],
      ['MyProject.Internal', false, false, true],
      ['MyProject.Chapter2', false, false, false],
    ],
  );
  assert.deepEqual(h.problems, []);
  // the body starts at the module doc comment (a token to Lean, not whitespace)
  assert.deepEqual([h.bodyStart.line, h.bodyStart.column], [13, 0]);
  assert.deepEqual([h.end.line, h.end.column], [11, 25]);
  assert.equal(
    headerText(h),
    'module\npublic import Mathlib.Data.Nat.Basic\nmeta import Lean.Elab.Command\npublic meta import Batteries.Tactic.Init\nimport all MyProject.Internal\nimport MyProject.Chapter2',
  );
  // positions of each import and of its module name
  const all = h.imports[3];
  assert.deepEqual([all.start.line, all.start.column, all.moduleStart.column, all.moduleEnd.column], [10, 0, 11, 29]);
});

test('`import all M` is one module M with the `all` flag, not two modules', () => {
  const h = readHeader('import all Foo.Bar\n');
  assert.deepEqual(
    h.imports.map((i) => [i.module, i.all]),
    [['Foo.Bar', true]],
  );
});

test('comments before, between and after the header lines are whitespace; nested block comments too', () => {
  const src =
    '-- a line comment\n/- outer /- nested -/ still a comment\nimport Fake -/\nimport A -- after\n\n/- between -/ import B\n-- end\ntheorem t : True := trivial\n';
  assert.deepEqual(modules(src), ['A', 'B']);
  const h = readHeader(src);
  assert.equal(h.bodyStart.line, 8);
});

test('`prelude` and `module prelude` are read; `public section` after the imports is the body (atomic import)', () => {
  assert.equal(readHeader('prelude\nimport Init.Core\n').prelude, true);
  const h = readHeader('module\n\nprelude\npublic import Init.Prelude\n\npublic section\n');
  assert.deepEqual([h.module, h.prelude, h.imports.length], [true, true, 1]);
  assert.deepEqual([h.bodyStart.line, h.bodyStart.column], [6, 0]);
  assert.deepEqual(h.problems, []);
  // `meta def` in the body is not a broken `meta import`
  assert.deepEqual(readHeader('import A\nmeta def f := 1\n').problems, []);
});

test('a doc comment ends the header: an import after it is the error Lean gives', () => {
  const h = readHeader('/-! # Title -/\nimport Mathlib\n');
  assert.deepEqual(h.imports, []);
  assert.equal(h.bodyStart.line, 1);
  assert.equal(h.problems.length, 1);
  assert.match(h.problems[0].message, /invalid 'import' command, it must be used in the beginning of the file/);
  assert.match(h.problems[0].message, /doc comment/);
  // inside a syntax quotation `import` is no command
  assert.deepEqual(readHeader('import A\ndef q := `(Parser.Module.import| import $m)\n').problems, []);
  const late = readHeader('import A\ntheorem t : True := trivial\nimport B\n');
  assert.deepEqual(
    late.problems.map((p) => [p.start.line, p.start.column]),
    [[3, 0]],
  );
});

test('one module per `import`: `import A B` ends the header after A, with a problem naming B', () => {
  const h = readHeader('import Mathlib Aesop\n');
  assert.deepEqual(modules('import Mathlib Aesop\n'), ['Mathlib']);
  assert.equal(h.problems.length, 1);
  assert.match(h.problems[0].message, /one module per `import`: 'Aesop'/);
  assert.match(readHeader('import\n').problems[0].message, /module name is expected/);
});

test('CRLF files: the same header, lines counted by line feeds', () => {
  const src = '/- c -/\r\nmodule\r\n\r\npublic import A.B\r\nimport C\r\n\r\ntheorem t : True := trivial\r\n';
  const h = readHeader(src);
  assert.deepEqual(modules(src), ['A.B', 'C']);
  assert.equal(h.module, true);
  assert.deepEqual([h.bodyStart.line, h.bodyStart.column], [7, 0]);
  const s = splitHeader(src);
  assert.equal(s.headerLines, 6);
  assert.equal(s.body, 'theorem t : True := trivial\r\n');
});

test('splitHeader: comments and a module header no longer end it early; the body keeps its columns', () => {
  const src =
    '/-\nCopyright\n-/\nmodule\npublic import Mathlib.Tactic\nimport Mathlib.Data.Real.Basic\n\n@[expose] public section\ntheorem t : True := trivial';
  const s = splitHeader(src);
  // a module header keeps its flags and is not collapsed
  assert.equal(s.header, 'module\npublic import Mathlib.Tactic\nimport Mathlib.Data.Real.Basic');
  // the body starts at the first non-blank line after the last import (comments after the header stay in it)
  assert.equal(s.headerLines, 7);
  assert.equal(s.body, '@[expose] public section\ntheorem t : True := trivial');
  assert.equal(
    splitHeader('import A\n\n-- note\n\ntheorem t : True := trivial').body,
    '-- note\n\ntheorem t : True := trivial',
  );
  // a plain header collapses Mathlib (pool reuse), unless asked not to
  const plain =
    '-- header comment\nimport Mathlib.Tactic\nimport Mathlib.Data.Real.Basic\nimport Aesop\ntheorem t : True := trivial';
  assert.equal(splitHeader(plain).header, 'import Mathlib\nimport Aesop');
  assert.equal(
    splitHeader(plain, { collapseMathlib: false }).header,
    'import Mathlib.Tactic\nimport Mathlib.Data.Real.Basic\nimport Aesop',
  );
  // header and body on one line, or a block comment running on after the last import: from Lean's body start, the
  // header's part of its line blanked, columns kept
  const one = splitHeader('import A theorem t : True := trivial');
  assert.equal(one.headerLines, 0);
  assert.equal(one.body, '         theorem t : True := trivial');
  const comment = splitHeader('import A /- a\ncomment -/ theorem t : True := trivial');
  assert.equal(comment.headerLines, 1);
  assert.equal(comment.body, '           theorem t : True := trivial');
  // a string right after an import ends the header (it is a token to Lean), and the body starts there
  const str = splitHeader('import A "x"\n');
  assert.deepEqual([str.header, str.headerLines, str.body], ['import A', 0, '         "x"\n']);
});

// ---- statements end where Lean says

const statementOf = (src: string): string => {
  const d = findDeclarations(src)[0];
  return src.slice(d.head.offset, d.proof ? d.proof.start.offset : d.end.offset).trim();
};

test('a `let` in the statement does not end it (issue 29, finding 2)', () => {
  const src = 'theorem foo : let x := 5; x = 6 := by sorry';
  const [d] = findDeclarations(src);
  assert.equal(statementOf(src), 'theorem foo : let x := 5; x = 6');
  assert.equal(d.statement, 'theorem foo : let x := 5; x = 6 := by');
  assert.equal(src.slice(d.body!.start.offset, d.body!.end.offset).trim(), 'sorry');
  const [s] = sorriesOf(src);
  const stmt = s.declaration!.statement;
  assert.equal(src.slice(stmt.start.offset, stmt.end.offset), 'theorem foo : let x := 5; x = 6 ');
});

test('letI, haveI, have, let rec, match, show … from, structure instances, ⦃⦄ and default arguments stay in the statement', () => {
  const cases: [string, string][] = [
    ['theorem a : letI := inst; P := by simp', 'theorem a : letI := inst; P'],
    ['theorem a : haveI : Foo := inst; P := rfl', 'theorem a : haveI : Foo := inst; P'],
    ['theorem a : have h : 1 = 1 := rfl; h = h := rfl', 'theorem a : have h : 1 = 1 := rfl; h = h'],
    [
      'theorem a : let rec f : Nat → Nat := fun n => n; f 1 = 1 := rfl',
      'theorem a : let rec f : Nat → Nat := fun n => n; f 1 = 1',
    ],
    [
      'theorem a (n : Nat) : (match n with\n  | 0 => True\n  | _ => True) := by\n  cases n <;> trivial',
      'theorem a (n : Nat) : (match n with\n  | 0 => True\n  | _ => True)',
    ],
    [
      'theorem a (n : Nat) : match n with | 0 => True | _ => True := by\n  cases n <;> trivial',
      'theorem a (n : Nat) : match n with | 0 => True | _ => True',
    ],
    ['theorem a : show 1 = 1 from rfl = rfl := rfl', 'theorem a : show 1 = 1 from rfl = rfl'],
    ['theorem a : ({ x := 1, y := 2 } : Point).x = 1 := rfl', 'theorem a : ({ x := 1, y := 2 } : Point).x = 1'],
    ['theorem a ⦃x : Nat⦄ (h : x = x := rfl) : x = x := h', 'theorem a ⦃x : Nat⦄ (h : x = x := rfl) : x = x'],
    ['def f (x : Nat := 3) (y := 4) : Nat := x + y', 'def f (x : Nat := 3) (y := 4) : Nat'],
    ['theorem a : (fun x => x) 1 = 1 := rfl', 'theorem a : (fun x => x) 1 = 1'],
  ];
  for (const [src, statement] of cases) assert.equal(statementOf(src), statement, src);
});

test('the proof starts at `|` alternatives or `where`, which then hold the body', () => {
  const eqns = findDeclarations('def f : Nat → Nat\n  | 0 => 1\n  | n + 1 => f n\n')[0];
  assert.equal(eqns.proof?.kind, '|');
  assert.equal(eqns.body, null);
  const inst = findDeclarations('instance : Inhabited Nat where\n  default := 0\n')[0];
  assert.equal(inst.proof?.kind, 'where');
  assert.equal(inst.statement.trimEnd(), 'instance : Inhabited Nat where\n  default := 0');
  const ax = findDeclarations('axiom a : 1 = 2\n')[0];
  assert.equal(ax.proof, null);
});

// ---- every sorry is a target

test('sorries in def, instance, abbrev, where fields, match arms and a have of a long proof each have their declaration and term', () => {
  const src = [
    'def f (n : Nat) : Nat := sorry',
    '',
    'instance : Inhabited Nat where',
    '  default := sorry',
    '',
    'abbrev A : Type := sorry',
    '',
    'def g : Nat → Nat',
    '  | 0 => sorry',
    '  | n + 1 => g n',
    '',
    'theorem long (a b : Nat) (h : a = b) : b = a := by',
    '  have h1 : a = a := by',
    '    sorry',
    '  have h2 : b = b := rfl',
    '  exact sorry',
    '',
    'theorem withAux : True := aux',
    'where',
    '  aux : True := by sorry',
  ].join('\n');
  const found = sorriesOf(src);
  const view = found.map((s) => [
    s.sorry.start.line,
    s.declaration?.kind,
    s.declaration?.name,
    s.target.kind,
    src.slice(s.target.range.start.offset, s.target.range.end.offset),
    s.position,
  ]);
  assert.deepEqual(view, [
    [1, 'def', 'f', 'term', 'sorry', 'term'],
    [4, 'instance', '', 'term', 'sorry', 'term'],
    [6, 'abbrev', 'A', 'term', 'sorry', 'term'],
    [9, 'def', 'g', 'term', 'sorry', 'term'],
    [14, 'theorem', 'long', 'by', 'by\n    sorry', 'tactic'],
    [16, 'theorem', 'long', 'by', src.slice(src.indexOf('by\n  have h1'), src.indexOf('exact sorry') + 11), 'term'],
    [20, 'theorem', 'withAux', 'by', 'by sorry', 'tactic'],
  ]);
  const inst = found[1].declaration!;
  assert.equal(src.slice(inst.statement.start.offset, inst.statement.end.offset), 'instance : Inhabited Nat ');
  assert.equal(src.slice(inst.body!.start.offset, inst.body!.end.offset), 'where\n  default := sorry');
  assert.equal(found[4].declaration!.fullName, 'long');
});

test("a project's own declaration command (`problem name … := by`) is a declaration, its sorry a target", () => {
  const src = [
    'import Mathlib',
    '',
    'namespace Imo2024',
    '',
    '/-- The first problem. -/',
    'problem imo2024_p1 (x : ℕ) (h : 0 < x) :',
    '    x ^ 2 > 0 := by',
    '  sorry',
    '',
    'theorem after : True := trivial',
    '',
    'end Imo2024',
  ].join('\n');
  const decls = findDeclarations(src);
  assert.deepEqual(
    decls.map((d) => [d.kind, d.command, d.name, d.namespace]),
    [
      ['custom', 'problem', 'imo2024_p1', 'Imo2024'],
      ['theorem', 'theorem', 'after', 'Imo2024'],
    ],
  );
  assert.equal(decls[0].docComment, 'The first problem.');
  const [s] = sorriesOf(src);
  assert.deepEqual(
    [s.declaration?.kind, s.declaration?.fullName, s.sorry.start.line, s.target.kind],
    ['custom', 'Imo2024.imo2024_p1', 8, 'by'],
  );
  assert.equal(
    src.slice(s.declaration!.statement.start.offset, s.declaration!.statement.end.offset),
    'problem imo2024_p1 (x : ℕ) (h : 0 < x) :\n    x ^ 2 > 0 ',
  );
});

test("a project's own commands without a declaration's shape end the declaration above (`snip end`)", () => {
  const src = [
    'lemma helper : 1 + 1 = 2 := by',
    '  norm_num',
    '',
    'snip end',
    '',
    'determine answer : ℕ := 5',
    '',
    'problem p : answer = 5 := by',
    '  sorry',
  ].join('\n');
  const decls = findDeclarations(src);
  assert.deepEqual(
    decls.map((d) => [d.kind, d.command, d.name, d.start.line, d.end.line]),
    [
      ['lemma', 'lemma', 'helper', 1, 2],
      ['custom', 'determine', 'answer', 6, 6],
      ['custom', 'problem', 'p', 8, 9],
    ],
  );
});

test('a column-0 proof is never cut into a custom declaration; tactic words never start one', () => {
  // a proof written at column 0 continues its declaration
  const src = 'theorem t : True := by\nskip\n\nfoo bar : baz := qux\n';
  assert.deepEqual(
    findDeclarations(src).map((d) => [d.kind, d.name]),
    [['theorem', 't']],
  );
  // `set x : T := v` after a blank line is a tactic, not a command
  const tactic = 'theorem t : True := by\n  skip\n\nset x : Nat := 1\n';
  assert.deepEqual(
    findDeclarations(tactic).map((d) => d.kind),
    ['theorem'],
  );
  // a shape without `:` and `:=` is not taken either
  assert.deepEqual(
    findDeclarations('theorem t : True := trivial\n\nrun_this thing\n').map((d) => d.kind),
    ['theorem'],
  );
});

test("a sorry in the statement is the user's placeholder, not a proof target", () => {
  const src = 'example {X Y : Prop} : ¬ (X ↔ Y) ↔ sorry := by sorry';
  assert.deepEqual(
    sorriesOf(src).map((s) => [s.sorry.start.column, s.part]),
    [
      [35, 'statement'],
      [47, 'body'],
    ],
  );
});

test('sorries in comments and strings are not targets; one outside any declaration has none', () => {
  const src = '-- sorry\n/- sorry -/\n#check (sorry : Nat)\ndef s := "sorry"\n';
  const found = sorriesOf(src);
  assert.equal(found.length, 1);
  assert.equal(found[0].declaration, null);
  assert.equal(found[0].part, null);
  assert.equal(found[0].sorry.start.line, 3);
});

test('readLean returns the header and the declarations of one read', () => {
  const r = readLean('module\npublic import A\n@[expose] public section\ntheorem t : True := trivial\n');
  assert.equal(r.header.module, true);
  assert.deepEqual(
    r.declarations.map((d) => d.name),
    ['t'],
  );
});

test('the clause after a proof (`where`, `termination_by`, `decreasing_by`) is found where Lean ends the proof', () => {
  const where = findDeclarations('theorem withAux : True := by\n  exact aux\nwhere\n  aux : True := trivial\n')[0];
  assert.deepEqual([where.trailer?.word, where.trailer?.start.line, where.trailer?.start.column], ['where', 3, 0]);
  // the sorry of a where clause is still the declaration's, and its term is the clause's own `by`
  const term = findDeclarations(
    'def f : Nat → Nat\n  | 0 => 0\n  | n + 1 => f n\ntermination_by n => n\ndecreasing_by\n  simp\n',
  )[0];
  assert.equal(term.trailer?.word, 'termination_by');
  assert.equal(term.trailer?.start.line, 4);
  // none after a plain proof, and none for a `where` structure body (it is the body)
  assert.equal(findDeclarations('theorem t : True := by\n  trivial\n')[0].trailer, null);
  assert.equal(findDeclarations('instance : Inhabited Nat where\n  default := 0\n')[0].trailer, null);
});

test('commandsOf lists the commands after the header: declarations, scope commands and the rest', () => {
  const src =
    '/- c -/\nmodule\npublic import A\n\n@[expose] public section\n\nopen Foo in\ntheorem t : True := trivial\nnamespace X\nvariable (n : Nat)\nnotation "ℵ" => 1\n#eval 1\nend X\n';
  assert.deepEqual(
    commandsOf(src).map((c) => [c.word, c.kind, c.start.line, c.end.line]),
    [
      ['section', 'scope', 5, 5],
      ['theorem', 'declaration', 7, 8],
      ['namespace', 'scope', 9, 9],
      ['variable', 'scope', 10, 10],
      ['notation', 'other', 11, 11],
      ['#eval', 'other', 12, 12],
      ['end', 'scope', 13, 13],
    ],
  );
});

test('a sorry in a `where` auxiliary declaration names that auxiliary, its statement and body', () => {
  const src = [
    'theorem main (n : Nat) : n = n ∧ True := ⟨first n, second⟩',
    'where',
    '  first (k : Nat) : k = k := by',
    '    sorry',
    '  @[simp] second : True := sorry',
    '',
    'theorem after : True := by sorry',
  ].join('\n');
  const found = sorriesOf(src);
  const view = found.map((s) => [
    s.declaration?.name,
    s.whereClause?.name ?? null,
    s.whereClause ? src.slice(s.whereClause.statement.start.offset, s.whereClause.statement.end.offset) : null,
    s.whereClause?.body ? src.slice(s.whereClause.body.start.offset, s.whereClause.body.end.offset) : null,
  ]);
  assert.deepEqual(view, [
    ['main', 'first', 'first (k : Nat) : k = k ', ' by\n    sorry'],
    ['main', 'second', '@[simp] second : True ', ' sorry'],
    ['after', null, null, null],
  ]);
});
