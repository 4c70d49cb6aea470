// The repair requests of the language-server face over real JSON-RPC streams: broken declarations from the
// client's diagnostics (vscode-lean4's, simulated) or from the backend's own check, a Repair All plan kept in
// SQLite, a repair as kimina/prove with mode 'repair', and the outcome recorded. TEST DOUBLES: the stand-in REPL
// through the real verifier (Lean), a scripted engine (the model: repairDoubles.ts).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import type { MessageConnection } from 'vscode-jsonrpc/node';
import {
  type BrokenDeclarationsResult,
  type EditorProveResult,
  type RepairPlanResult,
  lspMethods,
} from '../../backend/protocol';
import { prove } from '../../backend/prover/prove';
import type { ProveService } from '../../backend/editor/service';
import { openDb } from '../../backend/store/db';
import { RepairStore } from '../../backend/store/repairs';
import { ScriptedEngine } from '../prover/doubles';
import { standInVerifier, type StandInSetup } from '../lean/standInVerifier';
import { BROKEN_FILE, repairAnswer } from '../editor/repairDoubles';
import { connectFace, type FaceClient } from './faceClient';

const uri = 'file:///work/Ratios.lean';
let lean: StandInSetup;
let conn: FaceClient;
let client: MessageConnection;
const engine = new ScriptedEngine((c) => repairAnswer(c));
/** The file each check was made for (`origin.file`): every check of a document runs in its own Lean project. */
const checkedFor: (string | undefined)[] = [];

before(async () => {
  lean = standInVerifier();
  const deps = { engine, verifier: lean.verifier };
  const service: ProveService = {
    kind: 'in-process',
    describe: async () => ({}),
    prove: (req, onEvent, signal) => prove(req, deps, onEvent, signal),
    check: (code, signal, origin) => {
      checkedFor.push(origin?.file);
      return lean.verifier.check(code, { signal });
    },
    close: async () => {},
  };
  const db = openDb(':memory:');
  conn = await connectFace(async () => service, { repairStore: () => new RepairStore(db) });
  ({ client } = conn);
});

after(async () => {
  await conn.close();
  await lean.pool.close();
});

test("kimina/repair/broken: from the client's diagnostics without a check, else from the backend's check", async () => {
  const checksBefore = lean.log().length;
  const fromClient = (await client.sendRequest(lspMethods.brokenDeclarations, {
    uri,
    code: BROKEN_FILE,
    diagnostics: [
      {
        range: { start: { line: 10, character: 70 }, end: { line: 10, character: 72 } },
        severity: 'error',
        message: 'unsolved goals',
        source: 'Lean 4',
      },
    ],
  })) as BrokenDeclarationsResult;
  assert.equal(fromClient.source, 'diagnostics');
  assert.deepEqual(
    fromClient.declarations.map((d) => d.name),
    ['ratio_three'],
  );
  assert.equal(lean.log().length, checksBefore, 'no Lean check for diagnostics the client has');
  const checked = (await client.sendRequest(lspMethods.brokenDeclarations, {
    uri,
    code: BROKEN_FILE,
  })) as BrokenDeclarationsResult;
  assert.equal(checked.source, 'check');
  assert.ok(lean.log().length > checksBefore, 'the backend checked the document itself');
  assert.equal(checked.declarations.length, 3);
  assert.ok(checked.diagnostics.some((d) => d.severity === 'warning' && /has been deprecated/.test(d.message)));
});

test('Repair All over LSP: plan (kept in SQLite), repair one with mode repair, record it, list the unfinished job', async () => {
  const { job } = (await client.sendRequest(lspMethods.repairPlan, {
    scope: 'Ratios.lean',
    files: [{ uri, code: BROKEN_FILE }],
  })) as RepairPlanResult;
  assert.deepEqual(
    job.items.map((i) => [i.declaration, i.line, i.status]),
    [
      ['ratio_one', 2, 'pending'],
      ['ratio_two', 6, 'pending'],
      ['ratio_three', 10, 'pending'],
    ],
  );
  const item = job.items[1];
  const result = (await client.sendRequest(lspMethods.prove, {
    id: 'repair-lsp-1',
    uri,
    code: BROKEN_FILE,
    position: { line: item.line, character: 0 },
    mode: 'repair',
    samples: 1,
  })) as EditorProveResult;
  assert.equal(result.status, 'proved');
  assert.equal(result.mode, 'repair');
  assert.equal(result.declaration?.name, 'ratio_two');
  assert.ok(result.edit?.newText.includes('div_le_iff₀ hc'));
  const updated = await client.sendRequest(lspMethods.repairUpdate, {
    jobId: job.id,
    itemId: item.id,
    status: 'repaired',
    reason: 'verified in place',
    edit: result.edit,
    replaced: ' by\n  rw [div_le_iff hc]\n  nlinarith',
  });
  assert.equal((updated as typeof job).items[1].status, 'repaired');
  const { jobs } = (await client.sendRequest(lspMethods.repairJobs, {})) as { jobs: (typeof job)[] };
  assert.equal(jobs[0].id, job.id);
  assert.deepEqual(jobs[0].items[1].edit, result.edit);
  const cancelled = (await client.sendRequest(lspMethods.repairJob, {
    jobId: job.id,
    state: 'cancelled',
  })) as typeof job;
  assert.equal(cancelled.state, 'cancelled');
  await assert.rejects(client.sendRequest(lspMethods.repairJob, { jobId: 'nope' }), /no repair job nope/);
});

test("the backend's checks of a document (broken declarations, Accept's re-check) run in that file's project", async () => {
  checkedFor.length = 0;
  await client.sendRequest(lspMethods.brokenDeclarations, { uri, code: BROKEN_FILE });
  const text = 'theorem t : 1 = 1 := by\n  sorry\n';
  await client.sendRequest(lspMethods.recheckProposal, {
    uri,
    code: text,
    edit: { range: { start: { line: 1, character: 2 }, end: { line: 1, character: 7 } }, newText: 'rfl' },
    declarationLine: 0,
  });
  assert.ok(checkedFor.length >= 2, 'both requests checked with Lean');
  assert.deepEqual(new Set(checkedFor), new Set(['/work/Ratios.lean']), 'each check names the document as its origin');
});
