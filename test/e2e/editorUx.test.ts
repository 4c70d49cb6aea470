// End to end in a real VS Code (code-server), the editor a Lean user keeps:
//  1. attached to the stand-in `kimina serve` (a TEST DOUBLE answering from a script: standInServe.ts), the
//     think block of a long answer can be scrolled up while it streams and stays where the user put it, and a
//     person's press on Cancel (mouse down, 120 ms, mouse up) cancels; the cancelled sample says it was stopped
//     and is not reported as a format failure; Lean's error with the file's line numbers (light theme); the
//     Budget presets. Then its Training Monitor: charts open in an editor panel at full width, legends filled,
//     live, and a comparison of two runs (the stand-in serves the runs and their metrics).
//  2. in-process with the scripted ONNX model (a TEST DOUBLE: fixed answers) and no Lean at all (no REPL build,
//     no lake on PATH, an isolated HOME without elan): the status bar and the guidance name Lean, and proving
//     stops after one attempt with "Lean is missing" and a Set Up Lean button, with no fix turn (dark theme).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { expect } from './expect';
import {
  goToLine,
  openFile,
  openWorkbench,
  proofView,
  runCommand,
  screenshot,
  step,
  webviewWith,
  type Workbench,
} from './harness';
import { startStandInServe, type StandInServe } from './standInServe';
import { writeScriptedModel } from '../../backend/demo/models/scriptedModel';
import type { StepMetrics, TrainingRun } from '../../backend/protocol';
import { presetHyper } from '../../backend/training/presets';

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

  test("a screenshot of the Proof view with Lean's error under the file's line and the fix turn; budgets", async () => {
    const { page } = wb;
    await goToLine(page, 10); // algebra_fails
    await step(wb, 'prove-fails', () => runCommand(page, 'Kimina: Prove This Theorem'));
    const view = proofView(page);
    await step(wb, 'not-proved', () => view.locator('.result.bad', { hasText: 'Not proved' }).waitFor());
    // the file's line numbers: algebra_fails starts at line 9, its `exact bogus_lemma` is a few lines below
    const errorLine = await view.locator('.turn-1 .verdict.bad').first().innerText();
    const line = Number(/at line (\d+)/.exec(errorLine)?.[1]);
    assert.ok(line >= 9 && line <= 16, errorLine);
    // this workbench runs the web build's default light theme; the no-Lean one below runs the dark theme
    await page.locator('.monaco-workbench.vs').waitFor();
    await screenshot(page, 'proof-view-light');
    // the budget presets: Quick for the next proof, shown in words
    await step(wb, 'budget-quick', () => view.locator('#budget-quick').click());
    await step(wb, 'budget-selected', () => view.locator('.preset.selected', { hasText: 'Quick' }).waitFor());
    await step(wb, 'budget-words', () =>
      view.locator('.budget-text', { hasText: 'answers up to 4,096 tokens · 1 sample · no fix turn' }).waitFor(),
    );
  });
});

/** A run as the stand-in serve lists it (the fields of backend/protocol TrainingRun). */
function standInRun(id: string, name: string, step: number): TrainingRun {
  return {
    id,
    name,
    state: 'running',
    preset: 'tiny-cpu',
    model: 'stand-in/model',
    gpus: 'cpu',
    schedule: 'now',
    hyper: presetHyper('tiny-cpu'),
    createdAt: '2026-12-04T00:00:00Z',
    updatedAt: '2026-12-04T00:00:00Z',
    step,
    checkpointStep: 0,
    restarts: 0,
    trainPrompts: 4,
    heldOutPrompts: 0,
    outputDir: '/tmp/stand-in',
    finalDir: null,
    baseEval: null,
    latestEval: null,
    improved: null,
    onnxDir: null,
    error: null,
  };
}

const trainStep = (step: number, reward: number): StepMetrics => ({
  step,
  kind: 'train',
  metrics: { reward, 'acc/turn_1': reward / 2, 'completions/mean_length': 100 * step },
});

describe('Training charts in the editor area (stand-in serve)', () => {
  let serve: StandInServe;
  let wb: Workbench;

  before(async () => {
    serve = await startStandInServe({ token: 'e2e-token' });
    serve.trainingRuns.push(standInRun('run-a', 'tiny run A', 2), standInRun('run-b', 'tiny run B', 1));
    serve.trainingMetrics.set('run-a', [trainStep(1, 0.1), trainStep(2, 0.3)]);
    serve.trainingMetrics.set('run-b', [trainStep(1, 0.2)]);
    wb = await openWorkbench({
      name: 'training-charts',
      settings: { 'kimina.serverUrl': serve.url, 'kimina.serverToken': 'e2e-token' },
    });
  });

  after(async () => {
    await wb?.close();
    await serve?.close();
  });

  test('charts open in an editor panel at full width with filled legends, stay live, and compare runs', async () => {
    const { page } = wb;
    await step(wb, 'open-monitor', () => runCommand(page, 'Kimina: Open Training Monitor'));
    const monitor = await step(wb, 'monitor', () => webviewWith(page, '.runs'));
    await step(wb, 'runs-listed', () => monitor.locator('.run', { hasText: 'tiny run A' }).waitFor());
    await step(wb, 'live-status', () => monitor.locator('.live .latest td', { hasText: 'reward' }).first().waitFor());
    assert.equal(await monitor.locator('canvas').count(), 0, 'no chart squeezed into the side bar');
    await step(wb, 'open-charts', () => monitor.locator('.open-charts').click());
    await step(wb, 'charts-tab', () => page.locator('.tab', { hasText: 'Training: tiny run A' }).first().waitFor());
    const charts = await step(wb, 'charts', () => webviewWith(page, '.grid #chart-reward canvas'));
    const width = await charts
      .locator('#chart-reward canvas')
      .first()
      .evaluate((c) => c.clientWidth);
    assert.ok(width > 600, `the chart is ${width} px wide`);
    const legend = charts.locator('#chart-reward .u-legend .u-series');
    const values = await legend.locator('.u-value').allInnerTexts();
    assert.ok(values.length >= 3, `legend values: ${values}`);
    for (const v of values) assert.match(v, /^-?\d/, `legend value ${JSON.stringify(v)} (not "--")`);
    assert.equal(values[0], '2', 'the newest step');
    // the shot while the side bar and the chart agree on the step (the stand-in sends no run events, so the side
    // bar's "step n/10" does not follow the step the test adds below)
    await step(wb, 'side-bar-step', () => monitor.locator('.run', { hasText: 'step 2/' }).first().waitFor());
    // the side bar as a user keeps it while watching: the New run form folded
    await monitor.locator('details.start').evaluate((d) => ((d as HTMLDetailsElement).open = false));
    await screenshot(page, 'training-charts');
    // live: a step the server adds reaches the open chart by itself
    serve.trainingMetrics.get('run-a')!.push(trainStep(3, 0.5));
    serve.trainingRuns[0].step = 3;
    await step(wb, 'live', () =>
      expect(async () => assert.equal(await legend.first().locator('.u-value').innerText(), '3')),
    );
    // compare: pick run B beside run A
    await step(wb, 'compare', () => monitor.locator('.compare-runs').click());
    await step(wb, 'pick-b', async () => {
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'tiny run B' }).first().click();
      await page.keyboard.press('Enter');
    });
    await step(wb, 'compare-tab', () =>
      page.locator('.tab', { hasText: 'Training: tiny run A vs tiny run B' }).first().waitFor(),
    );
    const compared = await step(wb, 'compared', () => webviewWith(page, '.grid .u-legend >> text=tiny run B: reward'));
    await step(wb, 'both-runs', () =>
      compared.locator('#chart-reward .u-legend', { hasText: 'tiny run A: reward' }).waitFor(),
    );
    await screenshot(page, 'training-compare');
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
      settings: {
        'kimina.engine': 'onnx',
        'kimina.model': modelDir,
        'kimina.device': 'cpu',
        'kimina.samples': 1,
        'workbench.colorTheme': 'Default Dark Modern',
      },
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
    await page.locator('.monaco-workbench.vs-dark').waitFor();
    // the shot shows the Proof view's own Set Up Lean button: the toasts (checked above) would cover it
    await step(wb, 'clear-toasts', () => runCommand(page, 'Notifications: Clear All Notifications'));
    await step(wb, 'toasts-gone', () =>
      expect(async () => assert.equal(await page.locator('.notifications-toasts .notification-toast').count(), 0)),
    );
    await view.locator('#setup-lean').waitFor();
    await screenshot(page, 'proof-view-dark');
  });
});
