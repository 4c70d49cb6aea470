// The agent tools over two workspace folders without a model or Lean: a prove service double that records the file
// each check is made for (`origin.file`) and answers every check valid, its proofs ending not proved (the test then
// records a verified proof in the job, as a proved run would). A job applies into the file it was started on, every
// check of a file runs in that file's project, and a client uses only its own jobs.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openDb } from '../../backend/store/db';
import { AgentJobStore } from '../../backend/store/agentJobs';
import { AgentJobs } from '../../backend/editor/agentJobs';
import { agentToolbox } from '../../backend/editor/agentToolbox';
import { RunningProofs } from '../../backend/prover/running';
import type { ProveService } from '../../backend/editor/service';
import type { AgentJob } from '../../backend/protocol';

const text = 'theorem foo : 1 = 1 := by\n  sorry\n';
const ws = mkdtempSync(join(tmpdir(), 'kimina-toolbox-'));
const a = join(ws, 'a');
const b = join(ws, 'b');
mkdirSync(a);
mkdirSync(b);
// the same file name in both folders: only the one in b is the agent's
writeFileSync(join(a, 'Foo.lean'), text);
writeFileSync(join(b, 'Foo.lean'), text);
after(() => rmSync(ws, { recursive: true, force: true }));

function setup() {
  const checkedFor: (string | undefined)[] = [];
  const valid = { verdict: { status: 'valid' as const, reason: '', messages: [], sorries: [], time: 0 } };
  const service: ProveService = {
    kind: 'in-process',
    describe: async () => ({}),
    check: async (_code, _signal, origin) => {
      checkedFor.push(origin?.file);
      return valid;
    },
    prove: async (req) => ({ id: req.id!, status: 'not_proved', proof: null, attempts: [] }),
    close: async () => {},
  };
  const db = openDb(':memory:');
  const store = new AgentJobStore(db);
  const jobs = new AgentJobs({
    store,
    proofs: new RunningProofs(),
    service: async () => service,
    perClient: 4,
    keepHours: 1,
  });
  const tools = agentToolbox({
    roots: () => [a, b],
    check: (code, _client, signal, file) => service.check(code, signal, file ? { file } : undefined),
    service: async () => service,
    jobs,
    allowedAxioms: ['propext', 'Classical.choice', 'Quot.sound'],
    childEnv: process.env,
  });
  const done = async (id: string): Promise<AgentJob> => {
    for (;;) {
      const job = jobs.get(id)!;
      if (!['queued', 'running'].includes(job.state)) return job;
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  /** Records the verified proof a proved run of `foo` would: `sorry` replaced by `rfl`. */
  const proved = (id: string) =>
    store.update(id, {
      state: 'proved',
      proof: {
        declaration: 'foo',
        body: 'rfl',
        edit: { range: { start: { line: 0, character: 23 }, end: { line: 1, character: 7 } }, newText: 'by\n  rfl' },
        replaced: 'by\n  sorry',
        mode: 'theorem',
      },
    });
  const close = async () => {
    await jobs.close();
    db.close();
  };
  return { tools, checkedFor, done, proved, close };
}

test("apply writes into the file the job was started on, not the first folder's file of the same name", async () => {
  const t = setup();
  const fooB = join(b, 'Foo.lean');
  const { jobId } = await t.tools.prove({ path: fooB, theorem: 'foo' }, 'mcp:A');
  const job = await t.done(jobId);
  assert.equal(job.file, fooB, 'the job keeps the absolute path');
  assert.equal(
    job.path,
    fooB,
    "a file outside the first folder is shown by its absolute path (a relative one names a's)",
  );
  t.proved(jobId);
  t.checkedFor.length = 0;
  const answer = await t.tools.apply({ id: jobId }, 'mcp:A');
  assert.ok(answer.applied, JSON.stringify(answer));
  assert.equal(readFileSync(join(a, 'Foo.lean'), 'utf8'), text, "a's Foo.lean is untouched");
  assert.match(readFileSync(fooB, 'utf8'), /:= by\n {2}rfl/, "b's Foo.lean has the proof");
  assert.ok(t.checkedFor.length > 0, 'apply re-checked the proof');
  assert.deepEqual(new Set(t.checkedFor), new Set([fooB]), "apply's re-check ran in b's project");
  writeFileSync(fooB, text);
  await t.close();
});

test("check {path}, sorries and repair's first-broken search check each file in its own project", async () => {
  const t = setup();
  const fooB = join(b, 'Foo.lean');
  await t.tools.check({ path: fooB }, 'mcp:A');
  assert.deepEqual(t.checkedFor, [fooB], 'check {path}');
  t.checkedFor.length = 0;
  const inB = await t.tools.sorries({ path: b }, 'mcp:A');
  assert.deepEqual(t.checkedFor, [fooB], 'sorries');
  assert.equal(inB.targets[0].path, fooB, 'a sorry outside the first folder is shown by the path that finds it again');
  const inA = await t.tools.sorries({ path: a }, 'mcp:A');
  assert.equal(inA.targets[0].path, 'Foo.lean', "the first folder's files stay relative");
  t.checkedFor.length = 0;
  // every check answers valid: nothing to repair, but the search checked b's file in b's project
  await assert.rejects(t.tools.repair({ path: fooB }, 'mcp:A'), /nothing to repair/);
  assert.deepEqual(t.checkedFor, [fooB], "repair's first-broken search");
  t.checkedFor.length = 0;
  await t.tools.check({ code: text }, 'mcp:A');
  assert.deepEqual(t.checkedFor, [undefined], 'a snippet names no file');
  await t.close();
});

test("job, cancel and apply answer only the client that started the job; another's is refused", async () => {
  const t = setup();
  const { jobId } = await t.tools.prove({ path: join(a, 'Foo.lean'), theorem: 'foo' }, 'mcp:A|one-name');
  await t.done(jobId);
  t.proved(jobId);
  const other = /belongs to another client/;
  await assert.rejects(t.tools.job({ id: jobId }, 'mcp:B'), other);
  await assert.rejects(t.tools.cancel({ id: jobId }, 'mcp:B'), other);
  await assert.rejects(t.tools.apply({ id: jobId }, 'mcp:B'), other);
  assert.equal(readFileSync(join(a, 'Foo.lean'), 'utf8'), text, 'nothing written for another client');
  assert.equal((await t.tools.job({ id: jobId }, 'mcp:A|other-name')).state, 'proved', 'the same principal, any label');
  await assert.rejects(t.tools.job({ id: 'nope' }, 'mcp:A'), /no job nope/);
  await t.close();
});
