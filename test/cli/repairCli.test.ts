// `kimina repair FILE` end to end through the real CLI: the OpenAI-compatible engine against the stand-in
// OpenAI server (a TEST DOUBLE for vLLM and co.: its scripted "repairer" applies the renames Lean's
// deprecation warnings name, repairDoubles.ts) and the real verifier over the stand-in REPL (a TEST DOUBLE for
// Lean). Checks the Markdown report, that nothing is written without --apply, and that --apply writes only the
// verified repairs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startStandInOpenAIServer } from '../model/standInOpenAIServer';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';
import { BROKEN_FILE, repairAnswer } from '../editor/repairDoubles';

const root = join(__dirname, '..', '..');
// the test runs the CLI in the file's folder: tsx by its own path (a bare `--import tsx` resolves from the cwd)
const tsx = pathToFileURL(require.resolve('tsx')).href;

function kimina(args: string[], env: Record<string, string>, cwd: string) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', tsx, join(root, 'backend/cli.ts'), 'repair', ...args], {
      cwd,
      env: { ...process.env, NO_COLOR: '1', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolve({ status, stdout, stderr });
    });
  });
}

test(
  'kimina repair FILE: a Markdown report; --apply writes only the verified repairs',
  { timeout: 150_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kimina-repair-cli-'));
    // ratio_three's repair is refused by the "model" (it answers the proof unchanged), so it stays broken
    const server = await startStandInOpenAIServer({
      answer: (messages) =>
        messages.some((m) => m.role === 'assistant' && m.content.includes('ratio_three'))
          ? repairAnswer(messages.map((m) => (m.role === 'user' ? { ...m, content: '' } : m)))
          : repairAnswer(messages),
      tokenize: 'vllm',
      chunkChars: 40,
    });
    try {
      const file = join(dir, 'Ratios.lean');
      writeFileSync(file, BROKEN_FILE);
      const env = {
        KIMINA_ENGINE: 'openai',
        KIMINA_OPENAI_BASE_URL: server.baseUrl,
        KIMINA_REPL_COMMAND: standInReplCommand(),
        KIMINA_SANDBOX: 'none',
        KIMINA_REPL_MEMORY_MB: '0',
        KIMINA_HOME: join(dir, 'home'),
        KIMINA_DB: join(dir, 'kimina.db'),
        KIMINA_LEAN_PROJECT: dir,
      };
      const dry = await kimina(['Ratios.lean', '--samples', '1', '--fix-turns', '0'], env, dir);
      assert.equal(dry.status, 1, dry.stderr + dry.stdout);
      assert.match(dry.stdout + dry.stderr, /Repaired 2 of 3 broken declarations; report: kimina-repair\.md/);
      assert.equal(readFileSync(file, 'utf8'), BROKEN_FILE, 'nothing written without --apply');
      const report = readFileSync(join(dir, 'kimina-repair.md'), 'utf8');
      assert.match(report, /\*\*2 repaired\*\*, 1 still broken, 0 skipped/);
      assert.match(report, /\| Ratios\.lean \| ratio_one \| 3 \| repaired \|/);
      assert.match(report, /\| Ratios\.lean \| ratio_three \| 11 \| still broken \|/);
      assert.match(report, /```diff\n {3}by\n- {3}rw \[div_le_iff hc\]\n\+ {3}rw \[div_le_iff₀ hc\]\n {4}exact h\n```/);
      assert.match(report, /\| ratio_three \| 11 \| still broken \| Lean rejects the answer: unsolved goals \|/);
      // the model got the fix conversation: the user's proof as the assistant turn, Lean's messages as the user turn
      const chat = server.requests.find((r) => r.path.endsWith('/chat/completions'))!;
      const messages = chat.body.messages as { role: string; content: string }[];
      assert.deepEqual(
        messages.map((m) => m.role),
        ['system', 'user', 'assistant', 'user'],
      );
      assert.match(messages[2].content, /```lean4\n[\s\S]*theorem ratio_one[\s\S]*rw \[div_le_iff hc\][\s\S]*```$/);
      assert.match(messages[3].content, /has been deprecated: Use `div_le_iff₀` instead/);

      const applied = await kimina(
        ['Ratios.lean', '--apply', '--samples', '1', '--fix-turns', '0', '--report', 'r.md'],
        env,
        dir,
      );
      assert.equal(applied.status, 1, applied.stderr);
      const written = readFileSync(file, 'utf8');
      const expected = BROKEN_FILE.replace(/(ratio_one[\s\S]*?)div_le_iff hc/, '$1div_le_iff₀ hc').replace(
        /(ratio_two[\s\S]*?)div_le_iff hc/,
        '$1div_le_iff₀ hc',
      );
      assert.equal(written, expected, 'exactly the two verified repairs');
      assert.match(readFileSync(join(dir, 'r.md'), 'utf8'), /Lean still rejects ratio_three/);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);

test(
  'kimina repair --apply: what the user types in the file during the run is kept; a declaration they changed is not written (issue 29)',
  { timeout: 150_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kimina-repair-typing-'));
    const file = join(dir, 'Ratios.lean');
    let typed = '';
    // while the "model" answers its first repair, the user edits the file: a note at the top and ratio_two's proof
    const server = await startStandInOpenAIServer({
      answer: (messages) => {
        if (!typed) {
          typed = readFileSync(file, 'utf8')
            .replace('import Mathlib\n', 'import Mathlib\n\n-- typed during the run\n')
            .replace('  nlinarith\n', '  nlinarith [hb]\n');
          writeFileSync(file, typed);
        }
        return repairAnswer(messages);
      },
      tokenize: 'vllm',
      chunkChars: 40,
    });
    try {
      writeFileSync(file, BROKEN_FILE);
      const env = {
        KIMINA_ENGINE: 'openai',
        KIMINA_OPENAI_BASE_URL: server.baseUrl,
        KIMINA_REPL_COMMAND: standInReplCommand(),
        KIMINA_SANDBOX: 'none',
        KIMINA_REPL_MEMORY_MB: '0',
        KIMINA_HOME: join(dir, 'home'),
        KIMINA_DB: join(dir, 'kimina.db'),
        KIMINA_LEAN_PROJECT: dir,
      };
      const run = await kimina(['Ratios.lean', '--apply', '--samples', '1', '--fix-turns', '0'], env, dir);
      const written = readFileSync(file, 'utf8');
      assert.ok(typed, 'the file was edited during the run');
      assert.ok(written.includes('-- typed during the run') && written.includes('nlinarith [hb]'), written);
      assert.match(
        written,
        /ratio_one[\s\S]*div_le_iff₀ hc[\s\S]*ratio_two[\s\S]*rw \[div_le_iff hc\]\n {2}nlinarith \[hb\]/,
      );
      assert.match(run.stderr, /ratio_two: not written \(its declaration was changed after it was checked/);
      assert.match(readFileSync(join(dir, 'kimina-repair.md'), 'utf8'), /ratio_two \| 7 \| skipped \| not written/);
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
