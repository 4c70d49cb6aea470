// End to end in a real VS Code: a file with three proofs broken by a renamed lemma → "Kimina: Repair All in
// File" → progress to 3 of 3 → three proposals at their declarations → one accepted from its code lens, one
// rejected, one accepted from its diff editor (where proving also acts on the real file, and a second proposal
// for the same declaration is kept beside the first) → the file holds exactly the two accepted repairs. Then a
// Repair All cancelled part-way is offered again after a backend restart (the queue is in SQLite) and resumed.
// TEST DOUBLES: the model is the stand-in OpenAI server (its scripted "repairer" applies the renames Lean's
// deprecation warnings name: test/editor/repairDoubles.ts) reached by the real OpenAI engine; Lean is the
// stand-in REPL through the real verifier (its deprecated names give Lean's deprecation warning and an error).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from './expect';
import { openWorkbench, proofView, quickOpen, runCommand, screenshot, step, type Workbench } from './harness';
import { startStandInOpenAIServer, type StandInServer } from '../model/standInOpenAIServer';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';
import { BROKEN_FILE, repairAnswer } from '../editor/repairDoubles';

describe('Repair All (stand-in OpenAI server as the model, stand-in REPL as Lean)', () => {
  let model: StandInServer;
  let wb: Workbench;

  before(async () => {
    // ~2 s per answer, so the progress can be watched
    model = await startStandInOpenAIServer({
      answer: repairAnswer,
      tokenize: 'vllm',
      chunkChars: 12,
      chunkDelayMs: 40,
    });
    wb = await openWorkbench({
      name: 'repair',
      settings: {
        'kimina.engine': 'openai',
        'kimina.openaiBaseUrl': model.baseUrl,
        'kimina.replCommand': standInReplCommand(),
        'kimina.samples': 1,
        'kimina.fixTurns': 0,
        'kimina.showDiffOnProof': false,
      },
      env: { KIMINA_SANDBOX: 'none', KIMINA_REPL_MEMORY_MB: '0', KIMINA_MAX_REPLS: '1' },
    });
  });

  after(async () => {
    await wb?.close();
    await model?.close();
  });

  const lenses = (text: string) => wb.page.locator('.contentWidgets .codelens-decoration a', { hasText: text });
  const chats = () => model.requests.filter((r) => r.path.endsWith('/chat/completions'));

  test('Repair All: 3 of 3, three proposals; accept, reject, accept from the diff; exactly two repairs written', async () => {
    const { page } = wb;
    await step(wb, 'open', async () => {
      await quickOpen(page, 'Ratios.lean');
      await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: 'ratio_one' }).first().waitFor();
    });
    await step(wb, 'repair-all', () => runCommand(page, 'Kimina: Repair All in File'));
    const toasts = page.locator('.notifications-toasts');
    await step(wb, 'progress-1', () =>
      toasts
        .locator('.notification-list-item', { hasText: /1 of 3/ })
        .first()
        .waitFor(),
    );
    await step(wb, 'progress-3', () =>
      toasts
        .locator('.notification-list-item', { hasText: /3 of 3: ratio_three/ })
        .first()
        .waitFor({ timeout: 60_000 }),
    );
    await screenshot(page, 'repair-1-progress');
    await step(wb, 'summary', () =>
      toasts
        .locator('.notification-list-item', { hasText: '3 of 3 repaired, 0 still broken, 0 skipped' })
        .first()
        .waitFor({ timeout: 60_000 }),
    );
    await step(wb, 'three-proposals', () =>
      expect(async () => assert.equal(await lenses('Accept Kimina repair').count(), 3)),
    );
    // each proposal at its own declaration: an Accept lens just above each theorem's first line
    await step(wb, 'at-declarations', () =>
      expect(async () => {
        const lensTops = await lenses('Accept Kimina repair').evaluateAll((els) =>
          els.map((e) => e.getBoundingClientRect().top),
        );
        for (const name of ['ratio_one', 'ratio_two', 'ratio_three']) {
          const line = await page
            .locator('.view-lines .view-line', { hasText: `theorem ${name} ` })
            .first()
            .boundingBox();
          assert.ok(line, `the line of ${name} is on screen`);
          assert.ok(
            lensTops.some((top) => top < line.y && line.y - top < 2 * line.height),
            `an Accept lens just above ${name} (lens tops ${lensTops.join(', ')}; line at ${line.y})`,
          );
        }
      }),
    );
    await screenshot(page, 'repair-2-proposals');

    // the model got the recipe's fix turn: the user's own proof as the assistant turn, Lean's messages as the user turn
    assert.equal(chats().length, 3);
    for (const [k, name] of ['ratio_one', 'ratio_two', 'ratio_three'].entries()) {
      const messages = chats()[k].body.messages as { role: string; content: string }[];
      assert.deepEqual(
        messages.map((m) => m.role),
        ['system', 'user', 'assistant', 'user'],
      );
      assert.match(messages[1].content, new RegExp(`# Formal Statement:\\n\`\`\`lean4\\n[\\s\\S]*theorem ${name} `));
      assert.match(
        messages[2].content,
        new RegExp(`\`\`\`lean4\\n[\\s\\S]*theorem ${name} [^\\n]*\\n  rw \\[div_le_iff hc\\]`),
      );
      assert.match(messages[3].content, /^# Error 1:\nError message: \nunsolved goals/);
      assert.match(messages[3].content, /`div_le_iff` has been deprecated: Use `div_le_iff₀` instead/);
    }

    await step(wb, 'accept-first', () => lenses('Accept Kimina repair').first().click());
    await step(wb, 'two-left', () => expect(async () => assert.equal(await lenses('Accept Kimina repair').count(), 2)));
    await step(wb, 'reject-second', () => lenses('Reject').first().click());
    await step(wb, 'one-left', () => expect(async () => assert.equal(await lenses('Accept Kimina repair').count(), 1)));
    await step(wb, 'show-diff', () => lenses('Show Diff').first().click());
    const modified = page.locator('.monaco-diff-editor .editor.modified .view-lines').first();
    await step(wb, 'diff-open', () => modified.waitFor());
    await screenshot(page, 'repair-3-diff');

    // proving from the diff editor acts on the real file: a second repair of ratio_three, kept beside the first
    await step(wb, 'focus-diff', () =>
      page
        .locator('.monaco-diff-editor .editor.modified .view-line', { hasText: 'ratio_three' })
        .first()
        .click({ force: true }),
    );
    await step(wb, 'repair-from-diff', () => runCommand(page, 'Kimina: Repair with Kimina'));
    await step(wb, 'second-request', () => expect(async () => assert.equal(chats().length, 4), 60_000));
    await step(wb, 'second-repair', () =>
      proofView(page).locator('.result.ok', { hasText: 'Proved' }).waitFor({ timeout: 60_000 }),
    );
    assert.equal(chats().length, 4);
    const fromDiff = chats()[3].body.messages as { role: string; content: string }[];
    assert.match(
      fromDiff[2].content,
      /theorem ratio_three [^\n]*\n {2}rw \[div_le_iff hc\]/,
      'the real file, as it is',
    );
    assert.match(fromDiff[1].content, /rw \[div_le_iff₀ hc\]\n {2}exact h/, 'with the accepted repair of ratio_one');

    await step(wb, 'focus-diff-again', () =>
      page
        .locator('.monaco-diff-editor .editor.modified .view-line', { hasText: 'ratio_three' })
        .first()
        .click({ force: true }),
    );
    // the diff editor's own Accept (its title bar's check mark)
    await step(wb, 'accept-from-diff', () =>
      page.locator('.editor-actions a[aria-label*="Accept Proof"]').first().click(),
    );
    await step(wb, 'diff-closed', () =>
      expect(async () => assert.equal(await page.locator('.monaco-diff-editor').count(), 0)),
    );
    // the second proposal of ratio_three was kept beside the first; it no longer matches the file: shown as such
    await step(wb, 'stale-left', () => expect(async () => assert.equal(await lenses('file changed').count(), 1)));
    assert.equal(await lenses('Accept Kimina repair').count(), 0);
    await step(wb, 'reject-stale', () => lenses('Reject').first().click());
    await step(wb, 'none-left', () => expect(async () => assert.equal(await lenses('Reject').count(), 0)));

    await step(wb, 'save', async () => {
      await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: 'ratio_one' }).first().click();
      await page.keyboard.press('Control+S');
    });
    const expected = BROKEN_FILE.replace(/(ratio_one[\s\S]*?)div_le_iff hc/, '$1div_le_iff₀ hc').replace(
      /(ratio_three[\s\S]*?)div_le_iff hc/,
      '$1div_le_iff₀ hc',
    );
    await step(wb, 'file-holds-two', () =>
      expect(async () => assert.equal(readFileSync(join(wb.workspace, 'Ratios.lean'), 'utf8'), expected)),
    );
    await screenshot(page, 'repair-4-done');
  });

  test('Repair All cancelled part-way is offered again after a backend restart, and Resume finishes it', async () => {
    const { page } = wb;
    await step(wb, 'open-renamed', async () => {
      await quickOpen(page, 'Renamed.lean');
      await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: 'renamed_one' }).first().waitFor();
    });
    const before = chats().length;
    await step(wb, 'repair-all-2', () => runCommand(page, 'Kimina: Repair All in File'));
    const toasts = page.locator('.notifications-toasts .notification-list-item');
    const running = toasts.filter({ hasText: /1 of 2: renamed_one/ }).first();
    await step(wb, 'first-of-two', () => running.waitFor());
    await step(wb, 'cancel-job', () => running.locator('.monaco-button', { hasText: 'Cancel' }).click());
    await step(wb, 'paused', () => toasts.filter({ hasText: 'paused at' }).first().waitFor({ timeout: 60_000 }));
    await step(wb, 'restart', () => runCommand(page, 'Kimina: Restart Backend'));
    const offer = toasts
      .filter({ hasText: /Repair All of Renamed\.lean stopped with [12] of 2 declarations left/ })
      .first();
    await step(wb, 'offered', () => offer.waitFor({ timeout: 60_000 }));
    await screenshot(page, 'repair-5-resume-offered');
    await step(wb, 'resume', () => offer.locator('.monaco-button', { hasText: 'Resume' }).click());
    await step(wb, 'resumed-summary', () =>
      toasts
        .filter({ hasText: 'Kimina Repair All of Renamed.lean: 2 of 2 repaired' })
        .first()
        .waitFor({ timeout: 90_000 }),
    );
    await step(wb, 'two-proposals-renamed', () =>
      expect(async () => assert.equal(await lenses('Accept Kimina repair').count(), 2)),
    );
    // each declaration's fix turn reached the model, the second one after the restart
    const names = chats()
      .slice(before)
      .map((r) => /theorem (renamed_\w+)/.exec((r.body.messages as { content: string }[])[2].content)?.[1]);
    assert.ok(names.includes('renamed_two'), names.join(', '));
    assert.equal(names.at(-1), 'renamed_two');
    await screenshot(page, 'repair-6-resumed');
  });

  test("Check for Broken Proofs: Lean's messages as diagnostics, a Repair lens and a Repair quick fix on the broken proof", async () => {
    const { page } = wb;
    const visibleLine = (text: string) =>
      page.locator('.editor-instance .monaco-editor .view-line', { hasText: text }).filter({ visible: true }).first();
    await step(wb, 'back-to-ratios', async () => {
      await quickOpen(page, 'Ratios.lean');
      await page.waitForTimeout(500);
      await page.keyboard.press('Control+Home'); // the first test left the editor scrolled to the end
      await visibleLine('ratio_two').waitFor();
    });
    await step(wb, 'check-file', () => runCommand(page, 'Kimina: Check for Broken Proofs'));
    // ratio_two's repair was rejected in the first test: it is the one proof Lean still rejects
    await step(wb, 'checked', () =>
      page
        .locator('.notifications-toasts .notification-list-item', {
          hasText: 'Lean rejects 1 proof in this file (ratio_two)',
        })
        .first()
        .waitFor({ timeout: 60_000 }),
    );
    await step(wb, 'repair-lens', () =>
      expect(async () => assert.equal(await lenses('Repair with Kimina').count(), 1)),
    );
    await visibleLine('ratio_two').click();
    await page.keyboard.press('End');
    await page.keyboard.press('Control+.');
    await step(wb, 'quick-fix', () =>
      page.locator('.action-widget', { hasText: 'Repair with Kimina' }).first().waitFor(),
    );
    await screenshot(page, 'repair-7-quick-fix');
    await page.keyboard.press('Escape');
  });
});
