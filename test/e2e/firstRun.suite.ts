// First run in a real VS Code: no model yet. The extension says what is missing, "Pull Model" downloads it
// with a progress notification (`kimina model pull` against a stand-in Hugging Face hub, a TEST DOUBLE serving
// the scripted ONNX model's files), the backend restarts by itself, and the first proof goes through
// (stand-in REPL as Lean).
import { after, before, describe, test } from 'node:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { goToLine, openFile, openWorkbench, proofView, runCommand, screenshot, step, type Workbench } from './harness';
import { writeScriptedModel } from '../../backend/demo/models/scriptedModel';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';
import { filesOf, startStandInHub, type StandInHub } from '../model/standInHub';

const repo = 'kimina-test/scripted-prover';

describe('first run: pull the model from the guidance, then prove', () => {
  let wb: Workbench;
  let hub: StandInHub;
  let scratch: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'kimina-e2e-first-'));
    writeScriptedModel(join(scratch, 'model'), { variant: 'fix' });
    const files = filesOf(join(scratch, 'model'));
    hub = await startStandInHub({
      repos: {
        [repo]: { commit: 'a'.repeat(40), files, lfs: Object.keys(files).filter((f) => f.startsWith('onnx/')) },
      },
    });
    wb = await openWorkbench({
      name: 'first-run',
      settings: {
        'kimina.model': repo,
        'kimina.device': 'cpu',
        'kimina.replCommand': standInReplCommand(),
        'kimina.samples': 1,
      },
      env: {
        HF_ENDPOINT: hub.endpoint,
        KIMINA_HOME: join(scratch, 'home'),
        KIMINA_SANDBOX: 'none',
        KIMINA_REPL_MEMORY_MB: '0',
        KIMINA_MAX_REPLS: '1',
        KIMINA_THREADS: '1',
      },
    });
  });

  after(async () => {
    await wb?.close();
    await hub?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  test('the guidance offers Pull Model; after the download the first proof is verified', async () => {
    const { page } = wb;
    await step(wb, 'open-file', () => openFile(page, 'Algebra.lean'));
    const toast = page.locator('.notifications-toasts .notification-toast', { hasText: 'Kimina needs a model' });
    await step(wb, 'guidance', () => toast.first().waitFor());
    await screenshot(page, 'first-run-1-guidance');
    await step(wb, 'pull-button', () => toast.first().locator('.monaco-button', { hasText: 'Pull Model' }).click());
    const input = page.locator('.quick-input-widget input');
    await step(wb, 'model-input', () => input.waitFor());
    await step(wb, 'model-id', async () => {
      if ((await input.inputValue()) !== repo) throw new Error(`input holds ${await input.inputValue()}`);
    });
    await page.keyboard.press('Enter');
    await step(wb, 'pulled', () =>
      page
        .locator('.notifications-toasts', { hasText: `Kimina: pulling ${repo}: done.` })
        .first()
        .waitFor(),
    );
    await step(wb, 'ready', () =>
      page
        .locator('.statusbar-item', { hasText: /^\s*Kimina\s*$/ })
        .first()
        .waitFor(),
    );
    await screenshot(page, 'first-run-2-pulled');
    await goToLine(page, 7);
    await step(wb, 'prove', () => runCommand(page, 'Kimina: Prove This Theorem'));
    await step(wb, 'verified', () =>
      proofView(page).locator('.turn-2 .verdict.ok', { hasText: 'Lean accepted' }).waitFor(),
    );
    await screenshot(page, 'first-run-3-proved');
  });
});
