// The user's file is the user's code (issue 28), in the editor too: a file with its own `local notation` and
// `macro` above the theorem. Prove This Theorem and Prove Goal go through the real editor path (proveInEditor),
// the real in-process service (App: verifier pool, file sessions, prove loop), a scripted engine (TEST DOUBLE for
// the model) and the stand-in REPL (TEST DOUBLE for Lean: text rules, backend/demo/stand-in-repl/README.md).
// The splice re-checks and the goal check read the prefix as the user's code; the model's declaration is still
// filtered: an answer that writes its own notation is refused.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ChatMessage, ProveParams } from '../../backend/protocol';
import { App } from '../../backend/app/app';
import { readSettings } from '../../backend/settings/settings';
import { createInProcessService } from '../../backend/editor/inProcess';
import { proveInEditor } from '../../backend/editor/editorProve';
import { applyEdit } from '../../backend/editor/splice';
import { offsetAt } from '../../backend/editor/leanSource';
import { type ProveService, checkInFile } from '../../backend/editor/service';
import { recheckProposal } from '../../backend/editor/recheck';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';
import { ScriptedEngine } from '../prover/doubles';

const FILE = `import Mathlib

local notation "ℕ+" => Nat
macro "triv_close" : tactic => \`(tactic| trivial)

theorem pos_add_zero (n : ℕ+) : n + 0 = n := by
  sorry

theorem pos_fun (n : ℕ+) : (fun m : ℕ+ => m) n = n := by
  sorry

theorem pos_succ (n : ℕ+) : n < n + 1 := by
  have h : n ≤ n := by
    sorry
  omega
`;

/** The model's answer: the target's statement from the prompt's formal statement, proved with `tactic`. */
let proofTactic = 'simp';
function answer(conversation: ChatMessage[]): string {
  const prompt = conversation[1].content;
  const statement = prompt.slice(prompt.indexOf('```lean4\n') + 9, prompt.lastIndexOf('\n```'));
  const target = statement.slice(statement.lastIndexOf('theorem '));
  return `<think>\nProve it.\n\n\`\`\`tactics\n${target}\n\`\`\`\n\nthen\n\n\`\`\`tactics\n  ${proofTactic}\n\`\`\`\n</think>\nDone.\n\n\`\`\`lean4\nimport Mathlib\n\n${target}\n  ${proofTactic}\n\`\`\``;
}

let dir: string;
let service: ProveService;
before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kimina-usercmds-'));
  const settings = readSettings({
    ...standInReplEnv(),
    KIMINA_HOME: dir,
    KIMINA_DB: join(dir, 'kimina.db'),
    KIMINA_LEAN_PROJECT: dir,
    KIMINA_SANDBOX: 'none',
    KIMINA_REPL_MEMORY_MB: '0',
    KIMINA_MAX_REPLS: '1',
    PATH: process.env.PATH ?? '',
  });
  const engine = new ScriptedEngine((c) => answer(c));
  service = await createInProcessService(
    new App({ settings, log: () => {}, loadEngine: async () => engine }),
    () => {},
  );
});
after(async () => {
  await service?.close();
  rmSync(dir, { recursive: true, force: true });
});

const params = (over: Partial<ProveParams>): ProveParams => ({
  id: 'u',
  uri: 'untitled:Pos.lean',
  code: FILE,
  samples: 1,
  fixTurns: 0,
  ...over,
});

test("the whole file strictly (the old re-check) refuses the user's own notation: the case this covers", async () => {
  const strict = await service.check(FILE.replace(/\n {2}sorry\n/g, '\n  simp\n'));
  assert.equal(strict.verdict.status, 'rejected');
  assert.match(strict.verdict.reason, /'notation' is not allowed/);
});

test("Prove This Theorem under the file's own notation and macro: proved, re-checked in place, edit offered", async () => {
  proofTactic = 'simp';
  const stages: string[] = [];
  const result = await proveInEditor(
    params({ id: 't1', position: { line: 5, character: 0 } }),
    FILE,
    service,
    (e) => {
      if (e.type === 'stage') stages.push(e.message);
    },
    new AbortController().signal,
  );
  assert.equal(result.status, 'proved', result.problem ?? '');
  assert.ok(result.edit, result.problem ?? 'no edit');
  const written = applyEdit(FILE, result.edit, (l, c) => offsetAt(FILE, l, c));
  assert.match(written, /theorem pos_add_zero \(n : ℕ\+\) : n \+ 0 = n := by\n {2}simp\n/);
  // the user's lines are untouched
  assert.ok(written.startsWith(FILE.slice(0, FILE.indexOf('theorem'))));
  // Accept after the file changed (kimina/recheck): the same split, the edit checked again and accepted
  const changed = FILE.replace('import Mathlib\n', 'import Mathlib\n\n-- a comment added meanwhile\n');
  const moved = {
    ...result.edit,
    range: {
      start: { ...result.edit.range.start, line: result.edit.range.start.line + 2 },
      end: { ...result.edit.range.end, line: result.edit.range.end.line + 2 },
    },
  };
  const recheck = await recheckProposal(
    { uri: 'untitled:Pos.lean', code: changed, declarationLine: 7, edit: moved },
    checkInFile(service),
  );
  assert.deepEqual(recheck, { ok: true });
});

test('Prove This Theorem where Lean compares the statement before and after (a `fun` in it): that check splits too', async () => {
  proofTactic = 'simp';
  const stages: string[] = [];
  const result = await proveInEditor(
    params({ id: 't3', position: { line: 8, character: 0 } }),
    FILE,
    service,
    (e) => {
      if (e.type === 'stage') stages.push(e.message);
    },
    new AbortController().signal,
  );
  assert.ok(
    stages.some((m) => /compare the statement/.test(m)),
    stages.join(' | '),
  );
  assert.ok(result.edit, result.problem ?? 'no edit');
});

test("the re-check's split: the user's prefix is not filtered, the model's declaration still is", async () => {
  const prefix = FILE.slice(0, FILE.indexOf('theorem pos_add_zero'));
  const check = (proof: string) => {
    const code = `${prefix}theorem pos_add_zero (n : ℕ+) : n + 0 = n := by\n  ${proof}\n`;
    return service.checkInFile!(code, prefix.length);
  };
  const ok = await check('simp');
  assert.equal(ok.verdict.status, 'valid', ok.verdict.reason);
  for (const cheat of [
    'native_decide',
    'exact (by notation "x" => 1; trivial)',
    'triv_close\nmacro "y" : tactic => `(tactic| trivial)',
  ]) {
    const refused = await check(cheat);
    assert.equal(refused.verdict.status, 'rejected', `${cheat}: ${refused.verdict.reason}`);
    // the refusal is placed on the snippet's line of the model's text, below the user's prefix
    assert.ok(refused.verdict.messages[0].pos.line > prefix.split('\n').length - 1, refused.verdict.reason);
  }
  // the whole snippet as the user's (Prove Goal's goal check) is not filtered either
  const user = await service.checkInFile!(FILE, FILE.length);
  assert.equal(user.verdict.status, 'sorry', user.verdict.reason);
});

test("Prove Goal at a sorry under the file's own notation and macro: Lean gives the goal; the lemma's proof goes in", async () => {
  proofTactic = 'omega';
  const goals: string[][] = [];
  const result = await proveInEditor(
    params({ id: 'g1', mode: 'goal', position: { line: 13, character: 4 } }),
    FILE,
    service,
    (e) => {
      if (e.type === 'goal') goals.push(e.goals);
    },
    new AbortController().signal,
  );
  assert.equal(goals.length, 1, result.problem ?? '');
  assert.match(goals[0][0], /⊢ n ≤ n/);
  assert.equal(result.status, 'proved', result.problem ?? '');
  assert.ok(result.edit, result.problem ?? 'no edit');
  assert.match(
    applyEdit(FILE, result.edit, (l, c) => offsetAt(FILE, l, c)),
    /have h : n ≤ n := by\n {4}omega\n {2}omega\n/,
  );
});
