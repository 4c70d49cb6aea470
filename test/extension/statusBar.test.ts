// The status bar item's look: its colour comes from what statusLook says (error, something missing), not from
// matching words in its text. Runs createStatusBar against the vscode TEST DOUBLE (vscodeDouble.ts).
import './useVscodeDouble';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as vscode from 'vscode';
import { double } from './vscodeDouble';
import type { BackendStatus } from '../../backend/protocol';
import { statusLook } from '../../extension/words';
import { createStatusBar } from '../../extension/statusBar';

const noModel: BackendStatus = { state: 'error', setup: { model: true, lean: false, hints: [] } };
const noLean: BackendStatus = { state: 'ready', setup: { model: false, lean: true, hints: [] } };

test('statusLook: missing is set when the text names what is missing, and only then', () => {
  assert.equal(statusLook(noModel).missing, true);
  assert.equal(statusLook(noModel).error, false);
  assert.equal(statusLook(noLean).missing, true);
  // proving or starting: the state is shown, not what is missing
  assert.equal(statusLook({ ...noLean, state: 'proving' }).missing, false);
  assert.equal(statusLook({ ...noModel, state: 'starting' }).missing, false);
  assert.equal(statusLook({ state: 'ready' }).missing, false);
  assert.equal(statusLook({ state: 'error', detail: 'the model file is missing' }).missing, false);
  assert.equal(statusLook({ state: 'error', detail: 'the model file is missing' }).error, true);
});

test('the status bar colour follows the look: warning when something is missing, error on errors', () => {
  const emitter = new vscode.EventEmitter<BackendStatus>();
  const bar = createStatusBar(emitter.event, { state: 'starting' });
  const item = double.statusBar['kimina.status'];
  assert.equal(item.background, undefined);
  emitter.fire(noModel);
  assert.match(item.text, /model missing/);
  assert.equal(item.background, 'statusBarItem.warningBackground');
  emitter.fire({ state: 'error', detail: 'crashed' });
  assert.equal(item.background, 'statusBarItem.errorBackground');
  // a state whose words say "missing" but where nothing is missing takes no warning colour
  emitter.fire({ state: 'ready', detail: 'missing', lean: 'Lean (version 4.19.0, missing mathlib cache)' });
  assert.equal(item.background, undefined);
  emitter.fire({ ...noLean, state: 'proving' });
  assert.equal(item.background, undefined);
  bar.dispose();
});

test("the tooltip says how many samples decode at once and the engine's calibration", () => {
  const look = statusLook({
    state: 'ready',
    engine: 'onnx',
    schedule:
      "calibrated 25.0 ms + 20.0 ms per further row + 8.00 µs per cached token a step: 1 row at once (expected first proof ~58 min over the recipe's answers)",
  });
  assert.match(look.tooltip, /^Engine: onnx$/m);
  assert.match(look.tooltip, /^Decoding: calibrated 25\.0 ms .*: 1 row at once \(expected first proof ~58 min/m);
  assert.doesNotMatch(statusLook({ state: 'ready', engine: 'openai' }).tooltip, /Decoding/);
});
