// A prove request on the user's file checks its candidates in one file session (backend/prover/sessionVerifier.ts):
// counted through the real prove loop with a scripted engine (TEST DOUBLE) and the real verifier and pool around the
// stand-in REPL (TEST DOUBLE), which logs each command's size. Compared with the same request without a session
// (today's path for snippets nobody vouches for: the whole snippet per check).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ChatMessage, ProveResult } from '../../backend/protocol';
import { openFileSession } from '../../backend/lean/fileSession';
import { prove, type ProveDeps } from '../../backend/prover/prove';
import { ScriptedEngine } from './doubles';
import { standInVerifier } from '../lean/standInVerifier';
import { bigModuleFile } from '../lean/data/bigModuleFile';

const wrong = '```lean4\ntheorem target (n : ℕ) : n + 0 = n := by\n  exact bogus_lemma n\n```';
const right = '```lean4\ntheorem target (n : ℕ) : n + 0 = n := by\n  simp\n```';

/** Commands and elaborated lines the stand-in logged (`<pid> command lines=N`). */
function sent(log: string[]): { commands: number; lines: number; imports: number } {
  const commands = log.filter((l) => / command lines=\d+$/.test(l));
  return {
    commands: commands.length,
    lines: commands.reduce((n, l) => n + Number(/lines=(\d+)$/.exec(l)?.[1] ?? 0), 0),
    imports: log.filter((l) => / import /.test(l)).length,
  };
}

async function proveOnce(
  file: string,
  answer: (c: ChatMessage[]) => string,
  session: boolean,
): Promise<{ result: ProveResult; log: ReturnType<typeof sent> }> {
  const s = standInVerifier({ maxRepls: 1, logLines: true, printAxiomsInModules: true });
  try {
    const deps: ProveDeps = {
      engine: new ScriptedEngine((c) => answer(c)),
      verifier: s.verifier,
      ...(session ? { openFileSession: (f, line) => openFileSession(s.verifier, { file: f, line }) } : {}),
    };
    const result = await prove({ code: file, theorem: 'target', samples: 8, fixTurns: 1 }, deps);
    return { result, log: sent(s.log()) };
  } finally {
    await s.verifier.close();
  }
}

test('measured through the prove path: 8 samples + 8 fix turns on a 2,000-line file pay for the file once', async () => {
  const { file } = bigModuleFile(2000);
  // without a session the whole snippet is model text: the file's own option, notation and macro would be refused
  // before Lean (issue 28), so the baseline runs on the same 2,000 lines with those three lines blank
  const plain = file.replace(/^(set_option|notation|macro) .*$/gm, '');
  const before = await proveOnce(plain, () => wrong, false);
  const after = await proveOnce(file, () => wrong, true);
  for (const r of [before.result, after.result]) {
    assert.equal(r.status, 'not_proved');
    assert.equal(r.attempts.length, 16);
    assert.ok(r.attempts.every((a) => a.verdict?.status === 'lean_error'));
  }
  console.log(
    `prove request on a 2,000-line file (16 checks): whole snippet per check ${before.log.commands} commands, ` +
      `${before.log.lines} lines elaborated; file session ${after.log.commands} commands, ${after.log.lines} lines`,
  );
  // the prefix once, then per check the candidate and its audit
  assert.equal(after.log.commands, 1 + 2 * 16);
  assert.equal(after.log.imports, 1);
  assert.ok(after.log.lines < 2000 + 16 * 10, `${after.log.lines}`);
  assert.ok(after.log.lines * 10 < before.log.lines, `${after.log.lines} vs ${before.log.lines}`);
  // Lean's error is placed on the snippet's line of `exact bogus_lemma` (the line the model's code has it on), in
  // the messages and the reason, as without a session (the baseline's snippet differs by the three blank lines)
  for (const r of [before.result, after.result]) {
    const a = r.attempts[0];
    const error = a.verdict!.messages.find((m) => m.severity === 'error')!;
    assert.match(a.code!.split('\n')[error.pos.line - 1], /exact bogus_lemma n/);
    assert.match(a.verdict!.reason, new RegExp(`^Lean error at line ${error.pos.line}:`));
    assert.match(a.feedback ?? '', /bogus_lemma/);
  }
});

test("the user file's own option, notation and macro above the target are not refused in a session (they are without)", async () => {
  const { file } = bigModuleFile(60);
  const without = await proveOnce(file, () => right, false);
  assert.equal(without.result.status, 'not_proved');
  assert.match(without.result.attempts[0].verdict!.reason, /^Rejected before Lean \(line 15\)/);
  const withSession = await proveOnce(file, () => right, true);
  assert.equal(withSession.result.status, 'proved');
});

test('in a file session a right answer is proved and audited under its namespace; the tactics are the body', async () => {
  const { file } = bigModuleFile(120);
  const { result } = await proveOnce(file, (c) => (c.length > 2 ? right : wrong), true);
  assert.equal(result.status, 'proved');
  const winner = result.attempts.find((a) => a.verdict?.status === 'valid')!;
  assert.deepEqual(Object.keys(winner.verdict!.axiomsByDeclaration ?? {}), ['Big.target']);
  assert.equal(result.tactics?.trim(), 'simp');
});
