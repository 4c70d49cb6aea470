// The extension's parts as main.ts wires them, on the vscode TEST DOUBLE and the fake Ctx (fakeCtx.ts), for the
// unit tests of the proof runner and the commands.
import './useVscodeDouble';
import * as vscode from 'vscode';
import { double } from './vscodeDouble';
import { FakeCtx } from './fakeCtx';
import { ProvedMarks } from '../../extension/decorations';
import { ProofRunner } from '../../extension/proofRunner';
import { ProofView } from '../../extension/proofView';
import { Proposals, recheckThrough } from '../../extension/proposal';

/** A file with three theorems to prove (lines 2, 5 and 8). */
export const leanFile = [
  'import Mathlib',
  '',
  'theorem one_add_one : 1 + 1 = 2 := by',
  '  sorry',
  '',
  'theorem two_add_two : 2 + 2 = 4 := by',
  '  sorry',
  '',
  'theorem three : 3 = 3 := by',
  '  sorry',
  '',
].join('\n');

export function extensionParts(text = leanFile) {
  double.reset();
  // ProofView and ProvedMarks read only extensionUri of the context
  const context = {
    extensionUri: vscode.Uri.file('/extension'),
    subscriptions: [],
  } as unknown as vscode.ExtensionContext;
  const ctx = new FakeCtx();
  const view = new ProofView(context);
  const proposals = new Proposals(recheckThrough(ctx));
  const marks = new ProvedMarks(context);
  const runner = new ProofRunner(ctx, view, proposals, marks);
  const doc = double.open('/project/Basic.lean', text);
  return { context, ctx, view, proposals, marks, runner, doc };
}

/** What the Proof view's webview was posted, by message type. */
export function viewMessages(): { type: string; [k: string]: unknown }[] {
  return (double.posted['kimina.proofView'] ?? []) as { type: string }[];
}

/** Waits (a few event-loop turns at most ~2 s) until `ready` holds. */
export async function until(ready: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !ready(); i++) await new Promise((r) => setTimeout(r, 1));
  if (!ready()) throw new Error(`timed out waiting for ${what}`);
}
