// The agent tools driven the way agents drive them: the official MCP SDK's Client, over stdio (`kimina mcp --demo`
// as a child process) and over streamable HTTP (`/mcp` on `kimina serve` with its token). TEST DOUBLES behind
// them (`--demo`): the scripted ONNX model (its first answer uses a lemma that does not exist, its fix-turn answer
// is correct) and the stand-in REPL (text rules, not Lean; backend/demo/stand-in-repl/README.md).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  agentTools,
  type AgentJob,
  type AgentToolAnswers,
  type AgentToolName,
  type ApplyToolAnswer,
} from '../../backend/protocol';
import { openApp } from '../../backend/app/app';
import { startServing, type Serving } from '../../backend/app/serve';
import { readSettings } from '../../backend/settings/settings';
import { ALGEBRA_STATEMENT } from '../../backend/demo/models/scriptedModel';

const repo = join(__dirname, '..', '..');
const algebra = `import Mathlib

/-- Given that $2x + 3 = 11$ for a real number $x$, show that $x = 4$. -/
${ALGEBRA_STATEMENT} := by
  sorry
`;

const ownNotation = `import Mathlib

notation "twice " x => x + x
macro "my_simp" : tactic => \`(tactic| simp)

theorem twice_eq (n : ℕ) : twice n = n + n := by
  simp
`;

let dir: string;
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@t', ...args], { cwd: dir, stdio: 'pipe' });

before(() => {
  dir = mkdtempSync(join(tmpdir(), 'kimina-mcp-'));
  for (const name of ['StdioAlgebra.lean', 'HttpAlgebra.lean']) writeFileSync(join(dir, name), algebra);
  writeFileSync(join(dir, 'Changed.lean'), 'theorem two : 1 + 1 = 2 := by norm_num\n');
  // the user's own notation and macro: their code, never filtered while the file is as committed
  writeFileSync(join(dir, 'Notation.lean'), ownNotation);
  writeFileSync(join(dir, 'NotationEdited.lean'), ownNotation);
  writeFileSync(join(dir, 'AlgebraEdited.lean'), algebra);
  git('init', '-q');
  git('add', '.');
  git('commit', '-qm', 'start');
  // an agent's edit after the commit: the statement changed, the proof still checks
  writeFileSync(join(dir, 'Changed.lean'), 'theorem two : 2 = 2 := by norm_num\n');
  // an agent's edit of a file with its own notation: the text differs from the commit, so it is untrusted
  writeFileSync(join(dir, 'NotationEdited.lean'), ownNotation + '\ntheorem twice_one : twice 1 = 2 := by\n  simp\n');
  // an agent's notation above the theorem to prove: model text, not the user's code
  writeFileSync(join(dir, 'AlgebraEdited.lean'), algebra.replace('\n\n', '\n\nnotation "twice " x => x + x\n\n'));
});

after(() => rmSync(dir, { recursive: true, force: true }));

type Call = <N extends AgentToolName>(name: N, args: Record<string, unknown>) => Promise<AgentToolAnswers[N]>;

function caller(client: Client): Call {
  return async (name, args) => {
    const result = await client.callTool({ name, arguments: args });
    assert.ok(!result.isError, `${name} failed: ${JSON.stringify(result.content)}`);
    return result.structuredContent as never;
  };
}

async function finished(call: Call, id: string): Promise<AgentJob> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const started = Date.now();
    const job = await call('job', { id });
    assert.ok(Date.now() - started < 5000, 'job answers at once');
    if (!['queued', 'running'].includes(job.state)) return job;
    assert.ok(Date.now() < deadline, `job ${id} still ${job.state}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** What every transport must do, against a client connected to it; `file` is this transport's own copy. */
function scenario(connect: () => Promise<Client>, file: string) {
  let client: Client;
  let call: Call;
  before(async () => {
    client = await connect();
    call = caller(client);
  });
  after(() => client?.close());

  test('lists exactly the tools of the contract, with their argument schemas', async () => {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), Object.keys(agentTools).sort());
    const check = tools.find((t) => t.name === 'check')!;
    assert.deepEqual(Object.keys(check.inputSchema.properties ?? {}).sort(), ['code', 'path', 'reference']);
    assert.equal(tools.find((t) => t.name === 'apply')!.annotations?.readOnlyHint, false);
    assert.equal(tools.find((t) => t.name === 'check')!.annotations?.readOnlyHint, true);
  });

  test('check: sorry, a hidden axiom and native_decide are not valid; a real proof is', async () => {
    const sorry = await call('check', { code: 'theorem s : 1 = 1 := by\n  sorry\n' });
    assert.equal(sorry.ok, false);
    assert.equal(sorry.declarations[0].status, 'sorry');

    const axiom = await call('check', { code: 'axiom cheat : False\n\ntheorem t : 1 = 2 := cheat.elim\n' });
    assert.equal(axiom.ok, false);
    const t = axiom.declarations.find((d) => d.name === 't')!;
    assert.notEqual(t.status, 'valid');
    assert.ok(axiom.problems.length > 0);

    const native = await call('check', { code: 'theorem n : 2 + 2 = 4 := by native_decide\n' });
    assert.equal(native.ok, false);
    assert.ok(
      native.declarations.some((d) => d.status !== 'valid'),
      JSON.stringify(native.declarations),
    );

    const real = await call('check', { code: 'theorem r (x : Nat) : x + 0 = x := by simp\n' });
    assert.equal(real.ok, true, JSON.stringify(real.problems));
    assert.equal(real.declarations[0].status, 'valid');
    assert.deepEqual(real.declarations[0].axioms, ['Classical.choice', 'Quot.sound', 'propext']);
  });

  test("check: a theorem that gained an include'd hypothesis is reported with it and is not valid", async () => {
    const code = 'section\nvariable (h : 1 = 2)\ninclude h\n\ntheorem bad : 2 = 1 := h.symm\n\nend\n';
    const answer = await call('check', { code });
    const bad = answer.declarations.find((d) => d.name === 'bad')!;
    assert.equal(bad.status, 'rejected', bad.reason);
    assert.deepEqual(bad.elaborated?.gained, ['(h : 1 = 2)']);
    assert.equal(bad.elaborated?.statement, 'theorem bad (h : 1 = 2) : 2 = 1');
    assert.equal(answer.ok, false);
  });

  test('check {path}: a statement changed since the last commit is called out; a reference holds it', async () => {
    const changed = await call('check', { path: 'Changed.lean' });
    assert.equal(changed.declarations[0].status, 'valid');
    assert.equal(changed.declarations[0].statementVsCommit, 'changed');
    assert.equal(changed.declarations[0].committedStatement, 'theorem two : 1 + 1 = 2');
    assert.equal(changed.declarations[0].unchangedSinceCommit, false);
    assert.equal(changed.ok, false);
    const held = await call('check', {
      code: 'theorem two : 2 = 2 := by norm_num\n',
      reference: 'theorem two : 2 = 2 := sorry',
    });
    assert.equal(held.ok, true, JSON.stringify(held.problems));
    const swapped = await call('check', {
      code: 'theorem two : 2 = 2 := by norm_num\n',
      reference: 'theorem two : 1 + 1 = 2 := sorry',
    });
    assert.equal(swapped.declarations[0].statementVsReference, 'changed');
    assert.equal(swapped.ok, false);
  });

  test("check {path}: an unchanged file is the user's (its own notation and macro pass); an edited one is untrusted", async () => {
    const own = await call('check', { path: 'Notation.lean' });
    assert.equal(own.checkedAs, 'user_file');
    assert.equal(own.ok, true, JSON.stringify(own.problems));
    assert.deepEqual(
      own.declarations.map((d) => [d.name, d.status, d.unchangedSinceCommit]),
      [['twice_eq', 'valid', true]],
    );
    assert.ok(own.declarations[0].axioms, 'the user file is still audited');
    const edited = await call('check', { path: 'NotationEdited.lean' });
    assert.equal(edited.checkedAs, 'untrusted');
    assert.equal(edited.ok, false);
    assert.equal(edited.status, 'rejected');
    assert.match(edited.reason, /notation/);
  });

  test('sorries lists the targets with their goals; paths outside the project are refused', async () => {
    const answer = await call('sorries', { path: file });
    assert.equal(answer.targets.length, 1);
    assert.equal(answer.targets[0].declaration, 'algebra_example');
    assert.equal(answer.targets[0].line, 5);
    assert.ok(answer.targets[0].goal?.includes('⊢'), JSON.stringify(answer.targets[0]));
    const outside = await client.callTool({ name: 'sorries', arguments: { path: '/etc' } });
    assert.equal(outside.isError, true);
    const bad = await client.callTool({ name: 'prove', arguments: { path: file } });
    assert.equal(bad.isError, true, 'prove needs a theorem or a line');
  });

  test('prove answers at once with a job that ends proved, without writing the file; apply writes it', async () => {
    const before = readFileSync(join(dir, file), 'utf8');
    const t0 = Date.now();
    const { jobId, theorem } = await call('prove', { path: file, theorem: 'algebra_example' });
    assert.ok(Date.now() - t0 < 5000, 'prove answers at once');
    assert.equal(theorem, 'algebra_example');
    const job = await finished(call, jobId);
    assert.equal(job.state, 'proved', job.problem);
    // every sample's first answer uses a lemma that does not exist; the fix turn's answer is verified
    assert.ok(
      job.attempts.filter((a) => a.turn === 1).every((a) => a.status === 'lean_error'),
      JSON.stringify(job.attempts),
    );
    assert.ok(
      job.attempts.some((a) => a.turn === 2 && a.status === 'valid'),
      JSON.stringify(job.attempts),
    );
    assert.match(job.proof!.body, /linarith/);
    assert.match(job.proof!.replaced, /^\s*by\s+sorry\s*$/, 'the edit replaces the proof after :=');
    assert.equal(readFileSync(join(dir, file), 'utf8'), before, 'proving wrote nothing');

    const applied = (await call('apply', { id: jobId })) as ApplyToolAnswer;
    assert.equal(applied.applied, true, applied.problem);
    const after = readFileSync(join(dir, file), 'utf8');
    assert.ok(!after.includes('sorry') && after.includes('linarith'), after);
    assert.ok(after.startsWith(before.slice(0, before.indexOf(':= by'))), 'the statement is kept');
    const again = (await call('apply', { id: jobId })) as ApplyToolAnswer;
    assert.equal(again.applied, false, 'applied once');
    const checked = await call('check', { path: file });
    assert.equal(checked.declarations[0].status, 'valid');
    assert.equal(checked.declarations[0].statementVsCommit, 'same');
    assert.equal(checked.ok, true, JSON.stringify(checked.problems));
  });

  test("prove on a file an agent edited since its commit: the file's text is checked as model text (filtered), not as the user's", async () => {
    const { jobId } = await call('prove', { path: 'AlgebraEdited.lean', theorem: 'algebra_example' });
    const job = await finished(call, jobId);
    // in a trusted session the agent's notation would be elaborated unfiltered and the fix turn verified
    assert.equal(job.state, 'not_proved', JSON.stringify(job.attempts));
    assert.ok(job.attempts.length > 0, JSON.stringify(job));
    for (const a of job.attempts) {
      assert.notEqual(a.status, 'valid', JSON.stringify(a));
      if (a.status === 'rejected') assert.match(a.reason, /notation/i);
    }
    assert.ok(
      job.attempts.some((a) => a.status === 'rejected'),
      JSON.stringify(job.attempts),
    );
  });

  test('repair picks the first theorem Lean rejects and returns a job; a file with none is refused', async () => {
    const broken = 'theorem fine : 1 = 1 := rfl\n\ntheorem broken (x : Nat) : x = x := by\n  exact bogus_refl x\n';
    writeFileSync(join(dir, `Broken${file}`), broken);
    const { jobId, theorem } = await call('repair', { path: `Broken${file}` });
    assert.equal(theorem, 'broken');
    const job = await finished(call, jobId);
    assert.equal(job.kind, 'repair');
    assert.ok(['not_proved', 'proved', 'failed'].includes(job.state), job.state);
    assert.equal(readFileSync(join(dir, `Broken${file}`), 'utf8'), broken, 'repairing wrote nothing');
    const none = await client.callTool({ name: 'repair', arguments: { path: 'Changed.lean' } });
    assert.equal(none.isError, true);
    assert.match(JSON.stringify(none.content), /nothing to repair/);
  });

  test('cancel stops a job; an unknown job is an error', async () => {
    writeFileSync(join(dir, `Cancel${file}`), algebra);
    const { jobId } = await call('prove', { path: `Cancel${file}`, line: 5 });
    const cancelled = await call('cancel', { id: jobId });
    assert.ok(cancelled.cancelled);
    const job = await finished(call, jobId);
    assert.equal(job.state, 'cancelled');
    const unknown = await client.callTool({ name: 'job', arguments: { id: 'no-such-job' } });
    assert.equal(unknown.isError, true);
  });
}

const childEnv = (): Record<string, string> => ({
  ...(Object.fromEntries(Object.entries(process.env).filter(([, v]) => v !== undefined)) as Record<string, string>),
  KIMINA_HOME: join(dir, '.kimina'),
  KIMINA_LEAN_PROJECT: dir,
  KIMINA_MAX_REPLS: '1',
  KIMINA_SANDBOX: 'none',
});

describe('kimina mcp over stdio', () => {
  scenario(async () => {
    const client = new Client({ name: 'kimina-test', version: '1' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: ['--import', 'tsx', join(repo, 'backend', 'cli.ts'), 'mcp', '--demo', '--root', dir],
        cwd: repo,
        env: childEnv(),
        stderr: 'ignore',
      }),
    );
    return client;
  }, 'StdioAlgebra.lean');
});

describe('/mcp on kimina serve over HTTP, with the token', () => {
  let serving: Serving;
  const token = 'mcp-test-token';
  scenario(async () => {
    const settings = readSettings({ ...childEnv(), KIMINA_DB: ':memory:' });
    serving = await startServing(openApp({ settings, demo: true, log: () => {} }), {
      host: '127.0.0.1',
      port: 0,
      token,
    });
    const client = new Client({ name: 'kimina-test', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${serving.url}/mcp`), {
        requestInit: { headers: { Authorization: `Bearer ${token}` } },
      }),
    );
    return client;
  }, 'HttpAlgebra.lean');

  test('without the token, or from a web page, /mcp is refused', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
    const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' };
    assert.equal((await fetch(`${serving.url}/mcp`, { method: 'POST', headers, body })).status, 401);
    const page = await fetch(`${serving.url}/mcp`, {
      method: 'POST',
      headers: { ...headers, Authorization: `Bearer ${token}`, Origin: 'https://evil.example' },
      body,
    });
    assert.equal(page.status, 403);
    const stream = await fetch(`${serving.url}/mcp`, { headers: { Authorization: `Bearer ${token}` } });
    assert.equal(stream.status, 405, 'no held connection');
  });

  after(() => serving?.stop());
});
