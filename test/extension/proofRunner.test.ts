// The proof runner (extension/proofRunner.ts) against the fake Ctx and the vscode TEST DOUBLE: what it sends to
// the backend's LSP face, what it shows in the Proof view, and the proposals it makes.
import './useVscodeDouble';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { double } from './vscodeDouble';
import { cancelledAnswer, provedAnswer } from './fakeCtx';
import { extensionParts, leanFile, until, viewMessages } from './parts';
import { settingsTable } from '../../backend/protocol/settingsTable';
import type { FromView } from '../../media/proofViewMessages';

test('a prove run sends kimina/prove with the text and cursor, streams its events into the view, proposes the proof', async () => {
  const { ctx, runner, proposals, doc } = extensionParts();
  ctx.serve('kimina/prove', (params) => {
    ctx.notify('kimina/proveEvent', { type: 'stage', id: 'another-run', message: 'not this one' });
    return provedAnswer(ctx, params, 'norm_num');
  });
  const result = await runner.prove({ uri: doc.uri, position: new vscode.Position(3, 2), mode: 'theorem' });
  const sent = ctx.sentTo('kimina/prove');
  assert.equal(sent.length, 1);
  const [params] = sent;
  assert.equal(params.code, leanFile, "the document's text as it is");
  assert.deepEqual(params.position, { line: 3, character: 2 });
  assert.equal(params.mode, 'theorem');
  assert.equal(params.uri, doc.uri.toString());
  // the budget: kimina.budget defaults to custom, so kimina.maxTokens / samples / fixTurns
  assert.deepEqual(
    [params.samples, params.fixTurns, params.maxTokens],
    [settingsTable.samples.default, settingsTable.fixTurns.default, settingsTable.maxTokens.default],
  );
  assert.equal(result?.status, 'proved');

  const shown = viewMessages();
  assert.deepEqual(
    shown.map((m) => m.type),
    ['start', 'event', 'event', 'event', 'result'],
  );
  assert.equal(shown[0].id, params.id);
  assert.deepEqual(
    shown.filter((m) => m.type === 'event').map((m) => (m.event as { type: string; id: string }).type),
    ['stage', 'target', 'progress'],
    "this run's events, in order; another run's are not shown",
  );
  assert.equal(shown[4].canAccept, true);

  const pending = proposals.pending(doc.uri);
  assert.equal(pending.length, 1);
  assert.equal(pending[0].declaration, 'one_add_one');
  assert.deepEqual(pending[0].edit, result?.edit);
  assert.equal(pending[0].replaced, ' by\n  sorry');
  assert.equal(runner.lastProposal?.id, pending[0].id);
  assert.deepEqual(double.applied, [], 'nothing enters the file before Accept');
  assert.ok(
    double.executed.some((c) => c.command === 'vscode.diff'),
    'kimina.showDiffOnProof (on by default) opens the diff',
  );
  assert.equal(double.context['kimina.proving'], false);
  assert.deepEqual(ctx.memory.get('kimina.measuredSpeed'), { 'fake|scripted': 24 }, 'the measured speed is kept');
});

test('a second proof for another declaration keeps the first proposal; Accept All applies both', async () => {
  const { ctx, runner, proposals, doc } = extensionParts();
  ctx.serve('kimina/prove', (params) => provedAnswer(ctx, params, params.position?.line === 2 ? 'norm_num' : 'decide'));
  await runner.prove({ uri: doc.uri, position: new vscode.Position(2, 0), mode: 'theorem' });
  const first = runner.lastProposal!;
  await runner.prove({ uri: doc.uri, position: new vscode.Position(5, 0), mode: 'theorem' });
  assert.notEqual(runner.lastProposal?.id, first.id);
  assert.deepEqual(
    proposals.pending(doc.uri).map((p) => p.declaration),
    ['one_add_one', 'two_add_two'],
    'the first proposal is still pending',
  );
  await runner.acceptAll(doc.uri);
  assert.equal(double.applied.length, 2);
  assert.equal(
    doc.getText(),
    leanFile
      .replace('1 + 1 = 2 := by\n  sorry', '1 + 1 = 2 := by\n  norm_num')
      .replace('2 + 2 = 4 := by\n  sorry', '2 + 2 = 4 := by\n  decide'),
  );
  assert.match(double.messages.at(-1)!.text, /Kimina accepted 2 proposals\./);
});

test('Cancel sends kimina/cancel for the running proof; a proof asked meanwhile is refused', async () => {
  const { ctx, runner, proposals, doc } = extensionParts();
  let cancelled!: () => void;
  const cancel = new Promise<void>((resolve) => (cancelled = resolve));
  ctx.serve('kimina/cancel', () => (cancelled(), { cancelled: true }));
  ctx.serve('kimina/prove', async (params) => (await cancel, cancelledAnswer(params)));
  const running = runner.prove({ uri: doc.uri, position: new vscode.Position(2, 0), mode: 'theorem' });
  await until(() => ctx.sentTo('kimina/prove').length === 1, 'the prove request');
  assert.equal(runner.busy, true);
  assert.equal(double.context['kimina.proving'], true);

  assert.equal(await runner.prove({ uri: doc.uri, position: new vscode.Position(5, 0), mode: 'theorem' }), undefined);
  assert.equal(ctx.sentTo('kimina/prove').length, 1, 'no second proof while one runs');
  assert.match(double.messages.at(-1)!.text, /already proving/);

  assert.equal(await runner.cancel(), true);
  const id = ctx.sentTo('kimina/prove')[0].id;
  assert.deepEqual(ctx.sentTo('kimina/cancel'), [{ id }]);
  assert.equal((await running)?.status, 'cancelled');
  assert.equal(runner.busy, false);
  assert.deepEqual(proposals.pending(), []);
  assert.equal(await runner.cancel(), false, 'nothing left to cancel');
  assert.equal(ctx.sentTo('kimina/cancel').length, 1);
});

test("the progress notification's Cancel button cancels the proof too", async () => {
  const { ctx, runner, doc } = extensionParts();
  let cancelled!: () => void;
  const cancel = new Promise<void>((resolve) => (cancelled = resolve));
  ctx.serve('kimina/cancel', () => (cancelled(), { cancelled: true }));
  ctx.serve('kimina/prove', async (params) => (await cancel, cancelledAnswer(params)));
  const running = runner.prove({ uri: doc.uri, position: new vscode.Position(8, 0), mode: 'theorem' });
  await until(() => ctx.sentTo('kimina/prove').length === 1, 'the prove request');
  const [notification] = double.progress;
  assert.equal(notification.options.location, vscode.ProgressLocation.Notification);
  assert.equal(notification.options.cancellable, true);
  notification.source.cancel();
  assert.equal((await running)?.status, 'cancelled');
  assert.deepEqual(ctx.sentTo('kimina/cancel'), [{ id: ctx.sentTo('kimina/prove')[0].id }]);
});

test('a failed request is shown in the view and as a message, and proposes nothing', async () => {
  const { ctx, runner, proposals, doc } = extensionParts();
  ctx.serve('kimina/prove', () => {
    throw new Error('the Lean verifier stopped');
  });
  assert.equal(await runner.prove({ uri: doc.uri, position: new vscode.Position(2, 0), mode: 'theorem' }), undefined);
  const failed = viewMessages().find((m) => m.type === 'failed');
  assert.match(String(failed?.message), /the Lean verifier stopped/);
  assert.ok(double.messages.some((m) => /the Lean verifier stopped/.test(m.text)));
  assert.deepEqual(proposals.pending(), []);
  assert.equal(runner.busy, false);
});

test("the Proof view's Accept applies the proposal and marks the declaration; its Reject leaves the file", async () => {
  const { ctx, runner, proposals, doc } = extensionParts();
  double.focus(doc, new vscode.Position(5, 0));
  ctx.serve('kimina/prove', (params) => provedAnswer(ctx, params, 'decide'));
  await runner.prove({ uri: doc.uri, position: new vscode.Position(5, 0), mode: 'theorem' });
  double.fromView['kimina.proofView']({ type: 'accept' } satisfies FromView);
  await until(() => viewMessages().some((m) => m.type === 'resolved'), 'the view to show the outcome');
  assert.deepEqual(viewMessages().at(-1), { type: 'resolved', outcome: 'accepted' });
  assert.equal(double.applied.length, 1);
  assert.equal(doc.getText(), leanFile.replace('2 + 2 = 4 := by\n  sorry', '2 + 2 = 4 := by\n  decide'));
  const marks = double.decorations[doc.uri.toString()] as { range: vscode.Range; hoverMessage: string }[];
  assert.deepEqual(
    marks.map((m) => [m.range.start.line, m.hoverMessage]),
    [[5, 'two_add_two: proved with Kimina, verified by Lean']],
  );

  await runner.prove({ uri: doc.uri, position: new vscode.Position(8, 0), mode: 'theorem' });
  const before = doc.getText();
  double.fromView['kimina.proofView']({ type: 'reject' } satisfies FromView);
  await until(() => viewMessages().at(-1)?.type === 'resolved', 'the view to show the rejection');
  assert.deepEqual(viewMessages().at(-1), { type: 'resolved', outcome: 'rejected' });
  assert.equal(doc.getText(), before);
  assert.deepEqual(proposals.pending(), []);
});

test('a prove request that fails for want of a model offers Pull Model, picked by the error kind, not its words', async () => {
  const { ctx, runner, doc } = extensionParts();
  const plainWords = 'the backend could not prove: something went wrong';
  ctx.serve('kimina/prove', () => {
    // as the real Ctx throws it (RequestFailed: the message and the kind from the ResponseError's data)
    throw Object.assign(new Error(plainWords), { kind: 'model-missing' });
  });
  await runner.prove({ uri: doc.uri, position: new vscode.Position(3, 2), mode: 'theorem' });
  const shown = double.messages.find((m) => m.text.includes(plainWords));
  assert.ok(shown, 'the failure is shown');
  assert.ok(shown.items.includes('Pull Model'), `Pull Model offered: ${JSON.stringify(shown)}`);
});

test('Accept after an edit above the declaration asks the backend to check it again (kimina/recheck), then writes it', async () => {
  const { ctx, runner, doc } = extensionParts();
  ctx.serve('kimina/prove', (params) => provedAnswer(ctx, params, 'decide'));
  await runner.prove({ uri: doc.uri, position: new vscode.Position(5, 0), mode: 'theorem' });
  // the user proves the theorem above by hand meanwhile
  double.type(doc, new vscode.Range(3, 2, 3, 7), 'norm_num');
  await runner.accept(runner.lastProposal!.id);
  assert.deepEqual(
    ctx.sent
      .filter((s) => s.method === 'kimina/recheck')
      .map((s) => (s.params as { declarationLine: number }).declarationLine),
    [5],
  );
  assert.equal(
    doc.getText(),
    leanFile
      .replace('1 + 1 = 2 := by\n  sorry', '1 + 1 = 2 := by\n  norm_num')
      .replace('2 + 2 = 4 := by\n  sorry', '2 + 2 = 4 := by\n  decide'),
  );
});
