// Any sorry is a target: Prove Goal at a sorry inside a `def`, an `instance`, an `abbrev`, a `match` arm, a
// `where` clause, a `have` of a longer proof, or a declaration made by a project's own command (`problem`). The goal comes from the REPL's own report of the sorry
// (`sorries[].goal`), the prover proves it as a lemma, and the proof is spliced at the sorry and re-checked.
// TEST DOUBLES: the service's `check` answers as the REPL does for these snippets (its sorries with their goals,
// as Lean prints them; `valid` once none is left), the model is a scripted engine; the prove loop is the real one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Verdict } from '../../backend/protocol';
import { proveInEditor } from '../../backend/editor/editorProve';
import { applyEdit } from '../../backend/editor/splice';
import { offsetAt } from '../../backend/editor/leanSource';
import type { ProveService } from '../../backend/editor/service';
import { prove } from '../../backend/prover/prove';
import { ScriptedEngine, StandInVerifier, valid } from '../prover/doubles';
import { SHAPES, replSorries } from './sorryShapes';

function replVerdict(code: string): Verdict {
  const sorries = replSorries(code);
  return sorries.length ? { status: 'sorry', reason: 'sorry', messages: [], sorries, time: 0 } : valid();
}

/** A well-formed answer proving the lemma of the prompt's formal statement with `tactic`. */
function lemmaAnswer(prompt: string, tactic: string): string {
  const statement = prompt.slice(prompt.indexOf('```lean4\n') + 9, prompt.lastIndexOf('\n```'));
  const lemma = statement.slice(statement.lastIndexOf('theorem '));
  return `<think>\nProve it.\n\n\`\`\`tactics\n${lemma}\n\`\`\`\n\nthen\n\n\`\`\`tactics\n  ${tactic}\n\`\`\`\n</think>\nDone.\n\n\`\`\`lean4\nimport Mathlib\n\n${lemma}\n  ${tactic}\n\`\`\``;
}

export function goalService(tactic = 'omega'): { service: ProveService; lemmas: string[]; checked: string[] } {
  const lemmas: string[] = [];
  const checked: string[] = [];
  const engine = new ScriptedEngine((c) => lemmaAnswer(c[1].content, tactic));
  const verifier = new StandInVerifier((code) => ({ verdict: replVerdict(code) }));
  const service: ProveService = {
    kind: 'in-process',
    describe: async () => ({}),
    prove: (req, onEvent, signal) => {
      lemmas.push(req.code);
      return prove(req, { engine, verifier }, onEvent, signal);
    },
    check: async (code) => {
      checked.push(code);
      const verdict = replVerdict(code);
      return { verdict, response: { sorries: verdict.sorries } };
    },
    close: async () => {},
  };
  return { service, lemmas, checked };
}

const cases: { where: string; line: string; name: string; lemma: string }[] = [
  { where: 'a def (term position)', line: '⟨a / b, sorry⟩', name: 'safeDiv', lemma: 'a / b * b ≤ a' },
  { where: 'an instance', line: 'instance oneLtTwo', name: 'oneLtTwo', lemma: '1 < 2 := by' },
  { where: 'an abbrev', line: 'abbrev one', name: 'one', lemma: '0 < 1 := by' },
  { where: 'a match arm', line: '| 0 =>', name: "pred'", lemma: '0 ≥ 0 := by' },
  { where: 'a where clause', line: '    sorry', name: 'uses_aux', lemma: 'n + 0 = n' },
  { where: 'a have of a longer proof', line: 'have h1', name: 'long_proof', lemma: 'a + a = 2 * a' },
  { where: "a project's own command (`problem`)", line: 'problem imo_shape', name: 'imo_shape', lemma: '1 ≤ n := by' },
];

for (const c of cases) {
  test(`Prove Goal at a sorry in ${c.where}: the REPL's goal, proved as a lemma, spliced and re-checked`, async () => {
    const lines = SHAPES.split('\n');
    let line = lines.findIndex((l) => l.includes(c.line));
    if (!lines[line].includes('sorry')) line++;
    const character = lines[line].indexOf('sorry');
    const { service, lemmas } = goalService();
    const result = await proveInEditor(
      { id: 'g', code: SHAPES, mode: 'goal', position: { line, character } },
      SHAPES,
      service,
      () => {},
      new AbortController().signal,
    );
    assert.equal(result.problem, undefined);
    assert.equal(result.status, 'proved');
    assert.equal(result.declaration?.name, c.name);
    assert.ok(result.goal?.statement.includes(c.lemma), result.goal?.statement);
    assert.equal(lemmas.length, 1);
    assert.ok(result.edit, 'an edit at the sorry');
    const after = applyEdit(SHAPES, result.edit!, (l, ch) => offsetAt(SHAPES, l, ch));
    // exactly that sorry is gone, the others stay
    const count = (t: string) => (t.match(/\bsorry\b/g) ?? []).length;
    assert.equal(count(after), count(SHAPES) - 1);
    assert.ok(after.includes('omega'));
  });
}
