// End to end in a real VS Code: the Training Monitor in the Kimina side bar, attached to a real `kimina serve`
// (stand-in REPL as the TEST DOUBLE for Lean), starts a tiny GRPO run on the CPU from its form (the workspace's
// theorems are the prompts, a tiny random Qwen3 built here is the model), shows it running; its charts open in an
// editor panel at full width with filled legends and follow the run live; the side bar keeps the live status;
// Cancel shows it cancelled.
// Needs the trainer suite's Python environment (test/trainer/.venv, made by `npm run test:trainer`).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from './expect';
import { openWorkbench, root, runCommand, screenshot, step, webviewWith, type Workbench } from './harness';
import { startRealServe, type RealServe } from './realServe';

const venvPython = join(root, 'test', 'trainer', '.venv', 'bin', 'python');
const trainerSource = join(root, 'backend', 'trainer');
const TOKEN = 'e2e-training-token';

/** Why the trainer environment cannot be used, or null when it can. */
function missingTrainerEnv(): string | null {
  if (!existsSync(venvPython)) return `${venvPython} is missing (run \`npm run test:trainer\` first)`;
  const r = spawnSync(
    venvPython,
    [
      '-c',
      'import importlib.util as u, sys; sys.exit(0 if all(u.find_spec(m) for m in ("torch", "trl", "transformers")) else 1)',
    ],
    { encoding: 'utf8' },
  );
  return r.status === 0 ? null : `${venvPython} lacks torch/trl/transformers (run \`npm run test:trainer\` first)`;
}

const skipReason = missingTrainerEnv();

describe('Training Monitor with a real kimina serve', { skip: skipReason ?? false }, () => {
  let serve: RealServe;
  let wb: Workbench;
  let modelDir: string;

  before(async () => {
    modelDir = mkdtempSync(join(tmpdir(), 'kimina-e2e-tiny-model-'));
    execFileSync(venvPython, ['-m', 'kimina_trainer.tiny', modelDir, '--seed', '0'], {
      cwd: trainerSource,
      env: { ...process.env, PYTHONPATH: trainerSource },
      stdio: 'pipe',
    });
    serve = await startRealServe({ token: TOKEN, env: { KIMINA_TRAINER_PYTHON: venvPython } });
    wb = await openWorkbench({
      name: 'training',
      settings: { 'kimina.serverUrl': serve.url, 'kimina.serverToken': TOKEN },
    });
  });

  after(async () => {
    await wb?.close();
    if (serve) {
      if (process.exitCode) console.error(`kimina serve log tail:\n${serve.log().slice(-4000)}`);
      await serve.close();
    }
    if (modelDir) rmSync(modelDir, { recursive: true, force: true });
  });

  test(
    'a tiny CPU run started from the monitor runs, charts a finished step, and cancels',
    { timeout: 420_000 },
    async () => {
      const { page } = wb;
      await step(wb, 'open-container', async () => {
        const icon = page
          .locator('.activitybar .action-item a[aria-label^="Kimina"], .activitybar .action-item[aria-label^="Kimina"]')
          .first();
        if (await icon.count()) await icon.click();
        else await runCommand(page, 'Kimina: Open Training Monitor');
        await page.locator('.part.sidebar .title-label', { hasText: 'Training Monitor' }).first().waitFor();
      });
      const view = await step(wb, 'monitor-view', () => webviewWith(page, '.connection'));
      await step(wb, 'connected', () => view.locator('.connection.connected').waitFor());
      await step(wb, 'no-runs', () => view.locator('.runs', { hasText: 'No runs yet.' }).waitFor());
      await step(wb, 'fill-form', async () => {
        await view.locator('#model').fill(modelDir);
        await view.locator('#preset').selectOption('tiny-cpu');
        await view.locator('.start button.primary', { hasText: 'Start' }).click();
      });
      const run = view.locator('.run').first();
      await step(wb, 'run-appears', () => run.locator('.state').waitFor());
      await step(wb, 'run-running', () => run.locator('.state.running').waitFor({ timeout: 60_000 }));
      // Starting a run opens its charts in the editor area
      await step(wb, 'charts-tab', () => page.locator('.tab', { hasText: 'Training:' }).first().waitFor());
      const charts = await step(wb, 'charts-view', () => webviewWith(page, '.grid'));
      // The first optimizer step includes the trainer's start-up (importing torch and TRL): give it longer.
      await step(wb, 'chart-point', () => charts.locator('#chart-reward canvas').waitFor({ timeout: 120_000 }));
      await step(wb, 'step-counted', () => run.locator('.muted', { hasText: /^step [1-9]\d*\/10 · .*CPU/ }).waitFor());
      // full width: the editor area, not the side bar's ~250 px
      const chartWidth = await charts
        .locator('#chart-reward canvas')
        .first()
        .evaluate((c) => c.clientWidth);
      assert.ok(chartWidth > 600, `the chart is ${chartWidth} px wide`);
      // legends filled with the newest values, not "--" until hovered
      const values = await charts.locator('#chart-reward .u-legend .u-series .u-value').allInnerTexts();
      assert.ok(values.length >= 2, `legend values: ${values}`);
      for (const v of values) assert.match(v, /^-?\d/, `legend value ${JSON.stringify(v)}`);
      // live: a later step reaches the open chart by itself
      const stepOf = async () =>
        Number(await charts.locator('#chart-reward .u-legend .u-series').first().locator('.u-value').innerText());
      const first = await stepOf();
      await step(wb, 'chart-live', () =>
        expect(async () => assert.ok((await stepOf()) > first, `legend step still ${first}`), 150_000),
      );
      await screenshot(page, 'training-charts');
      // the side bar keeps the run list and its live status, with the button that opens the charts
      await step(wb, 'side-bar-status', () =>
        view.locator('.live .latest td', { hasText: 'reward' }).first().waitFor(),
      );
      await step(wb, 'open-charts-button', () => view.locator('.open-charts').waitFor());
      await screenshot(page, 'training-1-running-chart');
      await step(wb, 'cancel', () => run.locator('.controls button', { hasText: 'cancel' }).click());
      await step(wb, 'cancelled', () => run.locator('.state.cancelled').waitFor());
      await step(wb, 'no-controls', async () =>
        assert.equal(await run.locator('.controls button').count(), 0, 'a cancelled run offers no controls'),
      );
      await screenshot(page, 'training-2-cancelled');
    },
  );
});

if (skipReason) console.log(`skipping the Training Monitor e2e test: ${skipReason}`);
