// Proposals (extension/proposal.ts) against the vscode TEST DOUBLE: Accept applies exactly the proposal's edit,
// a proposal's range follows the user's edits above it, an edit inside it makes it stale, Reject removes it.
import './useVscodeDouble';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { double } from './vscodeDouble';
import { type Decision, type Proposal, Proposals } from '../../extension/proposal';

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
  };
}

function setup() {
  double.reset();
  const doc = double.open('/project/Basic.lean', text);
  const proposals = new Proposals();
  const decided: Decision[] = [];
  proposals.onDecided((d) => decided.push(d));
  return { doc, proposals, decided };
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
