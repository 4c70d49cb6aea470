// Proposals (extension/proposal.ts) against the vscode TEST DOUBLE: Accept applies exactly the proposal's edit,
// a proposal's range follows the user's edits above it, an edit inside it makes it stale, Reject removes it.
import './useVscodeDouble';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { double } from './vscodeDouble';
import { type Decision, type Proposal, type Recheck, Proposals } from '../../extension/proposal';
import { ProvedMarks } from '../../extension/decorations';

const text = [
  'import Mathlib',
  '',
  'theorem one_add_one : 1 + 1 = 2 := by',
  '  sorry',
  '',
  'theorem two_add_two : 2 + 2 = 4 := by',
  '  sorry',
  '',
].join('\n');

/** A proof of the declaration starting on `line`: everything after its `:=` becomes ` by\n  <tactic>`. */
function proposalAt(doc: vscode.TextDocument, line: number, tactic: string, name: string): Proposal {
  const assign = doc.lineAt(line).text.indexOf(':=') + 2;
  const range = { start: { line, character: assign }, end: { line: line + 1, character: '  sorry'.length } };
  return {
    id: Proposals.newId(),
    uri: doc.uri,
    edit: { range, newText: ` by\n  ${tactic}` },
    replaced: ' by\n  sorry',
    declaration: name,
    declarationLine: line,
    kind: 'proof',
    checkedVersion: doc.version,
    declarationText: doc
      .getText()
      .slice(doc.offsetAt(new vscode.Position(line, 0)), doc.offsetAt(new vscode.Position(line + 1, 7))),
  };
}

/** TEST DOUBLE of Accept's check through the backend: records what it was asked, answers `answer`. */
function setup(answer: Awaited<ReturnType<Recheck>> = { ok: true }) {
  double.reset();
  const doc = double.open('/project/Basic.lean', text);
  const rechecked: Parameters<Recheck>[0][] = [];
  const proposals = new Proposals(async (p) => {
    rechecked.push(p);
    return answer;
  });
  const decided: Decision[] = [];
  proposals.onDecided((d) => decided.push(d));
  return { doc, proposals, decided, rechecked };
}

test("Accept applies exactly the proposal's edit, once, and the proposal is gone", async () => {
  const { doc, proposals, decided } = setup();
  const p = proposalAt(doc, 2, 'norm_num', 'one_add_one');
  await proposals.add(p);
  assert.equal(proposals.pending(doc.uri).length, 1);
  assert.equal(double.context['kimina.hasProposal'], true);
  const { outcome } = await proposals.accept(p.id);
  assert.equal(outcome, 'accepted');
  assert.equal(double.applied.length, 1, 'one edit applied');
  const [applied] = double.applied;
  assert.equal(applied.uri, doc.uri.toString());
  assert.deepEqual(
    { start: { ...applied.range.start }, end: { ...applied.range.end } },
    { start: { line: 2, character: 34 }, end: { line: 3, character: 7 } },
  );
  assert.equal(applied.newText, ' by\n  norm_num');
  assert.equal(doc.getText(), text.replace('1 + 1 = 2 := by\n  sorry', '1 + 1 = 2 := by\n  norm_num'));
  assert.deepEqual(proposals.pending(), []);
  assert.equal(double.context['kimina.hasProposal'], false);
  assert.deepEqual(
    decided.map((d) => [d.outcome, d.proposal?.id]),
    [['accepted', p.id]],
  );
  assert.equal((await proposals.accept(p.id)).outcome, 'none', 'a proposal is accepted once');
  assert.equal(double.applied.length, 1);
});

test("a proposal's range follows the user's edit above its declaration", async () => {
  const { doc, proposals } = setup();
  const p = proposalAt(doc, 5, 'norm_num', 'two_add_two');
  await proposals.add(p);
  // the user adds two lines at the top and proves the first theorem by hand
  double.type(doc, new vscode.Range(0, 0, 0, 0), '-- notes\n-- more\n');
  const sorryAt = doc.getText().indexOf('sorry');
  double.type(doc, new vscode.Range(doc.positionAt(sorryAt), doc.positionAt(sorryAt + 5)), 'rfl');
  const lenses = proposals.provideCodeLenses(doc);
  assert.deepEqual(
    lenses.map((l) => [l.range.start.line, l.command?.command]),
    [
      [7, 'kimina.acceptProof'],
      [7, 'kimina.rejectProof'],
      [7, 'kimina.showProposalDiff'],
    ],
    'the lenses moved with the declaration',
  );
  assert.equal((await proposals.accept(p.id)).outcome, 'accepted');
  assert.equal(double.applied.length, 1);
  assert.equal(double.applied[0].range.start.line, 7);
  assert.equal(
    doc.getText(),
    '-- notes\n-- more\n' +
      text
        .replace('1 + 1 = 2 := by\n  sorry', '1 + 1 = 2 := by\n  rfl')
        .replace('2 + 2 = 4 := by\n  sorry', '2 + 2 = 4 := by\n  norm_num'),
  );
});

test('an edit inside the proposal makes it stale: accepting inserts nothing', async () => {
  const { doc, proposals, decided } = setup();
  const p = proposalAt(doc, 2, 'norm_num', 'one_add_one');
  await proposals.add(p);
  double.type(doc, new vscode.Range(3, 2, 3, 7), 'simp');
  assert.match(proposals.provideCodeLenses(doc)[0].command!.title, /file changed/);
  assert.equal((await proposals.accept(p.id)).outcome, 'stale');
  assert.deepEqual(double.applied, []);
  assert.equal(doc.getText(), text.replace('  sorry', '  simp'));
  assert.deepEqual(
    decided.map((d) => d.outcome),
    ['stale'],
  );
});

test('Reject removes the proposal and its lenses and leaves the file as it was', async () => {
  const { doc, proposals, decided } = setup();
  const first = proposalAt(doc, 2, 'norm_num', 'one_add_one');
  const second = proposalAt(doc, 5, 'decide', 'two_add_two');
  await proposals.add(first);
  await proposals.add(second);
  // two pending: each has its three lenses, and one "Accept All Verified" sits on the first
  assert.equal(proposals.provideCodeLenses(doc).length, 7);
  assert.equal((await proposals.reject(first.id))?.id, first.id);
  assert.deepEqual(
    proposals.pending().map((p) => p.id),
    [second.id],
  );
  assert.deepEqual(
    proposals.provideCodeLenses(doc).map((l) => l.command?.arguments),
    [[second.id], [second.id], [second.id]],
  );
  assert.equal(await proposals.reject(first.id), undefined, 'rejected once');
  assert.deepEqual(double.applied, []);
  assert.equal(doc.getText(), text);
  assert.deepEqual(
    decided.map((d) => [d.outcome, d.proposal?.id]),
    [['rejected', first.id]],
  );
  // Accept All then applies the one left
  assert.deepEqual(await proposals.acceptAll(doc.uri), { accepted: 1, stale: 0 });
  assert.equal(doc.getText(), text.replace('2 + 2 = 4 := by\n  sorry', '2 + 2 = 4 := by\n  decide'));
});

// Issue 29, finding 3: a proposal goes stale on any change to its declaration, statement included; after any
// other change of the file, Accept has Lean check it again first; gutter marks follow and clear.
test("an edit of the proposal's statement makes it stale: Accept writes nothing", async () => {
  const { doc, proposals, decided } = setup();
  const p = proposalAt(doc, 2, 'norm_num', 'one_add_one');
  await proposals.add(p);
  double.type(doc, new vscode.Range(2, 30, 2, 31), '3'); // 1 + 1 = 2  ->  1 + 1 = 3
  assert.match(proposals.provideCodeLenses(doc)[0].command!.title, /file changed/);
  assert.equal((await proposals.accept(p.id)).outcome, 'stale');
  assert.deepEqual(double.applied, []);
  assert.deepEqual(
    decided.map((d) => d.outcome),
    ['stale'],
  );
});

test('a change elsewhere in the file: Accept checks again on the file as it is now, and writes only if Lean agrees', async () => {
  const ok = setup();
  const p = proposalAt(ok.doc, 5, 'norm_num', 'two_add_two');
  await ok.proposals.add(p);
  double.type(ok.doc, new vscode.Range(3, 2, 3, 7), 'rfl'); // the other theorem, proved by hand
  assert.equal((await ok.proposals.accept(p.id)).outcome, 'accepted');
  assert.equal(ok.rechecked.length, 1);
  assert.equal(ok.rechecked[0].code, text.replace('  sorry', '  rfl'), 'checked on the file as it is now');
  assert.equal(ok.rechecked[0].declarationLine, 5);
  assert.equal(ok.rechecked[0].edit.newText, ' by\n  norm_num');

  const refused = setup({ ok: false, problem: 'Lean does not accept the declaration as it would be written now' });
  const q = proposalAt(refused.doc, 5, 'norm_num', 'two_add_two');
  await refused.proposals.add(q);
  double.type(refused.doc, new vscode.Range(0, 0, 0, 0), 'open Nat\n');
  const out = await refused.proposals.accept(q.id);
  assert.equal(out.outcome, 'stale');
  assert.match(out.problem ?? '', /does not accept/);
  assert.deepEqual(double.applied, []);

  // no change since the check: no second check
  const still = setup();
  const r = proposalAt(still.doc, 2, 'norm_num', 'one_add_one');
  await still.proposals.add(r);
  assert.equal((await still.proposals.accept(r.id)).outcome, 'accepted');
  assert.equal(still.rechecked.length, 0);
});

test('a change between the check and the proposal: found again by its text and checked again, or stale when its declaration changed', async () => {
  const { doc, proposals, rechecked } = setup();
  const p = proposalAt(doc, 5, 'norm_num', 'two_add_two');
  double.type(doc, new vscode.Range(0, 0, 0, 0), '-- typed while proving\n');
  await proposals.add(p);
  assert.equal((await proposals.accept(p.id)).outcome, 'accepted');
  assert.equal(rechecked[0].declarationLine, 6);
  assert.match(doc.getText(), /2 \+ 2 = 4 := by\n {2}norm_num/);

  const second = setup();
  const q = proposalAt(second.doc, 5, 'norm_num', 'two_add_two');
  double.type(second.doc, new vscode.Range(5, 30, 5, 31), '5'); // its statement, before the proposal arrived
  await second.proposals.add(q);
  assert.equal((await second.proposals.accept(q.id)).outcome, 'stale');
  assert.deepEqual(double.applied, []);
});

test('a gutter mark follows its declaration and is cleared when the declaration changes', () => {
  const { doc } = setup();
  const marks = new ProvedMarks({
    extensionUri: vscode.Uri.file('/extension'),
    subscriptions: [],
  } as unknown as vscode.ExtensionContext);
  const start = doc.offsetAt(new vscode.Position(2, 0));
  const end = doc.offsetAt(new vscode.Position(3, 7));
  marks.add(doc.uri, 'one_add_one', { start, end });
  double.type(doc, new vscode.Range(0, 0, 0, 0), '-- notes\n');
  assert.deepEqual(marks.marksOf(doc.uri), [{ name: 'one_add_one', start: start + 9, end: end + 9 }]);
  double.type(doc, new vscode.Range(7, 2, 7, 7), 'rfl'); // another declaration
  assert.equal(marks.marksOf(doc.uri).length, 1);
  double.type(doc, new vscode.Range(3, 30, 3, 31), '3'); // its statement
  assert.deepEqual(marks.marksOf(doc.uri), [], 'verified by Lean no longer holds');
  marks.dispose();
});
