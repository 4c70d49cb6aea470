// End to end in a real VS Code (code-server), the editor a Lean user keeps:
//  1. attached to the stand-in `kimina serve` (a TEST DOUBLE answering from a script: standInServe.ts), the
//     think block of a long answer can be scrolled up while it streams and stays where the user put it, and a
//     person's press on Cancel (mouse down, 120 ms, mouse up) cancels; the cancelled sample says it was stopped
//     and is not reported as a format failure. Screenshots of the Proof view in the dark and the light theme.
//  2. in-process with the scripted ONNX model (a TEST DOUBLE: fixed answers) and no Lean at all (no REPL build,
//     no lake on PATH, an isolated HOME without elan): the status bar and the guidance name Lean, and proving
//     stops after one attempt with "Lean is missing" and a Set Up Lean button, with no fix turn.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { expect } from './expect';
import {
  goToLine,
  openFile,
  openWorkbench,
  proofView,
  root,
  runCommand,
  screenshot,
  step,
  type Workbench,
} from './harness';
import { startStandInServe, type StandInServe } from './standInServe';
import { writeScriptedModel } from '../../backend/demo/models/scriptedModel';

describe('the Proof view while a long answer streams (stand-in serve)', () => {
  let serve: StandInServe;
  let wb: Workbench;

  before(async () => {
    serve = await startStandInServe({ token: 'e2e-token' });
    wb = await openWorkbench({
      name: 'editor-ux',
      settings: { 'kimina.serverUrl': serve.url, 'kimina.serverToken': 'e2e-token', 'kimina.samples': 1 },
    });
  });

  after(async () => {
    await wb?.close();
    await serve?.close();
  });

  test('the think block scrolls up while it streams, and a human press on Cancel cancels', async () => {
    const { page } = wb;
    await step(wb, 'open-file', () => openFile(page, 'Algebra.lean'));
    await goToLine(page, 13); // the sorry of algebra_slow: thinks until cancelled
    await step(wb, 'prove-slow', () => runCommand(page, 'Kimina: Prove This Theorem'));
    const view = proofView(page);
    const think = view.locator('.think-text').first();
    // enough text to scroll: the block is 16em high
    await step(wb, 'overflowing', () =>
      expect(async () => {
        const { scrollHeight, clientHeight } = await think.evaluate((e) => ({
          scrollHeight: e.scrollHeight,
          clientHeight: e.clientHeight,
        }));
        assert.ok(scrollHeight > clientHeight * 2, `${scrollHeight} vs ${clientHeight}`);
      }),
    );
    const following = await think.evaluate((e) => e.scrollHeight - e.scrollTop - e.clientHeight);
    assert.ok(following < 20, `the block follows the stream at first (${following} px from the end)`);
    // the user scrolls up with the mouse wheel over the block
    await think.hover();
    for (let i = 0; i < 10; i++) await page.mouse.wheel(0, -400);
    await step(wb, 'scrolled-up', () => expect(async () => assert.ok((await think.evaluate((e) => e.scrollTop)) < 50)));
    const before = await think.evaluate((e) => ({ top: e.scrollTop, length: e.textContent?.length ?? 0 }));
    await page.waitForTimeout(2000);
    const later = await think.evaluate((e) => ({ top: e.scrollTop, length: e.textContent?.length ?? 0 }));
    assert.ok(later.length > before.length, `text kept streaming (${before.length} → ${later.length})`);
    assert.ok(later.top < 50, `the block stayed where the user scrolled it (scrollTop ${later.top})`);
    await screenshot(page, 'editor-ux-1-scrolled-while-streaming');

    // the Cancel button is one element the whole time: a press spanning many frames lands
    const cancel = view.locator('#cancel');
    await step(wb, 'cancel-visible', () => cancel.waitFor());
    const handle = await cancel.elementHandle();
    const box = await cancel.boundingBox();
    assert.ok(box, 'the Cancel button has a box');
    await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2);
    await page.mouse.down();
    await page.waitForTimeout(120);
    await page.mouse.up();
    await step(wb, 'cancelled', () => view.locator('.result.cancelled', { hasText: 'Cancelled' }).waitFor());
    assert.ok(await handle!.evaluate((e) => e.isConnected), 'the pressed button is still the same element');
    await step(wb, 'stopped-not-format', () =>
      view
        .locator('.verdict.stopped', { hasText: /Stopped/ })
        .first()
        .waitFor(),
    );
    assert.equal(await view.locator('.format.bad').count(), 0, 'a cancelled sample is not a format failure');
    assert.equal(await view.getByText('No Lean code could be extracted').count(), 0);
    await screenshot(page, 'editor-ux-2-cancelled');
  });

  test("screenshots of the Proof view with Lean's error under the line and the fix turn, dark and light", async () => {
    const { page } = wb;
    await goToLine(page, 10); // algebra_fails
    await step(wb, 'prove-fails', () => runCommand(page, 'Kimina: Prove This Theorem'));
    const view = proofView(page);
    await step(wb, 'not-proved', () => view.locator('.result.bad', { hasText: 'Not proved' }).waitFor());
    // the file's line numbers: algebra_fails starts at line 9, its `exact bogus_lemma` is a few lines below
    const errorLine = await view.locator('.turn-1 .verdict.bad').first().innerText();
    const line = Number(/at line (\d+)/.exec(errorLine)?.[1]);
    assert.ok(line >= 9 && line <= 16, errorLine);
    // the user settings file, as a person would edit it: VS Code applies the theme when the file changes
    const theme = async (name: string, cls: string) => {
      const file = join(root, '.e2e', wb.name, 'data', 'user', 'User', 'settings.json');
      const settings = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify({ ...settings, 'workbench.colorTheme': name }, null, 2));
      await page.locator(`.monaco-workbench.${cls}`).waitFor();
      await page.waitForTimeout(800); // the webview takes the theme's colours on its next frame
    };
    await step(wb, 'dark-theme', () => theme('Default Dark Modern', 'vs-dark'));
    await screenshot(page, 'proof-view-dark');
    await step(wb, 'light-theme', () => theme('Default Light Modern', 'vs'));
    await screenshot(page, 'proof-view-light');
    // the budget presets: Quick for the next proof, shown in words
    await step(wb, 'budget-quick', () => view.locator('#budget-quick').click());
    await step(wb, 'budget-selected', () => view.locator('.preset.selected', { hasText: 'Quick' }).waitFor());
    await step(wb, 'budget-words', () =>
      view.locator('.budget-text', { hasText: 'answers up to 4,096 tokens · 1 sample · no fix turn' }).waitFor(),
    );
  });
});

describe('no Lean at all (scripted model in-process)', () => {
  let wb: Workbench;
  let modelDir: string;

  before(async () => {
    modelDir = mkdtempSync(join(tmpdir(), 'kimina-e2e-nolean-'));
    writeScriptedModel(modelDir, { variant: 'fix' });
    // PATH without any folder holding lake, and (the harness's) isolated HOME without ~/.elan
    const path = (process.env.PATH ?? '')
      .split(delimiter)
      .filter((d) => d && !existsSync(join(d, 'lake')))
      .join(delimiter);
    wb = await openWorkbench({
      name: 'no-lean',
      settings: { 'kimina.engine': 'onnx', 'kimina.model': modelDir, 'kimina.device': 'cpu', 'kimina.samples': 1 },
      env: { PATH: path, KIMINA_THREADS: '1' },
    });
  });

  after(async () => {
    await wb?.close();
    if (modelDir) rmSync(modelDir, { recursive: true, force: true });
  });

  test('the status bar names Lean; proving says Lean is missing after one attempt and offers Set Up Lean', async () => {
    const { page } = wb;
    await step(wb, 'open-file', () => openFile(page, 'Algebra.lean'));
    await step(wb, 'status-lean-missing', () =>
      page.locator('.statusbar-item', { hasText: 'Lean missing' }).first().waitFor(),
    );
    await step(wb, 'guidance-names-lean', () =>
      page.locator('.notifications-toasts .notification-toast', { hasText: 'Kimina needs Lean' }).first().waitFor(),
    );
    await goToLine(page, 7);
    await step(wb, 'prove', () => runCommand(page, 'Kimina: Prove This Theorem'));
    const view = proofView(page);
    await step(wb, 'lean-missing', () => view.locator('.result.bad h2', { hasText: 'Lean is missing' }).waitFor());
    await step(wb, 'set-up-lean-button', () => view.locator('#setup-lean').waitFor());
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Lean is missing' });
    await step(wb, 'toast', () => toast.first().waitFor());
    await step(wb, 'toast-button', () =>
      toast.first().locator('.monaco-button', { hasText: 'Set Up Lean' }).first().waitFor(),
    );
    assert.equal(await view.locator('section.turn').count(), 1, 'one attempt');
    assert.equal(await view.locator('.turn-2').count(), 0, 'no fix turn');
    await screenshot(page, 'no-lean-1-lean-missing');
  });
});
