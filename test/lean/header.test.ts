import { test } from 'node:test';
import assert from 'node:assert/strict';
import { placeHeaderMessages, rebaseResponse, splitHeader } from '../../backend/lean/header';
import { codepointColumnToUtf16, replPosToLsp } from '../../backend/protocol';

test('splitHeader collapses Mathlib imports, de-duplicates, and counts stripped lines', () => {
  const s = splitHeader(
    'import Mathlib.Tactic\nimport Aesop\n\nimport Mathlib\nimport Aesop\nset_option maxHeartbeats 0\ntheorem t : True := trivial',
  );
  assert.equal(s.header, 'import Mathlib\nimport Aesop');
  assert.equal(s.headerLines, 5);
  assert.equal(s.body, 'set_option maxHeartbeats 0\ntheorem t : True := trivial');
});

test('an import-free snippet gets the empty header and keeps every line in the body', () => {
  const s = splitHeader('theorem t : True := trivial');
  assert.deepEqual([s.header, s.body, s.headerLines], ['', 'theorem t : True := trivial', 0]);
});

test('a comment line before the imports is part of the header, as Lean reads it (unlike kimina-lean-server)', () => {
  const s = splitHeader('-- hello\nimport Mathlib\n');
  assert.equal(s.header, 'import Mathlib');
  assert.equal(s.headerLines, 2);
  assert.equal(s.body, '');
});

test('rebaseResponse shifts message and sorry lines back to the full snippet', () => {
  const r = rebaseResponse(
    {
      env: 3,
      messages: [{ pos: { line: 2, column: 4 }, endPos: { line: 2, column: 9 }, severity: 'error', data: 'x' }],
      sorries: [{ goal: '⊢ True', pos: { line: 1, column: 0 }, endPos: { line: 1, column: 5 } }],
    },
    3,
  );
  assert.deepEqual(r.messages?.[0].pos, { line: 5, column: 4 });
  assert.deepEqual(r.sorries?.[0].pos, { line: 4, column: 0 });
  assert.equal(r.env, 3);
});

test("placeHeaderMessages puts an import error on the user's own line and module", () => {
  const code = '\nimport Mathlib.Tactic\n\nimport Aesop\nimport  Bogus.Thing\ntheorem t : True := trivial';
  const [m] = placeHeaderMessages(
    [{ pos: { line: 3, column: 0 }, endPos: null, severity: 'error', data: "unknown module prefix 'Bogus'" }],
    code,
  );
  assert.deepEqual(
    [m.pos, m.endPos],
    [
      { line: 5, column: 8 },
      { line: 5, column: 19 },
    ],
  );
  const [mathlib] = placeHeaderMessages(
    [{ pos: { line: 1, column: 0 }, endPos: null, severity: 'error', data: 'x' }],
    code,
  );
  assert.deepEqual(mathlib.pos, { line: 2, column: 7 });
});

test('codepoint columns convert to UTF-16 for LSP (astral characters count twice)', () => {
  const line = 'theorem t (𝕜 : Type) (x : 𝔽) : x = x';
  const cp = Array.from(line).indexOf('x');
  assert.equal(codepointColumnToUtf16(line, cp), line.indexOf('x'));
  assert.equal(codepointColumnToUtf16(line, cp) - cp, 1);
  assert.deepEqual(replPosToLsp(`import Mathlib\n${line}`, { line: 2, column: Array.from(line).lastIndexOf('x') }), {
    line: 1,
    character: line.lastIndexOf('x'),
  });
  assert.equal(codepointColumnToUtf16('abc', 10), 10);
});
