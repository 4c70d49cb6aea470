// The splice rule: whatever the model's answer holds after its proof (or before it), what enters the user's
// file is the target declaration's body only, and the exact text to be written is checked again in place.
// The prove service here is a TEST DOUBLE (scripted answers; its `check` answers `valid` to anything without a
// `sorry` word and records what it was asked), so it is the structural rule that must refuse the carried
// commands: a double that accepted them would let them through, exactly as the stand-in REPL's text rules would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ProveRequest, ProveResult, ReplSorry, Verdict } from '../../backend/protocol';
import { proveInEditor } from '../../backend/editor/editorProve';
import { findDeclarations, offsetAt, standaloneSnippet } from '../../backend/editor/leanSource';
import { applyEdit, cutToBody, spliceProblem, spliceVerifiedProof } from '../../backend/editor/splice';
import { storedProofText } from '../../backend/editor/lineBreaks';
import type { ProveService } from '../../backend/editor/service';
import { lexLean } from '../../backend/lean/lexer';
import {
  findDeclarations as findLeanDeclarations,
  formalStatementOf,
  isCommandWord,
} from '../../backend/lean/declarations';
import { holeAttacks, spliceAttacks } from '../lean/data/cheatCorpus';

/** Answers with commands after (trailing) or before (leading, inside the proof text) the proof: the cheat corpus's. */
const corpus = spliceAttacks.map((a) => ({ name: a.id, proof: a.proof, at: a.at }));

const file = `import Mathlib

namespace Demo

theorem first_one : 2 + 2 = 4 := by
  sorry

theorem second_one (n : ℕ) : n + 0 = n := by
  sorry

end Demo
`;

function commandTokens(text: string): string[] {
  return lexLean(text)
    .filter((t) => t.kind === 'command' || (t.kind === 'ident' && isCommandWord(t.text)) || t.text === '@[')
    .map((t) => t.text);
}

/** What a trailing attack carries after its proof (`norm_num`): none of it may reach the file. */
function carried(proof: string): string {
  return proof.slice(proof.indexOf('norm_num') + 'norm_num'.length).trim();
}

function verdict(status: Verdict['status'], sorries: ReplSorry[] = []): Verdict {
  return { status, reason: status, messages: [], sorries, time: 0 };
}

/** The REPL lists `sorry` words only (never `admit`), as the reviewer saw. */
function listedSorries(code: string): ReplSorry[] {
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

/**
 * Lean's parser on the one point the probe relies on (a stand-in: the real rule is Lean's `sepByIndent` and
 * tactic parentheses): in a snippet whose proof stands in tactic parentheses (a line starting with `(`), a
 * line starting with a command, here `some_new_command`, which no list of ours knows, ends the tactic block
 * and Lean wants `)`. Outside parentheses Lean reads it as the next command and has nothing to say.
 */
function leanParse(code: string): Verdict | undefined {
  if (!/^\s*\(/m.test(code) || !/^\s*some_new_command/m.test(code)) return undefined;
  const line = code.split('\n').findIndex((l) => /^\s*some_new_command/.test(l)) + 1;
  return {
    ...verdict('lean_error'),
    reason: "Lean reported an error: unexpected token 'some_new_command'; expected ')'",
    messages: [{ severity: 'error', pos: { line, column: 2 }, endPos: null, data: "unexpected token; expected ')'" }],
  };
}

/** TEST DOUBLE of the prove service: scripted tactics; `check` records its snippet, `valid` unless it names sorry. */
function scripted(tactics: string, recheck?: (code: string) => Verdict | undefined) {
  const checked: string[] = [];
  const service: ProveService = {
    kind: 'in-process',
    describe: async () => ({}),
    async prove(req: ProveRequest): Promise<ProveResult> {
      return { id: req.id ?? 'x', status: 'proved', proof: null, tactics, attempts: [] };
    },
    async check(code: string) {
      checked.push(code);
      const sorries = listedSorries(code);
      const v = recheck?.(code) ?? (sorries.length ? verdict('sorry', sorries) : verdict('valid'));
      return { verdict: v, response: { sorries: v.sorries } };
    },
    close: async () => {},
  };
  return { service, checked };
}

const noop = () => {};
const signal = new AbortController().signal;

for (const { name, proof, at } of corpus) {
  if (at === 'trailing')
    test(`cut: no command token outside the body (${name})`, () => {
      const stored = storedProofText(proof); // as the editor stores it: CR and CRLF are line breaks (issue 29)
      assert.ok('text' in stored);
      const { body, cut } = cutToBody(stored.text);
      assert.deepEqual(commandTokens(body), [], body);
      assert.ok(cut !== null, 'something was cut');
      assert.match(body, /norm_num/);
    });

  for (const mode of ['theorem', 'goal'] as const) {
    const writer = mode === 'theorem' ? 'Accept' : 'goal mode';
    if (at !== 'trailing') {
      const what =
        at === 'leading'
          ? 'a command before the proof'
          : at === 'line-break'
            ? 'a line break Lean does not read (NEL, LS, PS, FF)'
            : 'a command no list knows, at the tactic column';
      test(`${writer}: ${what} is refused, nothing is written (${name})`, async () => {
        const { service } = scripted(proof, leanParse);
        const result = await proveInEditor(
          { id: 'r', code: file, mode, position: { line: 5, character: 2 } },
          file,
          service,
          noop,
          signal,
        );
        assert.equal(result.status, 'not_proved');
        assert.equal(result.edit, null);
        assert.ok(result.problem, 'the refusal says why');
      });
      continue;
    }
    test(`${writer}: the edit holds the body only and is re-checked in place (${name})`, async () => {
      const { service, checked } = scripted(proof);
      const result = await proveInEditor(
        { id: 'r', code: file, mode, position: { line: 5, character: 2 } },
        file,
        service,
        noop,
        signal,
      );
      assert.equal(result.status, 'proved', result.problem);
      const after = applyEdit(file, result.edit!, (l, c) => offsetAt(file, l, c));
      assert.deepEqual(commandTokens(after), commandTokens(file), after);
      assert.ok(!after.includes(carried(proof)), after);
      assert.equal(findDeclarations(after).length, 2);
      // the declaration exactly as it will be written was checked in its place in the file, and last the same
      // snippet with the proof in tactic parentheses (Lean's word that it is one tactic block)
      const decl = findDeclarations(after)[0];
      const exact = standaloneSnippet(after, decl).code;
      assert.equal(checked[checked.length - 2], exact);
      assert.ok(exact.includes(after.slice(decl.start, decl.end)));
      const probe = checked[checked.length - 1];
      assert.match(probe, /\n {2}\(norm_num\n {2}\)/, probe);
      assert.equal(probe.replace('(norm_num\n  )', 'norm_num'), exact);
    });
  }
}

test('Prove All Sorries: every proof applied one after another, the file keeps its own commands only', async () => {
  let text = file;
  let written = 0;
  for (const { name, proof, at } of corpus) {
    if (!findDeclarations(text).some((d) => d.sorries.length > 0)) text = file; // all proved: a fresh file
    const decl = findDeclarations(text).find((d) => d.sorries.length > 0)!;
    const { service } = scripted(proof, leanParse);
    const result = await proveInEditor(
      { id: 'q', code: text, mode: 'theorem', position: { line: decl.startLine, character: 0 } },
      text,
      service,
      noop,
      signal,
    );
    if (at !== 'trailing') {
      assert.equal(result.status, 'not_proved', name);
      assert.equal(result.edit, null, name);
      continue;
    }
    assert.equal(result.status, 'proved', `${name}: ${result.problem}`);
    const current = text;
    text = applyEdit(current, result.edit!, (l, c) => offsetAt(current, l, c));
    assert.deepEqual(commandTokens(text), commandTokens(file), name);
    assert.ok(!text.includes(carried(proof)), name);
    written++;
  }
  assert.equal(written, corpus.filter((c) => c.at === 'trailing').length);
});

test('a proof that is nothing but a command is refused', async () => {
  const { service } = scripted('\nvariable (h : False)\ninclude h\n');
  const result = await proveInEditor(
    { id: 'r', code: file, mode: 'theorem', position: { line: 5, character: 2 } },
    file,
    service,
    noop,
    signal,
  );
  assert.equal(result.status, 'not_proved');
  assert.equal(result.edit, null);
  assert.match(result.problem ?? '', /no proof before its first command/);
});

test('`open … in` / `set_option … in` followed by a tactic stay: they are scoped to that tactic', () => {
  const proof = '\n  open Real in\n  norm_num\n  set_option maxRecDepth 1000 in\n  simp';
  assert.deepEqual(cutToBody(proof), { body: proof, cut: null });
});

test('in-place re-check: Lean refusing the written text refuses the edit', async () => {
  const { service } = scripted('\n  norm_num\nvariable (h : False)\n', () => verdict('lean_error'));
  const result = await proveInEditor(
    { id: 'r', code: file, mode: 'theorem', position: { line: 5, character: 2 } },
    file,
    service,
    noop,
    signal,
  );
  assert.equal(result.status, 'not_proved');
  assert.equal(result.edit, null);
  assert.match(result.problem ?? '', /does not accept the declaration as it would be written/);
});

test('structural check: text that swallows or glues to what follows is refused', () => {
  const src = 'theorem a : True := by\n  sorry\n\ntheorem b : True := trivial\n';
  const at = src.indexOf('sorry');
  const put = (s: string) => src.slice(0, at) + s + src.slice(at + 5);
  assert.match(spliceProblem(src, at, at + 5, put('trivial /-')) ?? '', /lex cleanly/);
  assert.match(spliceProblem(src, at, at + 5, put('trivial\n  include h')) ?? '', /command of its own/);
  assert.match(spliceProblem(src, at, at + 5, put('admit')) ?? '', /'admit'/);
  assert.equal(spliceProblem(src, at, at + 5, put('trivial')), null);
});

// ---- goal mode: never `proved` with a hole in the edit ----

const goalFile = `import Mathlib

theorem two_goals (a : ℕ) (h : a = 1) : a = 1 ∧ a + 0 = 1 := by
  constructor
  · sorry
  · sorry
`;

for (const { id, tactics } of holeAttacks) {
  test(`goal mode refuses ${id} in the spliced proof (other sorries left)`, async () => {
    const { service } = scripted(tactics);
    const result = await proveInEditor(
      { id: 'g', code: goalFile, mode: 'goal', position: { line: 4, character: 4 } },
      goalFile,
      service,
      noop,
      signal,
    );
    assert.equal(result.status, 'not_proved');
    assert.equal(result.edit, null);
  });

  test(`goal mode refuses ${id} in the spliced proof (no other sorry left)`, async () => {
    const src = 'theorem one_goal (a : ℕ) (h : a = 1) : a = 1 := by\n  sorry\n';
    const { service } = scripted(tactics);
    const result = await proveInEditor(
      { id: 'g', code: src, mode: 'goal', position: { line: 1, character: 2 } },
      src,
      service,
      noop,
      signal,
    );
    assert.equal(result.status, 'not_proved');
    assert.equal(result.edit, null);
  });

  test(`Accept and Prove All Sorries refuse ${id} in the written proof`, async () => {
    const { service } = scripted(`\n  ${tactics.replace(/\n/g, '\n  ')}\n`);
    const result = await proveInEditor(
      { id: 'a', code: file, mode: 'theorem', position: { line: 4, character: 0 } },
      file,
      service,
      noop,
      signal,
    );
    assert.equal(result.status, 'not_proved');
    assert.equal(result.edit, null);
  });
}

test('the hole rule reads names as Lean resolves them, and leaves ordinary names alone', () => {
  const src = 'theorem a : True := by\n  sorry\n\ntheorem b : True := trivial\n';
  const at = src.indexOf('sorry');
  const put = (s: string) => src.slice(0, at) + s + src.slice(at + 5);
  for (const hole of ['_root_.sorryAx _ false', '«sorryAx» _ false', 'Foo.«sorryAx» _', '@_root_.sorryAx _ false'])
    assert.match(spliceProblem(src, at, at + 5, put(`exact ${hole}`)) ?? '', /sorryAx/, hole);
  assert.match(spliceProblem(src, at, at + 5, put('apply?')) ?? '', /search tactic ending in '\?'.*hidden sorry/);
  for (const search of ['exact?', 'first | exact h | apply?', 'simp?', 'rw?'])
    assert.match(spliceProblem(src, at, at + 5, put(search)) ?? '', /search tactic/, search);
  assert.match(spliceProblem(src, at, at + 5, put('set_option warn.sorry false in\n  trivial')) ?? '', /warn\.sorry/);
  for (const fine of [
    'exact (List.head? [1]).isSome.elim trivial',
    'simp [xs.head?]',
    'simp [get?, List.get?]',
    'rw [← getElem?_eq_getElem]',
    'simp? says simp only [true_and]',
    'exact sorry_free_lemma',
    'trivial',
  ])
    assert.equal(spliceProblem(src, at, at + 5, put(fine)), null, fine);
});

test('ordinary proofs are not cut: tactic prefixes, alternatives, calc steps, brackets across lines, names near command words', () => {
  for (const proof of [
    '\n  open scoped Real in\n  simp',
    '\n  open Real in\n  norm_num\n  set_option maxRecDepth 1000 in\n  simp',
    '\n  count_heartbeats in\n  simp',
    '\n  calc a = b := by simp\n  _ = c := by simp',
    ' nlinarith [sq_nonneg (a - b),\n    sq_nonneg c]',
    '\n  induction n with\n  | zero => rfl\n  | succ n ih =>\n    simp [ih]',
    '\n  refine ⟨?_, ?a⟩ <;> simp [xs.head?, h_wanted, instance_le, h.variable]',
    '\n  haveI := inferInstance\n  exact h',
  ])
    assert.deepEqual(cutToBody(proof), { body: proof, cut: null }, proof);
});

test("the column rule: what stands at or left of the declaration's column ends the body unless it belongs to it", () => {
  assert.equal(cutToBody('\n  norm_num\nsome_new_command x\n').body, '\n  norm_num');
  // inside brackets a line may start anywhere; `|` alternatives, `termination_by`, `where` continue it
  const bracketed = '\n  exact ⟨1,\n2⟩';
  assert.deepEqual(cutToBody(bracketed), { body: bracketed, cut: null });
  const alternatives = '\n  induction n with\n| zero => rfl\n| succ k ih => simp';
  assert.deepEqual(cutToBody(alternatives), { body: alternatives, cut: null });
  // a declaration written indented (inside a namespace) has its own column
  assert.equal(cutToBody('\n    norm_num\n  some_new_command x', 2).body, '\n    norm_num');
  assert.deepEqual(cutToBody('\n    norm_num\n   simp', 2), { body: '\n    norm_num\n   simp', cut: null });
});

test('goal re-check: no listed sorry left means the verdict must be valid (a sorry Lean does not list is refused)', async () => {
  const src = 'theorem t (a : ℕ) (h : a = 1) : a = 1 := by\n  sorry\n';
  const [decl] = findDeclarations(src);
  const out = await spliceVerifiedProof({
    text: src,
    target: { kind: 'sorry', decl, site: decl.sorries[0], listedBefore: 1 },
    proof: 'exact h',
    // what Lean says when a hidden hole (a macro, an `admit`) remains: sorry, with no sorry listed
    check: async () => ({ verdict: verdict('sorry') }),
  });
  assert.equal(out.ok, false);
});

test('goal re-check: the sorries Lean lists must be exactly the other ones, where they stand', async () => {
  const [decl] = findDeclarations(goalFile);
  const site = decl.sorries[0];
  const base = { text: goalFile, target: { kind: 'sorry' as const, decl, site, listedBefore: 2 }, proof: 'exact h' };
  const good = await spliceVerifiedProof({
    ...base,
    check: async (code) => ({ verdict: verdict('sorry', listedSorries(code)) }),
  });
  assert.equal(good.ok, true);
  const extra = await spliceVerifiedProof({
    ...base,
    check: async (code) => ({ verdict: verdict('sorry', [...listedSorries(code), ...listedSorries(code)]) }),
  });
  assert.equal(extra.ok, false);
  const moved = await spliceVerifiedProof({
    ...base,
    check: async (code) => ({
      verdict: verdict(
        'sorry',
        listedSorries(code).map((s) => ({ ...s, pos: { line: s.pos!.line - 1, column: 2 } })),
      ),
    }),
  });
  assert.equal(moved.ok, false);
});

test('goal mode with other sorries left in a file that defines syntax is refused', async () => {
  const src = 'macro "cheat" : tactic => `(tactic| sorry)\n\n' + goalFile.replace('import Mathlib\n\n', '');
  const [decl] = findDeclarations(src);
  const out = await spliceVerifiedProof({
    text: src,
    target: { kind: 'sorry', decl, site: decl.sorries[0], listedBefore: 2 },
    proof: 'first | exact a_0 | cheat',
    check: async (code) => ({ verdict: verdict('sorry', listedSorries(code)) }),
  });
  assert.equal(out.ok, false);
  assert.match(out.ok ? '' : out.problem, /defines its own syntax/);
});

test('what belongs to the declaration stays: `termination_by`, `decreasing_by`, `where` clauses', () => {
  const proof =
    '\n  exact aux n\ntermination_by n\ndecreasing_by\n  simp_wf\n  omega\nwhere\n  aux (k : ℕ) : k = k := rfl';
  assert.deepEqual(cutToBody(proof), { body: proof, cut: null });
  const src = 'theorem t (n : ℕ) : n = n := by\n  sorry\n\ntheorem u : True := trivial\n';
  const [decl] = findDeclarations(src);
  const from = decl.statementEnd!;
  const next = src.slice(0, from) + ' by\n  exact aux n\nwhere\n  aux (k : ℕ) : k = k := rfl' + src.slice(decl.end);
  assert.equal(spliceProblem(src, from, decl.end, next), null);
});

test('the declaration finder ends a declaration at every listed command, so a later statement never holds it inside an earlier theorem', () => {
  for (const command of ['variable? [h : Fact False]', 'proof_wanted bad : False', 'add_aesop_rules safe (by simp)']) {
    for (const indent of ['', '  ']) {
      const src = `theorem a : True := by\n  trivial\n${indent}${command}\n\ntheorem b : False := by\n  sorry\n`;
      const [a, b] = findLeanDeclarations(src);
      assert.equal(a.name, 'a');
      assert.ok(!src.slice(a.start.offset, a.end.offset).includes(command), `${indent}${command}`);
      const statement = formalStatementOf(src, b).text;
      // the earlier theorem goes along without the command; only a scope command (`variable?`) stays, on its own
      assert.ok(statement.includes('theorem a : True := by\n  trivial'), statement);
      assert.equal(statement.includes(command), command.startsWith('variable?'), statement);
    }
  }
});

test('the probe: the same snippet with the proof in tactic parentheses, later lines one column right; not for a term sorry or past termination_by', async () => {
  const src = 'theorem t (a : ℕ) (h : a = 1) : a = 1 ∧ True := by\n  sorry\n';
  const [decl] = findDeclarations(src);
  const seen: string[] = [];
  const check = async (code: string) => {
    seen.push(code);
    return { verdict: verdict('valid') };
  };
  const proof = '\n  constructor\n  · exact h\n  · trivial\n';
  const out = await spliceVerifiedProof({ text: src, target: { kind: 'body', decl }, proof, check });
  assert.equal(out.ok, true);
  assert.equal(seen.length, 2);
  assert.ok(seen[0].trimEnd().endsWith('by\n  constructor\n  · exact h\n  · trivial'), seen[0]);
  assert.ok(seen[1].trimEnd().endsWith('by\n  (constructor\n   · exact h\n   · trivial\n  )'), seen[1]);

  // a tactic-position sorry: the same, at the sorry's column
  seen.length = 0;
  const site = decl.sorries[0];
  const goal = await spliceVerifiedProof({
    text: src,
    target: { kind: 'sorry', decl, site, listedBefore: 1 },
    proof,
    check,
  });
  assert.equal(goal.ok, true);
  assert.ok(seen[1].trimEnd().endsWith('by\n  (constructor\n   · exact h\n   · trivial\n  )'), seen[1]);

  // a term-position sorry is spliced as `(by …)` already: one check
  seen.length = 0;
  const termSrc = 'theorem u (a : ℕ) (h : a = 1) : a = 1 := sorry\n';
  const [termDecl] = findDeclarations(termSrc);
  const term = await spliceVerifiedProof({
    text: termSrc,
    target: { kind: 'sorry', decl: termDecl, site: termDecl.sorries[0], listedBefore: 1 },
    proof: 'exact h',
    check,
  });
  assert.equal(term.ok, true);
  assert.equal(seen.length, 1);

  // termination_by / decreasing_by / where stand outside the tactic block: the parentheses close before them
  seen.length = 0;
  const rec = await spliceVerifiedProof({
    text: src,
    target: { kind: 'body', decl },
    proof: '\n  exact aux h\nwhere\n  aux (k : a = 1) : a = 1 ∧ True := ⟨k, trivial⟩',
    check,
  });
  assert.equal(rec.ok, true);
  assert.equal(seen.length, 2);
  assert.ok(
    seen[1]
      .trimEnd()
      .endsWith('by\n  (  exact aux h\n  )\n  where\n    aux (k : a = 1) : a = 1 ∧ True := ⟨k, trivial⟩'),
    seen[1],
  );
});

test('a `where` line later in the answer does not turn the probe off: a command before it is still caught (issue 29)', async () => {
  const src = 'theorem t : True := by\n  sorry\n';
  const [decl] = findDeclarations(src);
  const seen: string[] = [];
  const out = await spliceVerifiedProof({
    text: src,
    target: { kind: 'body', decl },
    proof: '\n  trivial\n  some_new_command x\nwhere\n  aux : True := trivial',
    check: async (code: string) => {
      seen.push(code);
      return { verdict: leanParse(code) ?? verdict('valid') };
    },
  });
  assert.equal(out.ok, false);
  assert.equal(seen.length, 2, 'the parenthesised re-check ran');
  assert.match(out.ok ? '' : out.problem, /in parentheses Lean answers lean_error/);
});

test('the probe refuses when Lean answers otherwise with the proof in parentheses, and says why', async () => {
  const src = 'theorem t : True := by\n  sorry\n';
  const [decl] = findDeclarations(src);
  let calls = 0;
  const out = await spliceVerifiedProof({
    text: src,
    target: { kind: 'body', decl },
    proof: '\n  trivial\n  some_new_command x',
    check: async () => ({ verdict: calls++ === 0 ? verdict('valid') : verdict('lean_error') }),
  });
  assert.equal(out.ok, false);
  assert.match(out.ok ? '' : out.problem, /in parentheses Lean answers lean_error.*command of its own/);
});
