// The Training Monitor webview and its charts editor panel in a real browser (Debian's Chromium through
// playwright-core), fed live by a real backend running a tiny GRPO run: the run appears in the side bar, its
// charts are drawn at the panel's width with filled legends and grow as steps finish.
// The VS Code side is a TEST DOUBLE: a fake acquireVsCodeApi in the page and a small relay here that does
// what extension/trainingMonitor.ts does, through the same language-server face (kimina/training/*, real
// JSON-RPC framing) attached to the backend.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { chromium, type Browser, type Page } from 'playwright-core';
import {
  type TrainingConnection,
  type TrainingPresetName,
  type TrainingStreamEvent,
  lspMethods,
} from '../../backend/protocol';
import type { FromMonitor, ToMonitor } from '../../media/trainingMonitorMessages';
import type { ToCharts } from '../../media/trainingChartsMessages';
import { HttpProveService } from '../../backend/editor/httpService';
import { connectFace, faceRequest } from '../api/faceClient';
import { makeTinyModel, PROMPTS, removeDir, startBackend, waitFor, type Backend } from './harness';
import { repoRoot } from './pythonSetup';

const CHROMIUM = '/usr/bin/chromium';
let backend: Backend;
let browser: Browser;

before(async () => {
  if (!existsSync(CHROMIUM)) return;
  backend = await startBackend();
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
});
after(async () => {
  await browser?.close();
  if (backend) {
    await backend.close();
    removeDir(backend.dir);
  }
});

async function bundle(out: string, view: 'trainingMonitor' | 'trainingCharts'): Promise<{ js: string; css: string }> {
  await build({
    entryPoints: { [view]: join(repoRoot, 'media', `${view}.ts`) },
    bundle: true,
    outdir: out,
    platform: 'browser',
    format: 'iife',
    target: 'es2022',
    loader: { '.css': 'css' },
    logLevel: 'error',
  });
  return {
    js: readFileSync(join(out, `${view}.js`), 'utf8'),
    css: readFileSync(join(out, `${view}.css`), 'utf8'),
  };
}

/** TEST DOUBLE of the view host: relays between the page and the backend like extension/trainingMonitor.ts. */
const startedIds: string[] = [];

async function relay(page: Page, chartsPage: Page, b: Backend): Promise<() => Promise<void>> {
  const face = await connectFace(async () => new HttpProveService({ url: b.url, source: 'setting' }), { refreshMs: 0 });
  const { client } = face;
  const toCharts = (m: ToCharts) =>
    chartsPage.evaluate((msg) => window.postMessage(msg, '*'), m as never).catch(() => {});
  const post = (m: ToMonitor) => {
    // the charts panel gets the same runs, metrics and connection (extension/trainingCharts.ts relays them)
    if (m.type === 'run' || m.type === 'metrics' || m.type === 'connection') void toCharts(m);
    return page.evaluate((msg) => window.postMessage(msg, '*'), m as never).catch(() => {});
  };
  let selected: string | null = null;
  const select = async (runId: string) => {
    selected = runId;
    await toCharts({ type: 'show', runIds: [runId] });
    const m = await faceRequest(client, lspMethods.trainingMetrics, { id: runId });
    await post({ type: 'metrics', runId, steps: m.steps, replace: true });
  };
  client.onNotification(lspMethods.trainingEvent, (e: TrainingStreamEvent) => {
    if (e.type === 'run') {
      void post({ type: 'run', run: e.run });
      if (!selected) void select(e.run.id);
    } else if (e.type === 'metrics' && e.runId === selected)
      void post({
        type: 'metrics',
        runId: e.runId,
        steps: [{ step: e.step, kind: e.kind, metrics: e.metrics }],
        replace: false,
      });
    else if (e.type === 'rollouts' && e.runId === selected)
      void post({ type: 'rollouts', runId: e.runId, rollouts: e.rollouts, replace: false });
  });
  client.onNotification(
    lspMethods.trainingConnection,
    (c: TrainingConnection) => void post({ type: 'connection', status: c.status, message: c.message }),
  );
  await page.exposeFunction('hostReceive', async (m: FromMonitor) => {
    if (m.type === 'ready') {
      const { presets } = await faceRequest(client, lspMethods.trainingPresets, {});
      await post({
        type: 'presets',
        presets: Object.entries(presets).map(([name, p]) => ({ name: name as TrainingPresetName, summary: p.summary })),
        defaultModel: 'm',
        workspace: '/ws',
      });
      await post({ type: 'gpus', report: await faceRequest(client, lspMethods.trainingGpus, {}) });
      const c = await faceRequest(client, lspMethods.trainingFollow, { follow: true });
      await post({ type: 'connection', status: c.status, message: c.message });
    } else if (m.type === 'start') {
      // What the real host sends (plus test-sized overrides and explicit prompts instead of the workspace).
      try {
        const run = await faceRequest(client, lspMethods.trainingStart, {
          preset: m.preset,
          model: m.model,
          schedule: m.schedule,
          winRate: m.winRateSamples ? { samples: m.winRateSamples } : undefined,
          prompts: PROMPTS.slice(0, 3),
          heldOut: [PROMPTS[3]],
          gpus: 'cpu',
          name: 'monitor run',
          overrides: {
            maxSteps: 4,
            saveSteps: 2,
            evalSteps: 2,
            evalSamples: 2,
            maxCompletionLength: 16,
            promptsPerStep: 2,
            numGenerations: 2,
            perDeviceBatch: 4,
          },
        });
        startedIds.push(run.id);
      } catch (err) {
        await post({ type: 'error', message: (err as Error).message });
      }
    } else if (m.type === 'control') {
      const method = (
        {
          pause: lspMethods.trainingPause,
          resume: lspMethods.trainingResume,
          cancel: lspMethods.trainingCancel,
        } as const
      )[m.action];
      await post({ type: 'run', run: await faceRequest(client, method, { id: m.runId }) });
    }
  });
  return () => face.close();
}

test(
  'live charts of a tiny run update in the charts panel; the side bar follows the run',
  { timeout: 600_000 },
  async (t) => {
    if (!existsSync(CHROMIUM)) {
      t.skip(`${CHROMIUM} is not installed (the e2e suite installs it)`);
      return;
    }
    const assets = await bundle(join(backend.dir, 'media'), 'trainingMonitor');
    const chartAssets = await bundle(join(backend.dir, 'media'), 'trainingCharts');
    const page = await browser.newPage({ viewport: { width: 380, height: 2400 } });
    const chartsPage = await browser.newPage({ viewport: { width: 1200, height: 2400 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    chartsPage.on('pageerror', (e) => errors.push(`charts: ${String(e)}`));
    await chartsPage.setContent(`<!DOCTYPE html><html><head><style>${chartAssets.css}</style></head><body><main id="root"></main>
<script>window.acquireVsCodeApi = () => ({ postMessage: () => {} });</script><script>${chartAssets.js}</script></body></html>`);
    const stop = await relay(page, chartsPage, backend);
    await page.setContent(`<!DOCTYPE html><html><head><style>${assets.css}</style></head><body><main id="root"></main>
<script>window.acquireVsCodeApi = () => ({ postMessage: (m) => window.hostReceive(m) });</script><script>${assets.js}</script></body></html>`);
    try {
      await page.waitForSelector('.connection.connected', { timeout: 30_000 });
      const modelDir = await makeTinyModel(join(backend.dir, 'tiny-model'));
      // Start from the form, as a user does; what is typed survives live updates re-rendering the view.
      await page.fill('#model', modelDir);
      await page.evaluate(() =>
        window.postMessage({ type: 'gpus', report: { available: false, gpus: [], note: 'update while typing' } }, '*'),
      );
      await page.waitForSelector('text=update while typing');
      assert.equal(await page.inputValue('#model'), modelDir);
      await page.selectOption('#preset', 'tiny-cpu');
      await page.click('.start button.primary');
      await waitFor('the start message', () => startedIds[0], 30_000);
      const created = { body: { id: startedIds[0] } };
      await page.waitForSelector('.run .state.running', { timeout: 60_000 });
      await chartsPage.waitForSelector('#chart-reward canvas', { timeout: 300_000 });
      const early = await chartsPage.evaluate(() => document.querySelectorAll('.chart').length);
      await waitFor(
        'the run to complete',
        () => backend.service.jobs.get(created.body.id).state === 'completed' || undefined,
        400_000,
        250,
      );
      await page.waitForSelector('.run .state.completed', { timeout: 30_000 });
      await page.waitForFunction(
        () => document.querySelector('.run .muted')?.textContent?.startsWith('step 4/4'),
        undefined,
        { timeout: 30_000 },
      );
      const chartIds = await chartsPage.evaluate(() =>
        [...document.querySelectorAll('.chart')].map((c) => c.getAttribute('data-chart')),
      );
      const rewardWidth = await chartsPage.evaluate(() => document.querySelector('#chart-reward canvas')!.clientWidth);
      assert.ok(rewardWidth > 600, `the reward chart is drawn at the panel's width (${rewardWidth} px)`);
      const legend = await chartsPage.evaluate(() =>
        [...document.querySelectorAll('#chart-reward .u-legend .u-value')].map((v) => v.textContent ?? ''),
      );
      assert.ok(
        legend.length > 1 && legend.slice(1).every((v) => v !== '' && v !== '--' && v !== '–'),
        `legend values filled without hovering: ${legend.join(', ')}`,
      );
      for (const id of [
        'reward',
        'eval',
        'format',
        'length',
        'clipped',
        'loss',
        'grad',
        'entropy',
        'throughput',
        'steptime',
      ])
        assert.ok(chartIds.includes(id), `chart ${id} missing: ${chartIds.join(',')}`);
      assert.ok(chartIds.length >= early);
      const evalText = await page.textContent('.details .eval');
      assert.match(evalText ?? '', /held-out pass@2 with fix turn: base 0 → step 4: 0/);
      assert.match((await page.textContent('.rollouts')) ?? '', /step \d+ · (train|eval)/);
      mkdirSync(join(repoRoot, 'test-output'), { recursive: true });
      await page.screenshot({ path: join(repoRoot, 'test-output', 'training-monitor.png'), fullPage: true });
      await chartsPage.screenshot({ path: join(repoRoot, 'test-output', 'training-charts.png'), fullPage: true });
      assert.deepEqual(errors, []);
    } finally {
      await stop();
      await page.close();
      await chartsPage.close();
    }
  },
);
