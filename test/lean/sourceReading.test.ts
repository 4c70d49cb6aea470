// One way to read Lean source: the lexer's comments/strings, the masked finder, the token finder used by the
// verifier and the editor's view all agree with each other.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lexLean, type Trivia } from '../../backend/lean/lexer';
import { findDeclarationHeads, findDeclarations, maskLean } from '../../backend/lean/declarations';
import { findDeclarations as editorDeclarations, codeOnly } from '../../backend/editor/leanSource';

test('the lexer records comments, doc comments, strings and char literals as UTF-16 spans', () => {
  const src = '/-- doc 𝔸 -/\ndef x := "a -- b" -- tail\ndef c := \'y\' /- c -/';
  const trivia: Trivia[] = [];
  lexLean(src, trivia);
  assert.deepEqual(
    trivia.map((t) => [t.kind, src.slice(t.start, t.end)]),
    [
      ['doc', '/-- doc 𝔸 -/'],
      ['string', '"a -- b"'],
      ['comment', '-- tail'],
      ['char', "'y'"],
      ['comment', '/- c -/'],
    ],
  );
});

test('maskLean blanks exactly what the lexer skips: code inside an interpolated string stays code', () => {
  const src = 'def s := s!"x {sorry} y" -- sorry\n/- "sorry" -/';
  const { text, docs } = maskLean(src);
  assert.equal(text.length, src.length);
  assert.equal(text.match(/sorry/g)?.length, 1, 'the sorry in {…} is code, the others are not');
  assert.equal(text.indexOf('sorry'), src.indexOf('sorry'));
  assert.deepEqual(docs, []);
  assert.equal(codeOnly(src), text);
});

test('an unterminated comment is read the way the untrusted-code filter reads it', () => {
  const src = 'theorem a : True := by\n  trivial\n/- never closed\ntheorem b : True := by\n  sorry\n';
  const heads = findDeclarationHeads(src).map((d) => d.name);
  assert.deepEqual(heads, ['a', 'b']);
  assert.deepEqual(
    findDeclarations(src).map((d) => d.name),
    heads,
  );
});

test('a declaration ending in a string or char literal ends after it, not before it', () => {
  const src = 'def s := "done"  -- note\ndef c := \'x\'\ntheorem t : True := trivial\n';
  const [s, c] = findDeclarations(src);
  assert.equal(src.slice(s.start.offset, s.end.offset), 'def s := "done"');
  assert.equal(src.slice(c.start.offset, c.end.offset), "def c := 'x'");
});

test('the shared finder gives the editor its head (prefixes excluded) and the signature end', () => {
  const src =
    'open Real in\n@[simp]\nprivate theorem a : (1 : ℝ) = 1 := by\n  sorry\n\ndef f : Nat → Nat\n  | 0 => 1\n  | n+1 => let y := n; y\n';
  const [a, f] = findDeclarations(src);
  assert.equal(a.start.offset, 0);
  assert.equal(src.slice(a.head.offset).split('\n')[0], '@[simp]');
  assert.equal(src.slice(0, a.signatureEnd?.offset).endsWith('= 1 :='), true);
  assert.equal(f.signatureEnd, null, 'an equation-compiler definition has no signature :=');
  const editor = editorDeclarations(src);
  assert.deepEqual(
    editor.map((d) => [d.kind, d.name, d.startLine, d.endLine, d.indent]),
    [
      ['theorem', 'a', 1, 3, 0],
      ['def', 'f', 5, 7, 0],
    ],
  );
  assert.equal(editor[0].statementEnd, a.signatureEnd?.offset);
  assert.equal(editor[1].statementEnd, null);
  assert.deepEqual(
    editor[0].sorries.map((s) => [s.line, s.character, s.position]),
    [[3, 2, 'tactic']],
  );
});

test("the verifier's token view and the command view agree on names and lines of a namespaced file", () => {
  const src =
    'namespace Foo\n\ntheorem a : True := trivial\n\nsection\nlemma b : True := by\n  trivial\nend\n\nexample : True := trivial\nend Foo\n\ntheorem _root_.c : True := trivial\n';
  const heads = findDeclarationHeads(src);
  assert.deepEqual(
    heads.map((d) => [d.kind, d.name, d.line]),
    [
      ['theorem', 'Foo.a', 3],
      ['lemma', 'Foo.b', 6],
      ['example', '', 10],
      ['theorem', 'c', 13],
    ],
  );
  const decls = findDeclarations(src);
  assert.deepEqual(
    decls.map((d) => d.head.line),
    heads.map((d) => d.line),
  );
  assert.deepEqual(
    decls.map((d) => (d.namespace && d.name ? `${d.namespace}.${d.name}` : d.name)),
    ['Foo.a', 'Foo.b', '', '_root_.c'],
  );
});
