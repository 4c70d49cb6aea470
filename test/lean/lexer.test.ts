// The lexer against Lean's own tokenizer rules (src/Lean/Parser/Basic.lean, StrInterpolation.lean,
// Init/Meta isIdFirst/isIdRest): every literal kind, nesting, unterminated and malformed input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { lexLean, lexLeanFull } from '../../backend/lean/lexer';

/** Tokens as `kind:text`, quoted ones marked. */
const toks = (src: string): string[] =>
  lexLeanFull(src).tokens.map((t) => `${t.kind}:${t.text}${t.quoted ? '(quoted)' : ''}`);
const skipped = (src: string): [string, string][] =>
  lexLeanFull(src).trivia.map((t) => [t.kind, src.slice(t.start, t.end)]);
const problems = (src: string): string[] => lexLeanFull(src).problems.map((p) => p.message);
/** The first problem: after one, the rest is read as code, so a closing quote may open a new string. */
const first = (src: string): string | undefined => problems(src)[0];
const problemAt = (src: string): [number, number][] => lexLeanFull(src).problems.map((p) => [p.line, p.column]);

test('line, block, doc and module-doc comments are skipped; block and doc comments nest', () => {
  const src = '-- a\n/- b /- c -/ d -/\n/-- e /- f -/ g -/\n/-! h -/\nx';
  assert.deepEqual(skipped(src), [
    ['comment', '-- a'],
    ['comment', '/- b /- c -/ d -/'],
    ['doc', '/-- e /- f -/ g -/'],
    ['comment', '/-! h -/'],
  ]);
  assert.deepEqual(toks(src), ['ident:x']);
});

test("the character right after `/-` is skipped unread, as Lean's whitespace does: `/-/-` opens one level", () => {
  // Lean: the comment is `/-/- -/`, and run_cmd is code. A naive nesting count would hide it.
  assert.deepEqual(toks('/-/- -/ run_cmd x -/'), ['ident:run_cmd', 'ident:x', 'symbol:-', 'symbol:/']);
  assert.deepEqual(skipped('/--/ doc -/'), [['doc', '/--/ doc -/']]);
  assert.deepEqual(skipped('/- a --/ b'), [['comment', '/- a --/']]);
});

test("a comment start glued to a symbol is refused: Lean's longest-match token may take its first character", () => {
  // Lean reads `<-` then `-`, and `//` then `- …`: no comment, so what follows is code
  assert.match(first('rw [h <-- x\nrun_cmd pure ()') ?? '', /comment start glued to '<'/);
  assert.match(first('def s := {x // p x} //- run_cmd pure () -/') ?? '', /comment start glued to '\/'/);
  assert.deepEqual(
    problems('x -- a\nf (x)-- b\n[1]/- c -/ y--d\n2-- e'),
    [],
    'after spaces, names, numbers and brackets a comment is a comment',
  );
});

test("a symbol holding byte 0xAB, with a » later, is refused: Lean's recovery may read a « from its bytes", () => {
  // ⊫ is U+22AB (E2 8A AB): after a failed token Lean moves on byte by byte and reads 0xAB as «
  assert.match(first('⊫ "» run_cmd pure () "') ?? '', /reads one of its bytes as '«'/);
  assert.deepEqual(problems('∫ x in (0:ℝ)..1, x'), [], 'no » after it: nothing to swallow');
  assert.deepEqual(
    problems('«a» ∈ 𝒫 s'),
    [],
    '« itself and identifier characters (𝒫 = U+1D4AB) are read as Lean reads them',
  );
});

test('an unterminated comment is a problem, and the rest is read as code (as Lean recovery could)', () => {
  assert.equal(first('/- a /- b -/\n#eval 1'), 'unterminated comment');
  assert.deepEqual(toks('/- a\n#eval 1'), ['ident:a', 'command:#eval', 'number:1']);
  assert.deepEqual(problems('/-- doc never closed'), [problems('/- x')[0]]);
});

test('strings: every escape Lean knows, and gaps', () => {
  const src = String.raw`"\\ \" \' \r \n \t \x41 \u00e9"`;
  assert.deepEqual(skipped(src), [['string', src]]);
  assert.deepEqual(problems(src), []);
  const gap = '"a\\\n    b" x';
  assert.deepEqual(skipped(gap), [['string', '"a\\\n    b"']]);
  assert.deepEqual(toks(gap), ['ident:x']);
  // after a problem the rest is read as code, so the closing quote opens a new string: only the first counts here
  assert.equal(problems('"a\\\n\n b"')[0], 'unexpected additional newline in string gap in a string literal');
  assert.equal(first('"a\\ b"'), "invalid escape sequence '\\ ' in a string literal");
  assert.equal(first('"\\q"'), "invalid escape sequence '\\q' in a string literal");
  assert.equal(first('"\\x4"'), 'invalid \\x escape (two hex digits expected) in a string literal');
  assert.equal(first('"\\u{41}"'), 'invalid \\u escape (four hex digits expected) in a string literal');
  assert.deepEqual(problemAt('x\n  "ab\\q"')[0], [2, 5], 'at the backslash');
});

test('an unterminated string is a problem at its quote; the rest is read as code', () => {
  assert.deepEqual(problemAt('def s := "abc\n#eval 1'), [[1, 9]]);
  assert.equal(first('def s := "abc'), 'unterminated string literal');
  assert.deepEqual(toks('def s := "abc\n#eval 1'), [
    'ident:def',
    'ident:s',
    'symbol::=',
    'ident:abc',
    'command:#eval',
    'number:1',
  ]);
});

test('raw strings: no escapes, any number of #, closed only by a quote with as many #', () => {
  const bypass = 'def s := r"\\"\naxiom cheat : False\n-- "';
  assert.deepEqual(skipped(bypass), [
    ['string', 'r"\\"'],
    ['comment', '-- "'],
  ]);
  assert.deepEqual(toks(bypass), [
    'ident:def',
    'ident:s',
    'symbol::=',
    'ident:axiom',
    'ident:cheat',
    'symbol::',
    'ident:False',
  ]);
  assert.deepEqual(skipped('r#"a "quoted" b"# x'), [['string', 'r#"a "quoted" b"#']]);
  assert.deepEqual(skipped('r##"a"#b"## x'), [['string', 'r##"a"#b"##']]);
  assert.deepEqual(skipped('r###"a"##"###'), [['string', 'r###"a"##"###']]);
  assert.equal(problems('r#"a" x')[0], 'unterminated raw string literal');
  assert.equal(first('r"abc'), 'unterminated raw string literal');
  assert.match(first('x %r"\\" y "run_cmd pure () "') ?? '', /raw string glued to '%'/);
  assert.deepEqual(problems('(r"a", [r#"b"#]) := r"c"'), []);
  // only at a token start: inside `for` or after a dot the `r` belongs to the identifier
  assert.deepEqual(toks('for"x" Foo.r"y" r#check'), ['ident:for', 'ident:Foo.r', 'ident:r', 'command:#check']);
  assert.deepEqual(skipped('for"x"'), [['string', '"x"']]);
});

test('interpolated strings: the `{…}` parts are code, nested strings and braces included', () => {
  const src = 's!"a {f "b" {x := 1}} c \\{ d" m! "{y}"';
  assert.deepEqual(toks(src), [
    'ident:s!',
    'ident:f',
    'symbol:{',
    'ident:x',
    'symbol::=',
    'number:1',
    'symbol:}',
    'ident:m!',
    'ident:y',
  ]);
  assert.deepEqual(
    skipped(src).map(([, s]) => s),
    ['"a {', '"b"', '} c \\{ d"', '"{', '}"'],
  );
  assert.deepEqual(problems(src), []);
  assert.equal(problems('s!"a {x"')[0], 'interpolated string: unterminated `{` in an interpolated string');
  assert.equal(first('f!"\\q"'), "interpolated string: invalid escape sequence '\\q'");
});

test('a plain string that another syntax may interpolate: its `{…}` code is read (quoted) and must agree', () => {
  assert.deepEqual(toks('throwError "x {run_tac y} z"'), [
    'ident:throwError',
    'ident:run_tac(quoted)',
    'ident:y(quoted)',
  ]);
  assert.deepEqual(
    lexLean('throwError "x {run_tac y} z"').map((t) => t.text),
    ['throwError'],
    'lexLean leaves quoted tokens out',
  );
  assert.deepEqual(skipped('"x {y} z"'), [['string', '"x {y} z"']]);
  // plain: `"{"` then `}` …; interpolated: one string. The readings disagree: refused.
  assert.ok(problems('"{"}"')[0].includes('reads differently as plain and as interpolated'));
  // a literal that ends before `s!` has no say: `s!` with a char literal in between is not interpolation
  assert.deepEqual(toks('s! \'a\' "{x}"'), ['ident:s!', 'ident:x(quoted)']);
});

test('char literals: one character or one escape, and the tokens that contain a quote', () => {
  const src = String.raw`'a' '\n' '\x41' '\u00e9' '\'' '"' '\\'`;
  assert.deepEqual(
    skipped(src).map(([k]) => k),
    ['char', 'char', 'char', 'char', 'char', 'char', 'char'],
  );
  assert.deepEqual(problems(src), []);
  assert.equal(first("'ab'"), 'missing end of character literal');
  assert.equal(first(String.raw`'\q'`), "invalid escape sequence '\\q' in a character literal");
  assert.equal(
    problems(String.raw`'\u{41}'`)[0],
    'invalid \\u escape (four hex digits expected) in a character literal',
  );
  assert.equal(first("'\\\n'"), "invalid escape sequence '\\\n' in a character literal", 'no string gaps in chars');
  // `h'` is an identifier; `''`, `∑'`, `⁻¹'` Mathlib's tokens (once it is imported), `Σ'`, `×'`, `⊕'`, `xs[i]'h` Lean's
  const mathlib = 'import Mathlib\n';
  assert.deepEqual(toks(mathlib + "h' f '' s ∑' n ⁻¹' t Σ' x").slice(2), [
    "ident:h'",
    'ident:f',
    "symbol:''",
    'ident:s',
    'symbol:∑',
    "symbol:'",
    'ident:n',
    'symbol:⁻',
    'symbol:¹',
    "symbol:'",
    'ident:t',
    'symbol:Σ',
    "symbol:'",
    'ident:x',
  ]);
  assert.deepEqual(problems(mathlib + "f '' univ ∑' nn, g nn ⁻¹' Set.univ (f x) 'a'"), []);
  assert.deepEqual(toks("xs[i]'h a ⊕' b"), [
    'ident:xs',
    'symbol:[',
    'ident:i',
    'symbol:]',
    "symbol:'",
    'ident:h',
    'ident:a',
    'symbol:⊕',
    "symbol:'",
    'ident:b',
  ]);
  assert.deepEqual(
    problems("xs[i]'h xs[i]'(by simp) a ⊕' b ×' c f '' s ∑' n, g n"),
    [],
    'core tokens, and readings that agree',
  );
  assert.deepEqual(problems("import Analysis.Basic\nf '' univ"), [], 'a project module may bring Mathlib in');
  // with no import or only Lean's own, `''` and `∑'` are no tokens: where Lean's char reading (and its
  // recovery three characters on) would see other code, the text is refused
  assert.match(first("import Lean\nf '' univ") ?? '', /Lean may read a token or a character literal/);
  for (const ambiguous of ["f '' univ", "∑' nrun_cmd", "∑'\"'", "x +'1'", "x +'\\n'", "+''", "x +'r\"'"]) {
    assert.match(first(ambiguous) ?? '', /Lean may read a token or a character literal/, ambiguous);
  }
});

test("identifiers: Lean's character classes, dotted parts, «escapes», name literals", () => {
  assert.deepEqual(toks("α₁ ℕ 𝔽 x.y.z h' a! b? «a b».c `Nat.add ``x λx Π"), [
    'ident:α₁',
    'ident:ℕ',
    'ident:𝔽',
    'ident:x.y.z',
    "ident:h'",
    'ident:a!',
    'ident:b?',
    'ident:«a b».c',
    'name:Nat.add',
    'name:x',
    'symbol:λ',
    'ident:x',
    'symbol:Π',
  ]);
  assert.deepEqual(toks('«line\nbreak» x'), ['ident:«line\nbreak»', 'ident:x']);
  assert.equal(first('def x := «abc\nrun_cmd'), 'unterminated identifier escape `«`');
  assert.deepEqual(toks('def x := «abc\nrun_cmd'), ['ident:def', 'ident:x', 'symbol::=', 'ident:abc', 'ident:run_cmd']);
  assert.deepEqual(toks('#eval #check_failure #[1]'), [
    'command:#eval',
    'command:#check_failure',
    'symbol:#',
    'symbol:[',
    'number:1',
    'symbol:]',
  ]);
});

test('a letter Lean does not accept, glued to a word, is a problem; the word is read on its own', () => {
  assert.deepEqual(toks('érun_cmd'), ['symbol:é', 'ident:run_cmd']);
  assert.match(problems('érun_cmd')[0], /'é' \(U\+00E9\) is an identifier character only in recent Lean/);
  assert.match(problems('аrun_cmd')[0], /'а' \(U\+0430\) is not an identifier character in Lean/); // Cyrillic а
  assert.match(problems('e\u0301run_cmd')[0], /U\+0301/); // a combining accent
  // Mathlib's postfix tokens made of modifier letters stand alone: no problem
  assert.deepEqual(problems('sᶜ αᵒᵈ Aᵀ ∀ᶠ x in l, p x'), []);
});

test('tabs, no-break spaces and control characters are separators: Lean reports them, they hide nothing', () => {
  for (const c of ['\t', '\u00a0', '\u200b', '\ufeff', '\u202e', '\u0007', '\u3000']) {
    assert.deepEqual(
      toks(`a${c}run_cmd`).filter((t) => t.startsWith('ident')),
      ['ident:a', 'ident:run_cmd'],
      JSON.stringify(c),
    );
  }
  assert.deepEqual(problems('-- a\tb \u202e\n/- \u00a0 -/ "\u200b" x\r\ny'), []);
});

test('numbers as Lean reads them, malformed ones as problems', () => {
  assert.deepEqual(toks('1_000 0x1F 0b101 0o17 2.5e3 1e-3 3. 7'), [
    'number:1_000',
    'number:0x1F',
    'number:0b101',
    'number:0o17',
    'number:2.5e3',
    'number:1e-3',
    'number:3.',
    'number:7',
  ]);
  assert.deepEqual(problems('1_000 0x1F 2.5e3'), []);
  for (const bad of ['1_', '0x', '0b2', '2e', '2elab', '1e+x'])
    assert.deepEqual(problems(bad), ['malformed number literal'], bad);
  assert.deepEqual(toks('1builtin_initialize'), ['number:1', 'ident:builtin_initialize']);
  assert.deepEqual(toks('0xffelab'), ['number:0xffe', 'ident:lab']);
  // after a glued `.` digits are a field index (Lean's fieldIdxFn), so `h.1.eq` is no malformed `1.e…`
  assert.deepEqual(toks('h.1.eq h.2.elim (x).1.le'), [
    'ident:h',
    'symbol:.',
    'number:1',
    'symbol:.',
    'ident:eq',
    'ident:h',
    'symbol:.',
    'number:2',
    'symbol:.',
    'ident:elim',
    'symbol:(',
    'ident:x',
    'symbol:)',
    'symbol:.',
    'number:1',
    'symbol:.',
    'ident:le',
  ]);
  assert.deepEqual(problems('h.1.eq h.2.elim'), []);
  assert.deepEqual(
    problems('1.eq'),
    ['malformed number literal'],
    'a literal `1.` followed by `e` is an error in Lean',
  );
});

test('positions are 1-based lines and codepoint columns; trivia are UTF-16 spans', () => {
  const src = '𝔸 "𝔹" x\n  -- 𝔻\n  y';
  const { tokens, trivia } = lexLeanFull(src);
  assert.deepEqual(
    tokens.map((t) => [t.text, t.line, t.column, t.endColumn]),
    [
      ['𝔸', 1, 0, 1],
      ['x', 1, 6, 7],
      ['y', 3, 2, 3],
    ],
  );
  assert.deepEqual(
    trivia.map((t) => src.slice(t.start, t.end)),
    ['"𝔹"', '-- 𝔻'],
  );
  assert.deepEqual(
    lexLeanFull('x := "\n  abc').problems.map((p) => [p.line, p.column, p.endLine, p.endColumn]),
    [[1, 5, 1, 6]],
  );
});

test('pathological input is read in linear time, refused with a problem', () => {
  const cases: [string, string][] = [
    ['strings nested in {…}', '"{'.repeat(3000) + '}"'.repeat(3000)],
    ['s! nested in {…}', 's!"{'.repeat(3000) + '}"'.repeat(3000)],
    ['unterminated «', '«'.repeat(20000)],
    ['unterminated comments', '/- x '.repeat(20000)],
    ['unterminated raw strings', 'r#"'.repeat(20000)],
    ['symbols holding byte 0xAB', '⊫ x '.repeat(20000) + '»'],
  ];
  for (const [name, src] of cases) {
    const t0 = performance.now();
    const { problems: found } = lexLeanFull(src);
    const ms = performance.now() - t0;
    assert.ok(found.length > 0, name);
    assert.ok(ms < 5000, `${name}: ${ms.toFixed(0)} ms`);
  }
});

test('fuzz: on any text the lexer ends, and its tokens and skipped spans lie in order inside the text', () => {
  // a seeded generator (mulberry32) over the characters that matter to the lexer
  let seed = 12345;
  const rand = (): number => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const alphabet = [
    '"',
    "'",
    '\\',
    '{',
    '}',
    '-',
    '/',
    '«',
    '»',
    'r',
    '#',
    '`',
    's!',
    'x',
    'é',
    '⊫',
    '∑',
    ']',
    '1',
    'e',
    '.',
    ' ',
    '\n',
    'n',
    'u',
    '\t',
  ];
  for (let n = 0; n < 3000; n++) {
    const src = Array.from(
      { length: 1 + Math.floor(rand() * 24) },
      () => alphabet[Math.floor(rand() * alphabet.length)],
    ).join('');
    const { tokens, trivia, problems: found } = lexLeanFull(src);
    const lines = src.split('\n');
    for (const t of tokens) {
      assert.ok(
        t.line >= 1 && t.line <= lines.length && (t.endLine > t.line || t.endColumn >= t.column),
        JSON.stringify([src, t]),
      );
    }
    let last = 0;
    for (const s of trivia) {
      assert.ok(s.start >= last && s.end <= src.length && s.start < s.end, JSON.stringify([src, s]));
      last = s.start;
    }
    for (const p of found) assert.ok(p.line >= 1 && p.line <= lines.length, JSON.stringify([src, p]));
    const plain = lexLean(src);
    assert.ok(plain.every((t) => !t.quoted) && plain.length <= tokens.length);
  }
});
