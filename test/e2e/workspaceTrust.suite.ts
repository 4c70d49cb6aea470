// A cloned project cannot steer the extension: a real VS Code (code-server) with Workspace Trust ENABLED opens
// a workspace whose .vscode/settings.json sets every dangerous kimina.* setting to a marker-writing command or
// a foreign URL (a local HTTP listener that records every hit, standing in for a foreign host). Untrusted: the
// extension starts nothing and says why. Trusted: the backend starts with the user's settings only, and a proof
// goes through (scripted ONNX model and stand-in REPL, TEST DOUBLES, from the user settings). At no point does a
// marker appear, the listener get a request, or a workspace value reach the backend's environment.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from './expect';
import { goToLine, openFile, openWorkbench, proofView, runCommand, screenshot, step, type Workbench } from './harness';
import { writeScriptedModel } from '../../backend/demo/models/scriptedModel';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';

describe('Workspace Trust: a hostile workspace settings file', () => {
  let wb: Workbench;
  let scratch: string;
  let markers: string;
  let listener: Server;
  const hits: string[] = [];
  let foreign: string;

  before(async () => {
    scratch = mkdtempSync(join(tmpdir(), 'kimina-e2e-trust-'));
    markers = join(scratch, 'markers');
    writeScriptedModel(join(scratch, 'model'), { variant: 'fix' });
    listener = createServer((req, res) => {
      hits.push(`${req.method} ${req.url} ${req.headers.authorization ?? ''}`);
      res.end('{}');
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    const port = (listener.address() as { port: number }).port;
    foreign = `http://127.0.0.1:${port}`;
    const mark = (what: string) => `mkdir -p ${markers} && touch ${join(markers, what)}`;
    const workspaceSettings = {
      'kimina.nodePath': './evil-node.sh',
      'kimina.replCommand': `${mark('replCommand')}; exec ${standInReplCommand()}`,
      'kimina.serverUrl': `${foreign}/serve`,
      'kimina.serverToken': 'token-from-the-workspace',
      'kimina.engine': 'openai',
      'kimina.openaiBaseUrl': `${foreign}/v1`,
      'kimina.leanProject': join(scratch, 'evil-project'),
      'kimina.model': './evil-model',
    };
    wb = await openWorkbench({
      name: 'workspace-trust',
      workspaceTrust: true,
      settings: {
        'kimina.model': join(scratch, 'model'),
        'kimina.device': 'cpu',
        'kimina.replCommand': standInReplCommand(),
        'kimina.samples': 1,
      },
      workspaceFiles: {
        '.vscode/settings.json': JSON.stringify(workspaceSettings, null, 2),
        'evil-node.sh': { text: `#!/bin/sh\n${mark('nodePath')}\nexec node "$@"\n`, exec: true },
        'evil-model/config.json': '{}',
      },
      env: {
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
    listener?.close();
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  const noHarm = () => {
    assert.deepEqual(existsSync(markers) ? readdirSync(markers) : [], [], 'no marker written');
    assert.deepEqual(hits, [], 'the foreign URL was never contacted');
  };

  test('untrusted: nothing starts, the extension says what it will not do and why', async () => {
    const { page } = wb;
    await step(wb, 'open-file', () => openFile(page, 'Algebra.lean'));
    await step(wb, 'restricted-notice', () =>
      page
        .locator('.notifications-toasts .notification-toast', { hasText: 'Kimina is off in Restricted Mode' })
        .first()
        .waitFor(),
    );
    await step(wb, 'restricted-status', () =>
      page.locator('.statusbar-item', { hasText: 'Kimina: Restricted Mode' }).first().waitFor(),
    );
    await goToLine(page, 7);
    await step(wb, 'prove-refused', async () => {
      await runCommand(page, 'Kimina: Prove This Theorem');
      await page
        .locator('.notifications-toasts .notification-toast', { hasText: 'does not run in Restricted Mode' })
        .first()
        .waitFor();
    });
    await screenshot(page, 'workspace-trust-1-restricted');
    assert.deepEqual(wb.backendPids(), [], 'no backend process');
    noHarm();
  });

  test('trusted: the backend starts with the user settings only, a proof goes through, still no marker, no hit', async () => {
    const { page } = wb;
    await step(wb, 'manage-trust', () => runCommand(page, 'Workspaces: Manage Workspace Trust'));
    await step(wb, 'trust-folder', () =>
      page
        .locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ })
        .first()
        .click(),
    );
    await step(wb, 'backend-started', () => expect(async () => assert.equal(wb.backendPids().length, 1)));
    const environ = readFileSync(`/proc/${wb.backendPids()[0]}/environ`, 'utf8').split('\0');
    const envOf = (name: string) => environ.find((e) => e.startsWith(`${name}=`))?.slice(name.length + 1);
    assert.equal(envOf('KIMINA_REPL_COMMAND'), standInReplCommand());
    assert.equal(envOf('KIMINA_MODEL'), join(scratch, 'model'));
    assert.equal(envOf('KIMINA_ENGINE'), 'auto', "the default: the workspace's 'openai' is not read");
    assert.equal(envOf('KIMINA_SERVER_URL'), undefined);
    assert.equal(envOf('KIMINA_API_TOKEN'), undefined);
    assert.equal(envOf('KIMINA_OPENAI_BASE_URL'), undefined);
    assert.equal(envOf('KIMINA_LEAN_PROJECT'), wb.workspace, 'the Lean project is the trusted folder itself');
    await step(wb, 'ready', () =>
      page
        .locator('.statusbar-item', { hasText: /^\s*Kimina\s*$/ })
        .first()
        .waitFor({ timeout: 120_000 }),
    );
    // code-server 4.139 shows the trust editor as a modal editor over the workbench: close it to reach the files
    await step(wb, 'close-trust-editor', async () => {
      const modal = page.locator('.monaco-modal-editor-block');
      for (const key of ['Escape', 'Control+W']) {
        if ((await modal.count()) === 0) return;
        await page.keyboard.press(key);
        await modal.waitFor({ state: 'detached', timeout: 5_000 }).catch(() => {});
      }
      assert.equal(await modal.count(), 0, 'the trust editor closed');
    });
    await openFile(page, 'Algebra.lean');
    await goToLine(page, 7);
    await step(wb, 'prove', () => runCommand(page, 'Kimina: Prove This Theorem'));
    await step(wb, 'verified', () =>
      proofView(page).locator('.turn-2 .verdict.ok', { hasText: 'Lean accepted' }).waitFor({ timeout: 120_000 }),
    );
    await screenshot(page, 'workspace-trust-2-trusted-proved');
    noHarm();
  });
});
