// End to end in a real VS Code on files shaped as current Lean projects write them: a `module` file with a
// copyright header, `public import`s of its project's own modules and `@[expose] public section`, and a file that
// defines and uses its own notation. Prove This Theorem on each: the model (which writes the usual `import Mathlib`
// header and only the target, as a model trained on snippets does) is read for the target's proof, Lean checks it
// after the file's real prefix, and Accept puts exactly that proof in the file.
// TEST DOUBLES: the model is the stand-in OpenAI server (its scripted answer restates the target it is shown and
// proves it with a tactic chosen by the theorem's name) reached by the real OpenAI engine; Lean is the stand-in
// REPL through the real verifier.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { expect } from './expect';
import {
  editorText,
  goToLine,
  openWorkbench,
  proofView,
  quickOpen,
  runCommand,
  screenshot,
  step,
  type Workbench,
} from './harness';
import { startStandInOpenAIServer, type StandInServer } from '../model/standInOpenAIServer';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';

const BASIC = `/-
Copyright (c) 2026 Jane Doe. All rights reserved.
Released under Apache 2.0 license as described in the file LICENSE.
Authors: Jane Doe
-/
module

public import Mathlib.Data.Nat.Defs

@[expose] public section

namespace MyProject

/-- Twice a number. -/
def double (n : Nat) : Nat := n + n

end MyProject
`;

const DOUBLING = `/-
Copyright (c) 2026 Jane Doe. All rights reserved.
Released under Apache 2.0 license as described in the file LICENSE.
Authors: Jane Doe
-/
module

public import Mathlib.Algebra.Group.Defs
public import MyProject.Basic

/-!
# Doubling

Facts about \`MyProject.double\`.
-/

@[expose] public section

namespace MyProject

theorem double_eq (x : Nat) : double x = 2 * x := by
  sorry

end MyProject
`;

const NOTATION = `import Mathlib

namespace Order

def Below (a b : Nat) : Prop := a ≤ b

infix:50 " ≼ " => Below

theorem below_refl (a : Nat) : a ≼ a := by
  sorry

end Order
`;

/** The proof the scripted model writes for each target. */
const PROOFS: Record<string, string> = {
  double_eq: '  unfold double\n  omega',
  below_refl: '  exact Nat.le_refl a',
};

/** A well-formed answer: `import Mathlib`, then the target as the prompt states it, then its proof. */
function answer(messages: { role: string; content: string }[]): string {
  const prompt = messages.find((m) => m.role === 'user')!.content;
  const statement = prompt.slice(prompt.indexOf('```lean4\n') + 9, prompt.lastIndexOf('\n```'));
  const target = statement.slice(statement.lastIndexOf('theorem '));
  const name = /^theorem\s+(\S+)/.exec(target)![1];
  const proof = PROOFS[name] ?? '  trivial';
  const final = `import Mathlib\n\n${target}\n${proof}`;
  return `<think>\nRestate the goal and close it.\n\n\`\`\`tactics\nimport Mathlib\n${target}\n\`\`\`\n\nThen:\n\n\`\`\`tactics\n${proof}\n\`\`\`\n</think>\nThe proof.\n\n\`\`\`lean4\n${final}\n\`\`\``;
}

describe('real files: a module file and a notation file (stand-in OpenAI server, stand-in REPL)', () => {
  let model: StandInServer;
  let wb: Workbench;

  before(async () => {
    model = await startStandInOpenAIServer({ answer, tokenize: 'vllm', chunkChars: 40 });
    wb = await openWorkbench({
      name: 'real-files',
      settings: {
        'kimina.engine': 'openai',
        'kimina.openaiBaseUrl': model.baseUrl,
        'kimina.replCommand': standInReplCommand(),
        'kimina.samples': 1,
        'kimina.fixTurns': 0,
        'kimina.showDiffOnProof': false,
      },
      env: { KIMINA_SANDBOX: 'none', KIMINA_REPL_MEMORY_MB: '0', KIMINA_MAX_REPLS: '1' },
      workspaceFiles: {
        'MyProject/Basic.lean': BASIC,
        'MyProject/Doubling.lean': DOUBLING,
        'Order.lean': NOTATION,
      },
    });
  });

  after(async () => {
    await wb?.close();
    await model?.close();
  });

  const proveAndAccept = async (file: string, line: number, name: string, written: RegExp) => {
    const { page } = wb;
    await step(wb, `${name}-open`, async () => {
      // open it in the first editor group (the Proof view may hold the focus in the second)
      await page.keyboard.press('Control+1');
      await quickOpen(page, file);
      await page.locator('.editor-instance .monaco-editor .view-lines', { hasText: name }).first().waitFor();
    });
    await goToLine(page, line);
    await step(wb, `${name}-prove`, () => runCommand(page, 'Kimina: Prove This Theorem'));
    const view = proofView(page);
    await step(wb, `${name}-verified`, () =>
      view.locator('.verdict.ok:visible', { hasText: 'Lean accepted' }).first().waitFor({ timeout: 60_000 }),
    );
    await screenshot(page, `real-files-${name}`);
    await step(wb, `${name}-accept`, () => view.locator('#accept').click());
    await step(wb, `${name}-written`, () => expect(async () => assert.match(await editorText(page), written)));
  };

  test('a module file with a copyright header, public imports and @[expose] public section: proved and accepted', async () => {
    await proveAndAccept(
      'Doubling.lean',
      21,
      'double_eq',
      /theorem double_eq \(x : Nat\) : double x = 2 \* x := by\n\s+unfold double\n\s+omega\n\nend MyProject/,
    );
    // the model was shown the module's own header; its `import Mathlib` was not checked, the file's header was
    const prompt = model.requests.find((r) => r.path.endsWith('/chat/completions'))!;
    const user = (prompt.body.messages as { role: string; content: string }[])[1].content;
    assert.match(user, /public import MyProject\.Basic/);
    assert.match(await editorText(wb.page), /^\/-\nCopyright \(c\) 2026 Jane Doe/);
  });

  test('a file that defines and uses its own notation: proved and accepted', async () => {
    await proveAndAccept(
      'Order.lean',
      9,
      'below_refl',
      /theorem below_refl \(a : Nat\) : a ≼ a := by\n\s+exact Nat\.le_refl a\n\nend Order/,
    );
  });
});
