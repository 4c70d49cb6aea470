// Issue 29, finding 1: the text is checked as an editor will store it. A lone CR hides commands from Lean and
// from our lexer (both end a `--` comment at LF only), but VS Code's text buffer breaks the line there
// (pieceTreeBase.ts createLineStarts: CR, LF and CRLF), so `variable (h : False)` would stand at column 0 in
// the file after Accept. The prove service here is a TEST DOUBLE (scripted answers; `check` answers `valid`
// to anything without a `sorry` or `bad_lemma` word and records what it was asked): what it shows is that the
// editor's rule normalises or refuses the text before any check, for every writer (Accept, goal mode, Prove All
// Sorries, Repair, Repair All and `kimina repair --apply` all come through proveInEditor and the splice rule).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProveParams, ProveRequest, ProveResult, ReplSorry, Verdict } from '../../backend/protocol';
import { proveInEditor } from '../../backend/editor/editorProve';
import { findDeclarations, offsetAt } from '../../backend/editor/leanSource';
import { applyEdit } from '../../backend/editor/splice';
import { documentEol, storedProofText } from '../../backend/editor/lineBreaks';
import type { ProveService } from '../../backend/editor/service';
import { lexLean } from '../../backend/lean/lexer';
import { isCommandWord } from '../../backend/lean/declarations';
import { visibleBreaks } from '../../media/proofViewState';

const file = `import Mathlib

theorem first_one : 2 + 2 = 4 := by
  sorry

theorem later_false : 1 = 2 := by
  sorry
`;

const brokenFile = `import Mathlib

theorem first_one : 2 + 2 = 4 := by
  exact bad_lemma

theorem later_false : 1 = 2 := by
  sorry
`;

/** What VS Code's text buffer makes of text: every CR, LF and CRLF is a line break, stored as the file's EOL. */
function asStored(text: string): string {
  return text.replace(/\r\n|\r|\n/g, documentEol(text));
}

function columnZeroCommands(text: string): string[] {
  return lexLean(asStored(text).replace(/\r\n/g, '\n'))
    .filter((t) => t.column === 0 && (t.kind === 'command' || (t.kind === 'ident' && isCommandWord(t.text))))
    .map((t) => t.text);
}

function verdict(status: Verdict['status'], sorries: ReplSorry[] = [], error?: number): Verdict {
  const messages: Verdict['messages'] =
    error === undefined
      ? []
      : [{ severity: 'error', pos: { line: error, column: 2 }, endPos: null, data: 'unknown identifier' }];
  return { status, reason: status, messages, sorries, time: 0 };
}

function listed(code: string): ReplSorry[] {
  const out: ReplSorry[] = [];
  code.split('\n').forEach((l, i) => {
    for (const m of l.matchAll(/(?<![\w.])sorry(?![\w])/g))
      out.push({
        goal: '⊢ 2 + 2 = 4',
        pos: { line: i + 1, column: m.index },
        endPos: { line: i + 1, column: m.index + 5 },
      });
  });
  return out;
}

/** TEST DOUBLE of the prove service: scripted tactics; `check` records its snippet. */
function scripted(tactics: string) {
  const checked: string[] = [];
  const service: ProveService = {
    kind: 'in-process',
    describe: async () => ({}),
    async prove(req: ProveRequest): Promise<ProveResult> {
      return { id: req.id ?? 'x', status: 'proved', proof: null, tactics, attempts: [] };
    },
    async check(code: string) {
      checked.push(code);
      const bad = code.split('\n').findIndex((l) => l.includes('bad_lemma'));
      const sorries = listed(code);
      const v =
        bad >= 0 ? verdict('lean_error', [], bad + 1) : sorries.length ? verdict('sorry', sorries) : verdict('valid');
      return { verdict: v, response: { sorries: v.sorries } };
    },
    close: async () => {},
  };
  return { service, checked };
}

const signal = new AbortController().signal;

async function run(text: string, mode: ProveParams['mode'], tactics: string) {
  const { service, checked } = scripted(tactics);
  const result = await proveInEditor(
    { id: 'r', code: text, mode, position: { line: 3, character: 2 } },
    text,
    service,
    () => {},
    signal,
  );
  return { result, checked };
}

/** The answer: `-- done`, then commands behind lone CRs, then a tactic on the next real line. */
const loneCr = 'norm_num -- done\rvariable (h : False)\rinclude h\rexample : True := by\n  try trivial';

for (const [mode, text] of [
  ['theorem', file],
  ['goal', file],
  ['repair', brokenFile],
] as const) {
  const writer =
    mode === 'theorem'
      ? 'Accept / Prove All Sorries'
      : mode === 'goal'
        ? 'goal mode'
        : 'Repair / Repair All / kimina repair';
  test(`${writer}: a lone CR cannot carry commands into the file as the editor stores it (issue 29)`, async () => {
    const { result, checked } = await run(text, mode, loneCr);
    if (result.edit) {
      const after = applyEdit(text, result.edit, (l, c) => offsetAt(text, l, c));
      assert.deepEqual(columnZeroCommands(after), columnZeroCommands(text), after);
      assert.ok(!after.includes('\r'), 'no CR reaches an LF file');
      assert.ok(!after.includes('variable'), after);
      // what was re-checked is the declaration exactly as the file will hold it
      const decl = findDeclarations(after)[0];
      assert.ok(checked.some((c) => c.includes(after.slice(decl.start, decl.end))));
    } else assert.ok(result.problem, 'a refusal says why');
  });
}

for (const [name, ch] of [
  ['NEL (U+0085)', '\u0085'],
  ['LS (U+2028)', '\u2028'],
  ['PS (U+2029)', '\u2029'],
  ['VT', '\u000B'],
  ['FF', '\u000C'],
] as const) {
  test(`a proof holding ${name} is refused before any check, and the refusal names it`, async () => {
    const { result, checked } = await run(file, 'theorem', `norm_num -- done${ch}variable (h : False)${ch}include h`);
    assert.equal(result.status, 'not_proved');
    assert.equal(result.edit, null);
    assert.match(result.problem ?? '', /line break/);
    assert.equal(checked.length, 0, 'nothing was checked');
  });
}

test('CRLF inside the proof of an LF file is stored as LF; the edit and the check hold the same text', async () => {
  const { result, checked } = await run(file, 'theorem', 'constructor\r\n  · norm_num\r\n  · norm_num');
  assert.equal(result.status, 'proved', result.problem);
  assert.ok(!result.edit!.newText.includes('\r'));
  const after = applyEdit(file, result.edit!, (l, c) => offsetAt(file, l, c));
  assert.ok(checked.some((c) => c.includes('constructor\n    · norm_num\n    · norm_num')));
  assert.equal(asStored(after), after);
});

test('in a CRLF file the edit is written with CRLF and the re-checked text is the file as it will be', async () => {
  const crlf = file.replace(/\n/g, '\r\n');
  const { result, checked } = await run(crlf, 'theorem', 'constructor\n  · norm_num\r  · norm_num');
  assert.equal(result.status, 'proved', result.problem);
  assert.equal(result.edit!.newText, ' by\r\n  constructor\r\n    · norm_num\r\n    · norm_num');
  const after = applyEdit(crlf, result.edit!, (l, c) => offsetAt(crlf, l, c));
  assert.equal(asStored(after), after, 'the editor changes nothing when it stores it');
  assert.ok(checked[0].includes(' by\r\n  constructor\r\n    · norm_num\r\n    · norm_num'), checked[0]);
});

test('storedProofText: CR and CRLF become LF, foreign breaks are refused with their line', () => {
  assert.deepEqual(storedProofText('a\rb\r\nc\nd'), { text: 'a\nb\nc\nd' });
  const nel = storedProofText('a\nb\u0085c');
  assert.ok('problem' in nel && /NEL, U\+0085\) on its line 2/.test(nel.problem), JSON.stringify(nel));
  assert.equal(documentEol('a\r\nb\r\nc\n'), '\r\n');
  assert.equal(documentEol('a\nb\r\nc\n'), '\n');
  assert.equal(documentEol('no break'), '\n');
});

test('the Proof view shows a CR and the other breaks Lean does not read, never as a space', () => {
  assert.equal(visibleBreaks('norm_num -- done\rvariable'), 'norm_num -- done␍variable');
  assert.equal(visibleBreaks('a\u2028b\u2029c\u0085d\ne'), 'a␤b¶c␤d\ne');
});
