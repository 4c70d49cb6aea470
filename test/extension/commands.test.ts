// The palette commands (extension/commands.ts) against the fake Ctx and the vscode TEST DOUBLE: "Prove All
// Sorries" runs through the SorryQueue the proof runner owns, proves each declaration the backend's code lenses
// name, and stops on "Kimina: Cancel". Proving from a proposal's diff editor acts on the real file; other
// virtual documents are refused with a message and nothing is sent.
import './useVscodeDouble';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { TextDocument, double } from './vscodeDouble';
import { cancelledAnswer, provedAnswer } from './fakeCtx';
import { extensionParts, leanFile, until, viewMessages } from './parts';
import { registerCommands } from '../../extension/commands';
import { Repairs } from '../../extension/repair';

function withCommands() {
  const parts = extensionParts();
  const repairs = new Repairs(parts.ctx, parts.runner, parts.proposals);
  registerCommands(parts.context, parts.ctx, parts.runner, parts.view, parts.proposals, repairs);
  double.focus(parts.doc, new vscode.Position(0, 0));
  return parts;
}

test('Prove All Sorries stops on Cancel: the running proof is cancelled and no later one starts', async () => {
  const { ctx, runner, proposals, doc } = withCommands();
  let cancelled!: () => void;
  const cancel = new Promise<void>((resolve) => (cancelled = resolve));
  ctx.serve('kimina/cancel', () => (cancelled(), { cancelled: true }));
  ctx.serve('kimina/prove', async (params) => {
    if (params.position?.line === 2) return provedAnswer(ctx, params, 'norm_num');
    await cancel;
    return cancelledAnswer(params);
  });
  const queue = vscode.commands.executeCommand('kimina.proveAllSorries');
  await until(() => ctx.sentTo('kimina/prove').length === 2, 'the second proof');
  assert.equal(runner.sorryQueue.running, true);
  assert.equal(double.context['kimina.queueRunning'], true);

  await vscode.commands.executeCommand('kimina.cancel');
  await queue;
  const proves = ctx.sentTo('kimina/prove');
  assert.deepEqual(
    proves.map((p) => p.position),
    [
      { line: 2, character: 0 },
      { line: 5, character: 0 },
    ],
    'the third declaration is never asked for',
  );
  const cancels = ctx.sentTo('kimina/cancel');
  assert.ok(cancels.length >= 1);
  assert.deepEqual(
    cancels.filter((c) => c.id !== proves[1].id),
    [],
    'Cancel names the running proof only (not the finished one before it)',
  );
  assert.equal(runner.sorryQueue.running, false);
  assert.equal(runner.busy, false);
  assert.equal(double.context['kimina.queueRunning'], false);
  assert.match(double.messages.at(-1)!.text, /^Kimina proved 1 of 2 declarations with sorry/);
  assert.deepEqual(
    proposals.pending(doc.uri).map((p) => p.declaration),
    ['one_add_one'],
  );
  assert.deepEqual(double.applied, [], 'a queue puts nothing into the file unseen');
  // queued proofs show in the window's progress, without a diff or a message each
  assert.ok(double.progress.every((p) => p.options.location === vscode.ProgressLocation.Window));
  assert.ok(!double.executed.some((c) => c.command === 'vscode.diff'));
});

test('Prove All Sorries proves every declaration with sorry once; "Accept All Verified" applies them', async () => {
  const { ctx, doc } = withCommands();
  const tactic: Record<number, string> = { 2: 'norm_num', 5: 'decide', 8: 'rfl' };
  ctx.serve('kimina/prove', (params) => provedAnswer(ctx, params, tactic[params.position!.line]));
  double.answers.push({ match: /^Kimina proved 3 of 3/, item: 'Accept All Verified' });
  await vscode.commands.executeCommand('kimina.proveAllSorries');
  assert.equal(ctx.sentTo('kimina/prove').length, 3);
  assert.equal(double.applied.length, 3);
  assert.equal(
    doc.getText(),
    leanFile
      .replace('1 + 1 = 2 := by\n  sorry', '1 + 1 = 2 := by\n  norm_num')
      .replace('2 + 2 = 4 := by\n  sorry', '2 + 2 = 4 := by\n  decide')
      .replace('3 = 3 := by\n  sorry', '3 = 3 := by\n  rfl'),
  );
});

test('a second Prove All Sorries while one runs is refused; Cancel with nothing running says so', async () => {
  const { ctx, runner } = withCommands();
  let cancelled!: () => void;
  const cancel = new Promise<void>((resolve) => (cancelled = resolve));
  ctx.serve('kimina/cancel', () => (cancelled(), { cancelled: true }));
  ctx.serve('kimina/prove', async (params) => (await cancel, cancelledAnswer(params)));
  const queue = vscode.commands.executeCommand('kimina.proveAllSorries');
  await until(() => ctx.sentTo('kimina/prove').length === 1, 'the first proof');
  await vscode.commands.executeCommand('kimina.proveAllSorries');
  assert.match(double.messages.at(-1)!.text, /already proving/);
  assert.equal(ctx.sentTo('kimina/prove').length, 1);
  await vscode.commands.executeCommand('kimina.cancel');
  await queue;
  assert.equal(runner.sorryQueue.running, false);
  await vscode.commands.executeCommand('kimina.cancel');
  assert.equal(double.messages.at(-1)!.text, 'Kimina: nothing is running.');
});

test('Cancel pressed as a proof finishes stops the queue before the next declaration', async () => {
  const { ctx, runner, proposals } = withCommands();
  ctx.serve('kimina/cancel', () => ({ cancelled: false }));
  ctx.serve('kimina/prove', async (params) => {
    // the user presses Cancel while the backend already has the proof: it answers proved
    await vscode.commands.executeCommand('kimina.cancel');
    return provedAnswer(ctx, params, 'norm_num');
  });
  await vscode.commands.executeCommand('kimina.proveAllSorries');
  assert.equal(ctx.sentTo('kimina/prove').length, 1, 'the queue stops: no second declaration is asked for');
  assert.equal(runner.sorryQueue.running, false);
  assert.equal(proposals.pending().length, 1);
  assert.match(double.messages.at(-1)!.text, /^Kimina proved 1 of 1 declarations with sorry/);
});

test('a proof the backend answers as cancelled ends the queue', async () => {
  const { ctx } = withCommands();
  ctx.serve('kimina/prove', (params) => cancelledAnswer(params));
  await vscode.commands.executeCommand('kimina.proveAllSorries');
  assert.equal(ctx.sentTo('kimina/prove').length, 1);
  assert.match(double.messages.at(-1)!.text, /^Kimina proved 0 of 1 declarations with sorry\.$/);
});

test("stopping the runner's SorryQueue cancels the proof it is running", async () => {
  const { ctx, runner } = withCommands();
  let cancelled!: () => void;
  const cancel = new Promise<void>((resolve) => (cancelled = resolve));
  ctx.serve('kimina/cancel', () => (cancelled(), { cancelled: true }));
  ctx.serve('kimina/prove', async (params) => (await cancel, cancelledAnswer(params)));
  const queue = vscode.commands.executeCommand('kimina.proveAllSorries');
  await until(() => ctx.sentTo('kimina/prove').length === 1, 'the first proof');
  assert.equal(runner.sorryQueue.stop(), true);
  await queue;
  assert.deepEqual(ctx.sentTo('kimina/cancel'), [{ id: ctx.sentTo('kimina/prove')[0].id }]);
  assert.equal(runner.sorryQueue.running, false);
});

test("Prove This Theorem from a proposal's diff editor proves the real file, the cursor mapped back to it", async () => {
  const { ctx, proposals, runner, doc } = withCommands();
  const longer = 'have h : 1 + 1 = 2 := by\n  norm_num\nexact h'; // two lines more than the sorry it replaces
  ctx.serve('kimina/prove', (params) => provedAnswer(ctx, params, params.position!.line <= 3 ? longer : 'decide'));
  double.focus(doc, new vscode.Position(3, 2));
  await vscode.commands.executeCommand('kimina.proveTheorem');
  const first = runner.lastProposal!;
  assert.ok(first, 'the first proof waits as a proposal');
  // the diff editor's modified side: the virtual kimina-proposal: document, the file with the proof applied
  const diffUri = proposals.proposalUri(first);
  const diff = new TextDocument(diffUri as never, 'lean4', proposals.provideTextDocumentContent(diffUri));
  double.documents.push(diff);
  assert.match(diff.lineAt(7).text, /^theorem two_add_two/, 'two_add_two is two lines lower in the diff');
  assert.equal(diff.lineAt(8).text, '  sorry');
  double.focus(diff as never, new vscode.Position(8, 2));
  await vscode.commands.executeCommand('kimina.proveTheorem');
  const sent = ctx.sentTo('kimina/prove');
  assert.equal(sent.length, 2);
  assert.equal(sent[1].uri, doc.uri.toString(), 'the real file, not the kimina-proposal: document');
  assert.deepEqual(sent[1].position, { line: 6, character: 2 }, "two_add_two's sorry in the file");
  assert.equal(sent[1].code, doc.getText(), 'the file as it is, without the unaccepted proof');
  assert.doesNotMatch(sent[1].code!, /exact h/);
  const starts = viewMessages().filter((m) => m.type === 'start');
  assert.equal(starts.at(-1)!.file, doc.uri.fsPath, "the Proof view's header names the file");
  assert.deepEqual(
    proposals.pending(doc.uri).map((p) => p.declaration),
    ['one_add_one', 'two_add_two'],
    'both proposals are at their declarations in the real file',
  );
  // a cursor inside the unaccepted proof maps to the start of the edit (the declaration it replaced)
  double.focus(diff as never, new vscode.Position(4, 4));
  await vscode.commands.executeCommand('kimina.proveGoal');
  assert.equal(ctx.sentTo('kimina/prove')[2].uri, doc.uri.toString());
  assert.deepEqual(ctx.sentTo('kimina/prove')[2].position, { line: first.edit.range.start.line, character: 0 });
  assert.equal(ctx.sentTo('kimina/prove')[2].mode, 'goal');
  // lines up to the edit's first are the file's own
  double.focus(diff as never, new vscode.Position(2, 5));
  await vscode.commands.executeCommand('kimina.proveTheorem');
  assert.deepEqual(ctx.sentTo('kimina/prove')[3].position, { line: 2, character: 5 });
  // a code lens or code action that names the diff document with a position is mapped the same way
  await vscode.commands.executeCommand('kimina.proveTheorem', diffUri.toString(), { line: 8, character: 2 });
  assert.equal(ctx.sentTo('kimina/prove')[4].uri, doc.uri.toString());
  assert.deepEqual(ctx.sentTo('kimina/prove')[4].position, { line: 6, character: 2 });
  assert.deepEqual(
    double.messages.filter((m) => m.level !== 'info'),
    [],
    'no warning or error on the way',
  );
});

test('an untitled or other virtual document is refused with a message that says why; nothing is sent', async () => {
  const { ctx } = withCommands();
  ctx.serve('kimina/prove', (params) => provedAnswer(ctx, params, 'norm_num'));
  const untitled = await vscode.workspace.openTextDocument({ language: 'lean4', content: leanFile });
  assert.equal(untitled.uri.scheme, 'untitled');
  double.focus(untitled, new vscode.Position(3, 2));
  await vscode.commands.executeCommand('kimina.proveTheorem');
  assert.equal(
    double.messages.at(-1)!.text,
    'Kimina: this editor is not saved to a file. Save it as a .lean file in your Lean project, then prove from it.',
  );
  assert.equal(double.messages.at(-1)!.level, 'warning');
  await vscode.commands.executeCommand('kimina.proveGoal');
  await vscode.commands.executeCommand('kimina.proveAllSorries');
  assert.equal(double.messages.length, 3, 'each command says why');
  // another extension's virtual document (a git revision)
  const git = new TextDocument(vscode.Uri.parse('git:/project/Basic.lean?ref=HEAD') as never, 'lean4', leanFile);
  double.documents.push(git);
  double.focus(git as never, new vscode.Position(3, 2));
  await vscode.commands.executeCommand('kimina.repairProof');
  assert.match(double.messages.at(-1)!.text, /^Kimina: this editor shows git: content, not a Lean file on disk/);
  // a command called with a virtual document's uri and a position
  await vscode.commands.executeCommand('kimina.proveTheorem', untitled.uri.toString(), { line: 2, character: 0 });
  assert.match(double.messages.at(-1)!.text, /not saved to a file/);
  assert.deepEqual(ctx.sentTo('kimina/prove'), [], 'nothing was sent to the backend');
  assert.equal(viewMessages().filter((m) => m.type === 'start').length, 0, 'the Proof view did not start a run');
});

test('Prove All Sorries over files: the backend runs the job; each verified item becomes a proposal, then a summary', async () => {
  const { ctx, proposals, doc, runner } = withCommands();
  const repairs = new Repairs(ctx, runner, proposals);
  const uri = doc.uri.toString();
  const item = (id: number, line: number) => ({
    id,
    uri,
    declaration: id === 1 ? 'one_add_one' : 'two_add_two',
    line,
    error: `sorry at line ${line + 1}`,
    status: 'pending' as const,
  });
  const job = {
    id: 'j1',
    kind: 'sorries' as const,
    scope: 'Basic.lean',
    state: 'running' as const,
    createdAt: '2026-12-06T00:00:00Z',
    items: [item(1, 3), item(2, 6)],
  };
  ctx.serve('kimina/sorries/start', () => ({ job, problems: [] }));
  await repairs.proveAllSorries('file', doc.uri);
  const started = ctx.sentTo('kimina/sorries/start')[0] as { files: { uri: string; code?: string }[] };
  assert.deepEqual(
    started.files.map((f) => [f.uri, f.code === doc.getText()]),
    [[uri, true]],
    "the open document's text goes with it",
  );
  // the backend reports the first sorry proved (its edit and the text it replaces), the second not proved
  const proved = {
    ...item(1, 3),
    status: 'repaired' as const,
    edit: { range: { start: { line: 3, character: 2 }, end: { line: 3, character: 7 } }, newText: 'norm_num' },
    replaced: 'sorry',
  };
  ctx.sorriesProgress({ job: { ...job, items: [proved, item(2, 6)] }, item: proved });
  await until(() => proposals.pending(doc.uri).length === 1, 'the proposal');
  assert.equal(doc.getText(), leanFile, 'nothing is written before review');
  const broken = { ...item(2, 6), status: 'broken' as const, reason: 'no verified proof' };
  ctx.sorriesProgress({ job: { ...job, state: 'done', items: [proved, broken] }, item: broken });
  ctx.sorriesProgress({ job: { ...job, state: 'done', items: [proved, broken] } });
  await until(
    () => double.messages.some((m) => /Prove All Sorries of Basic\.lean: 1 of 2 proved/.test(m.text)),
    'the summary',
  );
});
