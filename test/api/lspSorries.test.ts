// Prove All Sorries over a vendored project (files of Mathematics in Lean, test/fixtures/real-lean), at the level
// of the language server over real JSON-RPC streams: `kimina/sorries/start` plans one item per sorry in the Repair
// All queue (SQLite file), the backend proves them in the background (no request of the client drives them), a
// restart of the backend in the middle resumes the job from the database, and it ends with every sorry judged and
// the verified ones as proposals (edit + the text it replaces); no file is written.
// TEST DOUBLES: the stand-in REPL through the real verifier (Lean; its sorry goal is the expected type), a
// scripted engine (the model: it restates the lemma it is shown and answers `simp`).
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type RepairJob, type RepairPlanResult, type SorriesProgress, lspMethods } from '../../backend/protocol';
import { prove } from '../../backend/prover/prove';
import type { ProveService } from '../../backend/editor/service';
import { openDb } from '../../backend/store/db';
import { RepairStore } from '../../backend/store/repairs';
import { ScriptedEngine } from '../prover/doubles';
import { standInVerifier, type StandInSetup } from '../lean/standInVerifier';
import { connectFace, type FaceClient } from './faceClient';

const corpus = join(__dirname, '..', 'fixtures', 'real-lean', 'mathematics_in_lean');
const FILES = [
  'MIL/Common.lean',
  'MIL/C01_Introduction/S02_Overview.lean',
  'MIL/C05_Elementary_Number_Theory/S04_More_Induction.lean',
  'MIL/C07_Structures/S01_Structures.lean',
];
const dir = mkdtempSync(join(tmpdir(), 'kimina-sorries-'));
for (const f of FILES) cpSync(join(corpus, f), join(dir, f), { recursive: true });
const uris = FILES.map((f) => pathToFileURL(join(dir, f)).href);
const before = FILES.map((f) => readFileSync(join(dir, f), 'utf8'));
const dbFile = join(dir, 'kimina.db');

/** The scripted answer: the lemma of the prompt's formal statement, proved by `simp`, in Kimina's format. */
function lemmaAnswer(prompt: string): string {
  const statement = prompt.slice(prompt.indexOf('```lean4\n') + 9, prompt.lastIndexOf('\n```'));
  const lemma = statement.slice(statement.lastIndexOf('theorem '));
  return `<think>\nTry it.\n\n\`\`\`tactics\n${lemma}\n\`\`\`\n\nthen\n\n\`\`\`tactics\n  simp\n\`\`\`\n</think>\nDone.\n\n\`\`\`lean4\nimport Mathlib\n\n${lemma}\n  simp\n\`\`\``;
}

const setups: StandInSetup[] = [];
/** One backend: its own services over the same SQLite file (a restart opens it again). */
async function backend(delayMs: number): Promise<{ face: FaceClient; progress: SorriesProgress[] }> {
  const lean = standInVerifier();
  setups.push(lean);
  const engine = new ScriptedEngine((c) => lemmaAnswer(c[1].content), undefined, 40, delayMs);
  const service: ProveService = {
    kind: 'in-process',
    describe: async () => ({}),
    prove: (req, onEvent, signal) => prove(req, { engine, verifier: lean.verifier }, onEvent, signal),
    check: (code, signal) => lean.verifier.check(code, { signal }),
    close: async () => {},
  };
  const db = openDb(dbFile);
  const face = await connectFace(async () => service, { repairStore: () => new RepairStore(db) });
  const progress: SorriesProgress[] = [];
  face.client.onNotification(lspMethods.sorriesProgress, (p: SorriesProgress) => {
    progress.push(p);
  });
  return { face, progress };
}

async function until(what: string, ok: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

after(async () => {
  for (const s of setups) await s.pool.close();
  rmSync(dir, { recursive: true, force: true });
});

test(
  'Prove All Sorries on a project: background, survives a restart, ends with proposals',
  { timeout: 180_000 },
  async () => {
    const first = await backend(5);
    const { job } = (await first.face.client.sendRequest(lspMethods.sorriesStart, {
      scope: 'the workspace',
      files: uris.map((uri) => ({ uri })),
      samples: 1,
      fixTurns: 0,
    })) as RepairPlanResult;
    assert.equal(job.kind, 'sorries');
    const expected = before.reduce((n, t) => n + (t.match(/(?<![\w.'])sorry(?![\w'])/g) ?? []).length, 0);
    assert.equal(job.items.length, expected, 'one item per sorry of the project');
    assert.ok(job.items.length >= 6);
    assert.ok(
      job.items.some((i) => i.declaration === 'smul'),
      "a sorry in a def is an item (MIL's smul)",
    );
    // the backend works on its own: the first item ends without any further request
    await until('the first item', () => first.progress.some((p) => p.item));
    await first.face.close(); // the backend stops in the middle of the job

    const left = new RepairStore(openDb(dbFile)).job(job.id)!;
    assert.equal(left.state, 'running');
    const pendingAtRestart = left.items.filter((i) => i.status === 'pending').length;
    assert.ok(pendingAtRestart > 0 && pendingAtRestart < job.items.length, 'stopped part-way');

    const second = await backend(0); // restarted: it resumes the job from SQLite, reading the files from disk
    await until('the job to end', () => second.progress.some((p) => !p.item && p.job.id === job.id), 150_000);
    const done = second.progress.at(-1)!.job;
    assert.equal(done.state, 'done');
    assert.ok(
      done.items.every((i) => i.status !== 'pending'),
      'every sorry was judged',
    );
    // a structure declared in a namespace (`C06S01.Point`) is audited by its full name like any constant
    const audits = done.items.filter((i) => /Could not audit|Unknown constant/.test(i.reason ?? ''));
    assert.deepEqual(
      audits.map((i) => [i.declaration, i.reason]),
      [],
    );
    const proposals = done.items.filter((i) => i.status === 'repaired');
    assert.ok(proposals.length > 0, JSON.stringify(done.items.map((i) => [i.declaration, i.status, i.reason])));
    for (const p of proposals) {
      assert.ok(p.edit && p.replaced !== undefined, 'a proposal carries its edit and the text it replaces');
      assert.match(p.replaced!, /sorry/);
    }
    // the unfinished-jobs list still shows the job while its proposals wait for review
    const { jobs } = (await second.face.client.sendRequest(lspMethods.repairJobs, {})) as { jobs: RepairJob[] };
    assert.ok(jobs.some((j) => j.id === job.id));
    // never writing unreviewed
    FILES.forEach((f, k) => assert.equal(readFileSync(join(dir, f), 'utf8'), before[k]));
    await second.face.close();
  },
);

test(
  'a Prove All Sorries job is cancelled with kimina/repair/job; the item in flight stays pending',
  { timeout: 60_000 },
  async () => {
    const b = await backend(30);
    const { job } = (await b.face.client.sendRequest(lspMethods.sorriesStart, {
      scope: 'S01_Structures',
      files: [{ uri: uris[3] }],
      samples: 1,
      fixTurns: 0,
    })) as RepairPlanResult;
    await new Promise((r) => setTimeout(r, 200));
    const cancelled = (await b.face.client.sendRequest(lspMethods.repairJob, {
      jobId: job.id,
      state: 'cancelled',
    })) as RepairJob;
    assert.equal(cancelled.state, 'cancelled');
    await until('the job to stop', () => b.progress.some((p) => !p.item && p.job.id === job.id));
    const after_ = new RepairStore(openDb(dbFile)).job(job.id)!;
    assert.equal(after_.state, 'cancelled');
    assert.ok(
      after_.items.some((i) => i.status === 'pending'),
      'the rest stays pending',
    );
    await b.face.close();
  },
);
