// The palette commands (extension/commands.ts) against the fake Ctx and the vscode TEST DOUBLE: "Prove All
// Sorries" runs through the SorryQueue the proof runner owns, proves each declaration the backend's code lenses
// name, and stops on "Kimina: Cancel".
import './useVscodeDouble';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { double } from './vscodeDouble';
import { cancelledAnswer, provedAnswer } from './fakeCtx';
import { extensionParts, leanFile, until } from './parts';
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
