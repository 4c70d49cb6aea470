// The language-server face with the services in its own process: the real prove loop, the ONNX engine and
// the verifier pool, fed with TEST DOUBLES through the KIMINA_* settings the extension passes: the scripted
// ONNX model (backend/demo/models: its first answer uses a lemma that does not exist, its fix-turn answer is
// correct) and the stand-in REPL (backend/demo/stand-in-repl: text rules, not Lean).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type EditorProveResult, lspMethods } from '../../backend/protocol';
import { createInProcessService } from '../../backend/editor/inProcess';
import { openApp } from '../../backend/app/app';
import { applyEdit } from '../../backend/editor/splice';
import { offsetAt } from '../../backend/editor/leanSource';
import { writeScriptedModel, ALGEBRA_STATEMENT } from '../../backend/demo/models/scriptedModel';
import { standInReplEnv } from '../../backend/demo/stand-in-repl/index';
import { connectFace, settledStatus, type FaceClient } from './faceClient';

const text = `import Mathlib

/-- Solve 2x + 3 = 11. -/
${ALGEBRA_STATEMENT} := by
  sorry
`;

let dir: string;
let conn: FaceClient;
const saved = { ...process.env };

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kimina-inprocess-'));
  writeScriptedModel(join(dir, 'model'), { variant: 'fix' });
  Object.assign(process.env, standInReplEnv(), {
    KIMINA_ENGINE: 'onnx',
    KIMINA_MODEL: join(dir, 'model'),
    KIMINA_DEVICE: 'cpu',
    KIMINA_THREADS: '1',
    KIMINA_SANDBOX: 'none',
    KIMINA_REPL_MEMORY_MB: '0',
    KIMINA_MAX_REPLS: '1',
    KIMINA_LEAN_PROJECT: dir,
    KIMINA_DB: join(dir, 'kimina.db'),
    KIMINA_HOME: dir,
    KIMINA_ROWS_AT_ONCE: '1',
  });
  conn = await connectFace(() => createInProcessService(openApp({ log: () => {} }), () => {}));
});

after(async () => {
  await conn?.close();
  process.env = saved;
  rmSync(dir, { recursive: true, force: true });
});

test('status names the in-process engine and model, and how many samples decode at once', async () => {
  const status = await settledStatus(conn.client);
  assert.equal(status.state, 'ready', status.detail);
  assert.equal(status.backend, 'in-process');
  assert.equal(status.engine, 'onnx');
  // Calibrated at first use (the scripted model decodes on the C API path); kimina.rowsAtOnce (KIMINA_ROWS_AT_ONCE)
  // reaches the engine and sets the rows.
  assert.match(
    status.schedule ?? '',
    /^calibrated [\d.]+ ms \+ [\d.]+ ms per further row .* a step: 1 row at once \(kimina\.rowsAtOnce\)/,
  );
  assert.ok(status.detail?.includes(`; ${status.schedule}`), status.detail);
});

test('prove in process: turn 1 fails in the stand-in Lean, the fix turn is verified, the edit splices it in', async () => {
  const result = (await conn.client.sendRequest(lspMethods.prove, {
    id: 'inproc-1',
    code: text,
    position: { line: 4, character: 2 },
    samples: 1,
  })) as EditorProveResult;
  assert.equal(result.status, 'proved');
  assert.deepEqual(
    result.attempts.map((a) => [a.turn, a.verdict?.status]),
    [
      [1, 'lean_error'],
      [2, 'valid'],
    ],
  );
  assert.ok(
    conn.events.some((e) => e.type === 'think' && e.id === 'inproc-1'),
    'think deltas stream',
  );
  const updated = applyEdit(text, result.edit!, (l, c) => offsetAt(text, l, c));
  assert.match(updated, /x = 4 := by\n {2}have h₁ : 2 \* x = 8 := by linarith\n {2}linarith\n$/);
});

test("prove on a file: file: URI → checked in the file's own Lean project (its REPL starts there); untitled → the app's", async () => {
  const project = join(dir, 'own-project');
  mkdirSync(join(project, 'Own'), { recursive: true });
  writeFileSync(join(project, 'lakefile.toml'), 'name = "Own"\n');
  writeFileSync(join(project, 'lean-toolchain'), 'leanprover/lean4:v4.29.0\n');
  const file = join(project, 'Own', 'Basic.lean');
  // the stand-in REPL answers `stand_in_write_probe` by writing this file in the folder it runs in
  // (backend/demo/stand-in-repl/README.md); above the theorem it is the file's prefix, elaborated in the session:
  // where the file appears says which project's REPL checked the request
  const probed = text.replace('\n\n', '\n\n-- stand_in_write_probe\n\n');
  const mark = 'stand-in-write-probe.txt';
  writeFileSync(file, probed);
  const prove = (id: string, uri: string) =>
    conn.client.sendRequest(lspMethods.prove, {
      id,
      code: probed,
      uri,
      position: { line: 6, character: 2 },
      samples: 1,
    }) as Promise<EditorProveResult>;

  const untitled = await prove('inproc-untitled', 'untitled:Untitled-1');
  assert.equal(untitled.status, 'proved', untitled.problem);
  assert.ok(existsSync(join(dir, mark)), "an untitled document is checked in the app's project, as before");
  assert.ok(!existsSync(join(project, mark)));

  const own = await prove('inproc-own-project', pathToFileURL(file).href);
  assert.equal(own.status, 'proved', own.problem);
  assert.ok(existsSync(join(project, mark)), "the file's own project ran the check");
});
