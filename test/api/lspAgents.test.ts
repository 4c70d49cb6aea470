// The agent tools on the editor's backend (the language-server face, as `kimina lsp` wires them): its own MCP
// server on loopback with a random token (what VS Code's MCP server definition provider points at), single tool
// calls (the language-model tools), and the job list with its notifications (the Proof view). TEST DOUBLES: the
// scripted ONNX model and the stand-in REPL (`--demo` parts of backend/demo).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { agentTools, lspMethods, type AgentJob, type CheckToolAnswer, type JobStarted } from '../../backend/protocol';
import { openApp, type App } from '../../backend/app/app';
import { createInProcessService } from '../../backend/editor/inProcess';
import { readSettings } from '../../backend/settings/settings';
import { ALGEBRA_STATEMENT } from '../../backend/demo/models/scriptedModel';
import { connectFace, faceRequest, type FaceClient } from './faceClient';

let dir: string;
let lasting: App;
let conn: FaceClient;
const notified: AgentJob[] = [];

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'kimina-lsp-agents-'));
  writeFileSync(join(dir, 'Algebra.lean'), `import Mathlib\n\n${ALGEBRA_STATEMENT} := by\n  sorry\n`);
  const settings = readSettings({
    KIMINA_HOME: dir,
    KIMINA_DB: ':memory:',
    KIMINA_LEAN_PROJECT: dir,
    KIMINA_MAX_REPLS: '1',
  });
  lasting = openApp({ settings, demo: true, log: () => {} });
  conn = await connectFace(() => createInProcessService(openApp({ settings, demo: true, log: () => {} }), () => {}), {
    agents: (service, roots) => lasting.agentsOver(service, roots),
    rootUri: pathToFileURL(dir).href,
    refreshMs: 0,
  });
  conn.client.onNotification(lspMethods.agentJob, (job: AgentJob) => {
    notified.push(job);
  });
});

after(async () => {
  await conn?.close();
  await lasting?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("the editor backend's MCP server: loopback, its own token, the same tools", async () => {
  const endpoint = (await faceRequest(conn.client, lspMethods.agentEndpoint, {}))!;
  assert.match(endpoint.url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  assert.ok(endpoint.token.length >= 32);
  const again = (await faceRequest(conn.client, lspMethods.agentEndpoint, {}))!;
  assert.deepEqual(again, endpoint, 'one server per backend');
  const client = new Client({ name: 'vscode-test', version: '1' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(endpoint.url), {
      requestInit: { headers: { Authorization: `Bearer ${endpoint.token}` } },
    }),
  );
  try {
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), Object.keys(agentTools).sort());
    const result = await client.callTool({ name: 'check', arguments: { path: 'Algebra.lean' } });
    assert.equal((result.structuredContent as unknown as CheckToolAnswer).declarations[0].status, 'sorry');
  } finally {
    await client.close();
  }
  const refused = await fetch(endpoint.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  assert.equal(refused.status, 401);
});

test('language-model tools: check answers a verdict; prove starts a job the job list and notifications show', async () => {
  const checked = (await faceRequest(conn.client, lspMethods.agentTool, {
    name: 'check',
    arguments: { code: 'theorem r (x : Nat) : x + 0 = x := by simp\n' } as never,
  })) as CheckToolAnswer;
  assert.equal(checked.ok, true, JSON.stringify(checked.problems));
  await assert.rejects(
    faceRequest(conn.client, lspMethods.agentTool, { name: 'check', arguments: {} as never }),
    /exactly one of 'code', 'path'/,
  );

  const before = readFileSync(join(dir, 'Algebra.lean'), 'utf8');
  const { jobId } = (await faceRequest(conn.client, lspMethods.agentTool, {
    name: 'prove',
    arguments: { path: 'Algebra.lean', theorem: 'algebra_example' } as never,
  })) as JobStarted;
  let job: AgentJob | undefined;
  for (let i = 0; i < 600; i++) {
    job = (await faceRequest(conn.client, lspMethods.agentTool, {
      name: 'job',
      arguments: { id: jobId } as never,
    })) as AgentJob;
    if (!['queued', 'running'].includes(job.state)) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(job?.state, 'proved', job?.problem);
  assert.equal(readFileSync(join(dir, 'Algebra.lean'), 'utf8'), before, 'nothing written');
  const { jobs } = await faceRequest(conn.client, lspMethods.agentJobs, {});
  assert.equal(jobs[0].id, jobId);
  assert.equal(jobs[0].client, 'vscode-lm');
  const states = notified.filter((j) => j.id === jobId).map((j) => j.state);
  assert.ok(states.includes('running') && states.at(-1) === 'proved', states.join(' → '));
});
