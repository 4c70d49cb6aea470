// `kimina prove FILE:LINE` at a sorry inside a `def`, an `instance`, a `have`: the real CLI, the OpenAI-compatible
// engine against the stand-in OpenAI server (a TEST DOUBLE: its "model" restates the lemma it is shown and
// answers `trivial`) and the real verifier over the stand-in REPL (a TEST DOUBLE for Lean: its sorry goals are
// `⊢ <declaration line>`, README). The sorry is targeted, its goal comes from the REPL's report, the candidate
// reaches the Lean check, and the file is never written.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startStandInOpenAIServer } from '../model/standInOpenAIServer';
import { standInReplCommand } from '../../backend/demo/stand-in-repl/index';
import { sorryTarget } from '../../backend/cli/prove';
import { SHAPES } from '../editor/sorryShapes';

const root = join(__dirname, '..', '..');
const tsx = pathToFileURL(require.resolve('tsx')).href;

function kimina(args: string[], env: Record<string, string>, cwd: string) {
  return new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', tsx, join(root, 'backend/cli.ts'), 'prove', ...args], {
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

/** The scripted answer: the lemma of the prompt's formal statement, proved by `trivial`, in Kimina's format. */
function lemmaAnswer(messages: { role: string; content: string }[]): string {
  const prompt = messages.find((m) => m.role === 'user')!.content;
  const statement = prompt.slice(prompt.indexOf('```lean4\n') + 9, prompt.lastIndexOf('\n```'));
  const lemma = statement.slice(statement.lastIndexOf('theorem '));
  return `<think>\nTry it.\n\n\`\`\`tactics\n${lemma}\n\`\`\`\n\nthen\n\n\`\`\`tactics\n  trivial\n\`\`\`\n</think>\nDone.\n\n\`\`\`lean4\nimport Mathlib\n\n${lemma}\n  trivial\n\`\`\``;
}

const lineOf = (piece: string) => SHAPES.split('\n').findIndex((l) => l.includes(piece)) + 1;

test('sorryTarget: a sorry in a def, an instance, a match arm, a have; a theorem whose whole proof is sorry is not', () => {
  assert.deepEqual(sorryTarget(SHAPES, lineOf('⟨a / b, sorry⟩')), {
    line: lineOf('⟨a / b, sorry⟩') - 1,
    character: 10,
  });
  assert.ok(sorryTarget(SHAPES, lineOf('instance oneLtTwo')));
  assert.ok(sorryTarget(SHAPES, lineOf('| 0 =>')));
  assert.ok(sorryTarget(SHAPES, lineOf('have h1') + 1));
  assert.equal(sorryTarget(SHAPES, lineOf('omega')), null, 'no sorry on the line');
  assert.equal(sorryTarget('theorem t : 1 = 1 := by\n  sorry\n', 2), null, 'proved as the theorem, as before');
});

test(
  'kimina prove FILE:LINE at a sorry in a def and in an instance: goal from the REPL, candidate judged, file untouched',
  { timeout: 150_000 },
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kimina-prove-sorry-'));
    const server = await startStandInOpenAIServer({ answer: lemmaAnswer, tokenize: 'vllm', chunkChars: 40 });
    try {
      const file = join(dir, 'Shapes.lean');
      writeFileSync(file, SHAPES);
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
      for (const piece of ['⟨a / b, sorry⟩', 'instance oneLtTwo']) {
        const r = await kimina(
          [`Shapes.lean:${lineOf(piece)}`, '--samples', '1', '--fix-turns', '0', '--json'],
          env,
          dir,
        );
        assert.ok(r.stdout.trim().startsWith('{'), r.stderr + r.stdout);
        const result = JSON.parse(r.stdout);
        assert.equal(result.mode, 'goal', r.stderr);
        assert.match(r.stderr, /Goal:\n⊢ /, 'the goal is the REPL’s report of the sorry');
        assert.ok(result.goal?.statement.startsWith('theorem '), 'proved as a lemma');
        const lemmaAttempt = result.attempts[0];
        assert.ok(lemmaAttempt.verdict, `the candidate reached the Lean check: ${r.stderr}`);
        assert.equal(readFileSync(file, 'utf8'), SHAPES, 'the file is not written');
      }
    } finally {
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  },
);
