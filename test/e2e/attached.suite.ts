// End to end in a real VS Code: open a Lean file, run "Kimina: Prove This Theorem" from the palette, watch the
// think block stream in the Proof view, see the verdict, Accept, and find the proof in the file; a failing
// theorem shows Lean's error and the fix turn; Cancel stops a running proof.
// The backend is the packaged extension's own `kimina lsp`, attached over HTTP to the stand-in `kimina serve`
// (a TEST DOUBLE answering from a script: standInServe.ts), so no model weights or Lean toolchain are needed.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from './expect';
import {
  editorText,
  goToLine,
  openFile,
  openWorkbench,
  proofView,
  quickOpen,
  runCommand,
  screenshot,
  step,
  type Workbench,
} from './harness';
import { startStandInServe, type StandInServe } from './standInServe';

describe('attached to a running kimina serve (stand-in)', () => {
  let serve: StandInServe;
  let wb: Workbench;

  before(async () => {
    serve = await startStandInServe({ token: 'e2e-token' });
    wb = await openWorkbench({
      name: 'attached',
      settings: { 'kimina.serverUrl': serve.url, 'kimina.serverToken': 'e2e-token', 'kimina.samples': 1 },
    });
  });

  after(async () => {
    await wb?.close();
    await serve?.close();
  });

  test('prove from the palette: the think block streams, Lean accepts, Accept puts the proof in the file', async () => {
    const { page } = wb;
    await step(wb, 'open-file', () => openFile(page, 'Algebra.lean'));
    await step(wb, 'code-lens', () =>
      page.locator('.contentWidgets .codelens-decoration', { hasText: 'Prove with Kimina' }).first().waitFor(),
    );
    await step(wb, 'status-ready', () =>
      page
        .locator('.statusbar-item', { hasText: /^\s*Kimina\s*$/ })
        .first()
        .waitFor(),
    );
    await goToLine(page, 7);
    await step(wb, 'prove-command', () => runCommand(page, 'Kimina: Prove This Theorem'));
    const view = proofView(page);
    await step(wb, 'thinking', () => view.locator('details.think summary', { hasText: 'Thinking…' }).first().waitFor());
    await step(wb, 'think-streams', () =>
      view.locator('.think-text', { hasText: 'so 2x = 8' }).first().waitFor({ state: 'attached' }),
    );
    await screenshot(page, 'attached-1-thinking');
    await step(wb, 'thought', () =>
      view
        .locator('details.think summary', { hasText: /Thought for \d+ s/ })
        .first()
        .waitFor(),
    );
    await step(wb, 'verdict', () => view.locator('.verdict.ok', { hasText: 'Lean accepted' }).first().waitFor());
    await step(wb, 'diff', () =>
      page.locator('.tab', { hasText: 'Kimina proof of algebra_example' }).first().waitFor(),
    );
    await screenshot(page, 'attached-2-proved-diff');
    await step(wb, 'accept', () => view.locator('#accept').click());
    await step(wb, 'accepted', () => view.locator('.result.ok', { hasText: 'Accepted' }).waitFor());
    await step(wb, 'file-holds-proof', () =>
      expect(async () => {
        const text = await editorText(page);
        assert.match(text, /have h₁ : 2 \* x = 8 := by linarith/);
      }),
    );
    await screenshot(page, 'attached-3-accepted');
  });

  test("a failing theorem shows Lean's error on the candidate and the fix turn", async () => {
    const { page } = wb;
    await goToLine(page, 11); // the sorry of algebra_fails (the accepted proof added a line above)
    await step(wb, 'prove-fails', () => runCommand(page, 'Kimina: Prove This Theorem'));
    const view = proofView(page);
    await step(wb, 'turn-2', () => view.locator('.turn-2 h3', { hasText: 'Turn 2 (error fix)' }).waitFor());
    await step(wb, 'lean-error', () =>
      view.locator('.lean-message.error', { hasText: "unknown identifier 'bogus_lemma'" }).first().waitFor(),
    );
    await step(wb, 'not-proved', () => view.locator('.result.bad', { hasText: 'Not proved' }).waitFor());
    await screenshot(page, 'attached-4-failed');
    assert.ok(!(await editorText(page)).includes('bogus_lemma'), 'a failed proof never reaches the file');
  });

  test('Cancel stops a running proof', async () => {
    const { page } = wb;
    await goToLine(page, 14); // the sorry of algebra_slow
    await step(wb, 'prove-slow', () => runCommand(page, 'Kimina: Prove This Theorem'));
    const view = proofView(page);
    await step(wb, 'slow-thinking', () => view.locator('.think-text', { hasText: 'step 3' }).first().waitFor());
    await step(wb, 'cancel', () => runCommand(page, 'Kimina: Cancel'));
    await step(wb, 'cancelled', () => view.locator('.result.cancelled', { hasText: 'Cancelled' }).waitFor());
    await screenshot(page, 'attached-5-cancelled');
    const proves = serve.requests.filter((r) => r === 'POST /v1/prove').length;
    assert.equal(proves, 3, 'three proofs reached the server through the forwarding backend so far');
  });

  test("Prove Goal at Cursor proves the sorry's goal as a lemma and splices it in place", async () => {
    const { page } = wb;
    await goToLine(page, 18); // `  · sorry` of algebra_goal
    await page.keyboard.press('End');
    await step(wb, 'prove-goal', () => runCommand(page, 'Kimina: Prove Goal at Cursor'));
    const view = proofView(page);
    await step(wb, 'goal-lemma', () =>
      view.locator('.stages li', { hasText: 'theorem algebra_goal_goal (x : ℝ) (h₀ : 2 * x + 3 = 11)' }).waitFor(),
    );
    await step(wb, 'goal-recheck', () =>
      view.locator('.result.ok', { hasText: 'The whole declaration re-checked' }).waitFor(),
    );
    await screenshot(page, 'attached-6-goal-proved');
    await step(wb, 'goal-accept', () => view.locator('#accept').click());
    // the saved file, not the editor's rendered lines (their DOM order need not follow the text after an edit)
    await step(wb, 'goal-in-file', () =>
      expect(async () => {
        // saved whatever editor has focus after Accept (the file's lines need not be on screen then)
        await runCommand(page, 'File: Save All');
        assert.match(
          readFileSync(join(wb.workspace, 'Algebra.lean'), 'utf8'),
          /· have h₁ : 2 \* x = 8 := by linarith\n\s+linarith\n\s+· trivial/,
        );
      }),
    );
    await screenshot(page, 'attached-7-goal-accepted');
  });

  test('Open Training Monitor shows the Kimina side bar view', async () => {
    const { page } = wb;
    await step(wb, 'open-monitor', () => runCommand(page, 'Kimina: Open Training Monitor'));
    await step(wb, 'monitor-pane', () =>
      page.locator('.part.sidebar .title-label', { hasText: 'Training Monitor' }).first().waitFor(),
    );
    await screenshot(page, 'attached-8-training-monitor');
  });

  test('Prove All Sorries ends with proposals at their declarations (both kept), Accept All Verified writes them', async () => {
    const { page } = wb;
    await step(wb, 'open-queue', async () => {
      await quickOpen(page, 'Queue.lean');
      await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: 'queue_one' }).first().waitFor();
    });
    await step(wb, 'prove-all', () => runCommand(page, 'Kimina: Prove All Sorries in File'));
    const done = page.locator('.notifications-toasts .notification-list-item', { hasText: 'Kimina proved 2 of 2' });
    await step(wb, 'queue-done', () => done.first().waitFor());
    const queueText = async () =>
      (
        await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: 'queue_one' }).first().innerText()
      ).replace(/\u00a0/g, ' ');
    // nothing entered the file unseen: the second proof did not replace the first, both wait at their declarations
    assert.equal((await queueText()).match(/sorry/g)?.length, 2);
    const accepts = page.locator('.contentWidgets .codelens-decoration a', { hasText: 'Accept Kimina proof' });
    await step(wb, 'two-proposals', () => expect(async () => assert.equal(await accepts.count(), 2)));
    await screenshot(page, 'attached-9-queue-proposals');
    await step(wb, 'accept-all', () =>
      done.first().locator('.monaco-button', { hasText: 'Accept All Verified' }).click(),
    );
    await step(wb, 'both-written', () =>
      expect(async () => {
        const text = await queueText();
        assert.ok(!text.includes('sorry'), text);
        assert.equal(text.match(/have h₁ : 2 \* x = 8 := by linarith/g)?.length, 2);
      }),
    );
    await screenshot(page, 'attached-9-queue');
  });
  test('the backend is restarted after it crashes, and proving works again', async () => {
    const { page } = wb;
    const [before] = wb.backendPids();
    assert.ok(before, 'the extension started a kimina lsp backend');
    process.kill(before, 'SIGKILL');
    const restarted = await step(wb, 'restart', async () => {
      let pids: number[] = [];
      await expect(async () => {
        pids = wb.backendPids();
        assert.ok(pids.length === 1 && pids[0] !== before, `backends: ${pids}`);
      });
      return pids[0];
    });
    assert.notEqual(restarted, before);
    await step(wb, 'ready-again', () =>
      page
        .locator('.statusbar-item', { hasText: /^\s*Kimina\s*$/ })
        .first()
        .waitFor(),
    );
    await step(wb, 'open-algebra', () => quickOpen(page, 'Algebra.lean'));
    await goToLine(page, 11); // algebra_fails
    await step(wb, 'prove-after-restart', () => runCommand(page, 'Kimina: Prove This Theorem'));
    await step(wb, 'answer-after-restart', () =>
      proofView(page).locator('.result.bad', { hasText: 'Not proved' }).waitFor(),
    );
  });
  test("Show Attempts lists the last run's attempts and opens a candidate with Lean's errors", async () => {
    const { page } = wb;
    await step(wb, 'show-attempts', () => runCommand(page, 'Kimina: Show Attempts'));
    await step(wb, 'attempt-row', () =>
      page.locator('.quick-input-widget .monaco-list-row[data-index="0"]', { hasText: 'turn 1' }).waitFor(),
    );
    await page.keyboard.press('Enter');
    await step(wb, 'candidate-opened', () =>
      page.locator('.editor-instance .monaco-editor .view-lines', { hasText: 'exact bogus_lemma' }).first().waitFor(),
    );
    // line 10: the candidate carries the file's earlier sorry-free theorem (algebra_example) before algebra_fails
    await step(wb, 'candidate-errors', () =>
      page
        .locator('.editor-instance .monaco-editor .view-lines', {
          hasText: "error at line 10: unknown identifier 'bogus_lemma'",
        })
        .first()
        .waitFor(),
    );
    await screenshot(page, 'attached-10-attempts');
  });
});
