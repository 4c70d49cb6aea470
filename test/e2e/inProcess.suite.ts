// End to end in a real VS Code with the services inside the extension's own backend process: the packaged
// `kimina lsp` runs the prove loop, the ONNX engine and the verifier pool. TEST DOUBLES stand in for the
// model and Lean through the ordinary settings: kimina.model points at the scripted ONNX model (its first
// answer uses a lemma that does not exist, its fix-turn answer is correct) and kimina.replCommand starts the
// stand-in REPL (text rules, not Lean). Scenario: prove from the palette, the think block streams, turn 1 is
// rejected with Lean's error, turn 2 is verified, Accept puts the proof in the file.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from './expect';
import {
  editorText,
  goToLine,
  openFile,
  openWorkbench,
  proofView,
  runCommand,
  screenshot,
  step,
  type Workbench,
} from './harness';
import { writeScriptedModel } from '../../backend/demo/models/scriptedModel';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';

describe('in-process backend (scripted model, stand-in REPL)', () => {
  let wb: Workbench;
  let modelDir: string;

  before(async () => {
    modelDir = mkdtempSync(join(tmpdir(), 'kimina-e2e-model-'));
    writeScriptedModel(modelDir, { variant: 'fix' });
    wb = await openWorkbench({
      name: 'in-process',
      settings: {
        'kimina.engine': 'onnx',
        'kimina.model': modelDir,
        'kimina.device': 'cpu',
        'kimina.replCommand': standInReplCommand(),
        'kimina.samples': 1,
      },
      // The stand-in REPL is a Node script: no Lean sandbox or address-space cap needed for it.
      env: { KIMINA_SANDBOX: 'none', KIMINA_REPL_MEMORY_MB: '0', KIMINA_MAX_REPLS: '1', KIMINA_THREADS: '1' },
    });
  });

  after(async () => {
    await wb?.close();
    if (modelDir) rmSync(modelDir, { recursive: true, force: true });
  });

  test('in-process: the scripted model thinks, turn 1 fails in the stand-in Lean, turn 2 is verified and accepted', async () => {
    const { page } = wb;
    await step(wb, 'open-file', () => openFile(page, 'Algebra.lean'));
    await goToLine(page, 7);
    await step(wb, 'prove-command', () => runCommand(page, 'Kimina: Prove This Theorem'));
    const view = proofView(page);
    await step(wb, 'think-streams', () =>
      view.locator('.think-text', { hasText: 'linear' }).first().waitFor({ state: 'attached' }),
    );
    await step(wb, 'turn-1-error', () => view.locator('.lean-message.error', { hasText: 'bogus' }).first().waitFor());
    await step(wb, 'turn-2', () => view.locator('.turn-2 h3', { hasText: 'Turn 2 (error fix)' }).waitFor());
    await step(wb, 'verified', () => view.locator('.turn-2 .verdict.ok', { hasText: 'Lean accepted' }).waitFor());
    await screenshot(page, 'in-process-1-proved');
    await step(wb, 'accept', () => view.locator('#accept').click());
    await step(wb, 'file-holds-proof', () =>
      expect(async () => {
        assert.match(
          await editorText(page),
          /theorem algebra_example[^\n]*:= by\n\s+have h₁ : 2 \* x = 8 := by linarith\n\s+linarith/,
        );
      }),
    );
    await screenshot(page, 'in-process-2-accepted');
  });
});
