// End to end in a real VS Code (code-server 4.139.1): agents reach Kimina with no setup. The extension's MCP server
// definition provider puts "Kimina Prover" in VS Code's MCP server list (MCP: List Servers), pointing at the
// backend the extension runs; and a language-model tool answers a verdict when invoked through
// `vscode.lm.invokeTool` by another extension (test/e2e/fixtures/lm-tool-client: no Copilot sign-in exists here).
// TEST DOUBLES behind it: the stand-in REPL (text rules, not Lean) through kimina.replCommand, and the scripted
// ONNX model through kimina.model.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from './expect';
import { openFile, openWorkbench, runCommand, screenshot, step, type Workbench } from './harness';
import { writeScriptedModel } from '../../backend/demo/models/scriptedModel';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';

describe('agents: MCP server list and language-model tools', () => {
  let wb: Workbench;
  let modelDir: string;

  before(async () => {
    modelDir = mkdtempSync(join(tmpdir(), 'kimina-e2e-model-'));
    writeScriptedModel(modelDir, { variant: 'fix' });
    wb = await openWorkbench({
      name: 'agents',
      settings: {
        'kimina.engine': 'onnx',
        'kimina.model': modelDir,
        'kimina.device': 'cpu',
        'kimina.replCommand': standInReplCommand(),
      },
      env: { KIMINA_SANDBOX: 'none', KIMINA_REPL_MEMORY_MB: '0', KIMINA_MAX_REPLS: '1', KIMINA_THREADS: '1' },
      extraExtensions: ['lm-tool-client'],
    });
  });

  after(async () => {
    await wb?.close();
    if (modelDir) rmSync(modelDir, { recursive: true, force: true });
  });

  test('the Kimina server is in the MCP server list; kimina_check invoked through vscode.lm.invokeTool returns a verdict', async () => {
    const { page } = wb;
    await step(wb, 'open-file', () => openFile(page, 'Algebra.lean')); // activates Kimina (a Lean file)
    await step(wb, 'mcp-list', async () => {
      await runCommand(page, 'MCP: List Servers');
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Kimina Prover' }).first().waitFor();
    });
    await screenshot(page, 'agents-1-mcp-list');
    // VS Code's own MCP client starts it: over streamable HTTP with the token the provider gave
    await step(wb, 'mcp-start', async () => {
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Kimina Prover' }).first().click();
      await page.locator('.quick-input-widget .monaco-list-row', { hasText: 'Start Server' }).first().click();
      await expect(async () => {
        await page.keyboard.press('Escape');
        await runCommand(page, 'MCP: List Servers');
        await page
          .locator('.quick-input-widget .monaco-list-row', { hasText: /Kimina Prover.*Running/ })
          .first()
          .waitFor({ timeout: 3_000 });
      }, 60_000);
    });
    // its log (the Output panel VS Code opens on start): the seven tools of the contract were listed
    await step(wb, 'mcp-tools', () => page.locator('.view-line', { hasText: 'Discovered 7 tools' }).first().waitFor());
    await screenshot(page, 'agents-1b-mcp-running');
    await page.keyboard.press('Escape');

    const resultFile = join(wb.workspace, 'lm-tool-result.json');
    await step(wb, 'invoke-tool', async () => {
      await runCommand(page, 'Kimina Test: Invoke kimina_check');
      // the tool's confirmation (prepareInvocation's confirmationMessages), answered as a person would
      const dialog = page.locator('.monaco-dialog-box', { hasText: "Check with Lean (Kimina's strict verdict)" });
      await dialog.waitFor();
      await screenshot(page, 'agents-2-confirmation');
      await dialog.locator('.monaco-button', { hasText: 'Yes' }).click();
      await expect(async () => assert.ok(existsSync(resultFile), 'the test extension wrote its answer'), 60_000);
    });
    const tools = JSON.parse(readFileSync(join(wb.workspace, 'lm-tools.json'), 'utf8')) as string[];
    for (const name of ['kimina_check', 'kimina_prove', 'kimina_job'])
      assert.ok(tools.includes(name), tools.join(', '));
    const written = JSON.parse(readFileSync(resultFile, 'utf8')) as {
      ok: boolean;
      error?: string;
      answer?: { ok: boolean; declarations: { name: string; status: string; axioms?: string[] }[] };
    };
    assert.equal(written.ok, true, written.error);
    assert.equal(written.answer!.ok, true);
    assert.equal(written.answer!.declarations[0].name, 'lm_tool_check');
    assert.equal(written.answer!.declarations[0].status, 'valid');
  });
});
