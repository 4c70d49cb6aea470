// The Proof view lists agents' proof jobs: kept apart from the run (a new run does not clear them, the run's state
// ignores them), sent when the view opens and on every change. Runs on the vscode TEST DOUBLE (vscodeDouble.ts).
import './useVscodeDouble';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AgentJob } from '../../backend/protocol';
import { emptyState, reduce } from '../../media/proofViewState';
import { double } from './vscodeDouble';
import { extensionParts, viewMessages } from './parts';

const job = (state: AgentJob['state']): AgentJob => ({
  id: 'j1',
  kind: 'prove',
  client: 'mcp:127.0.0.1',
  path: 'Algebra.lean',
  theorem: 'algebra_example',
  state,
  createdAt: '2026-12-06T00:00:00.000Z',
  attempts: [],
});

test("agents' jobs reach the Proof view when it opens and on each change, beside the run", () => {
  const { view } = extensionParts();
  view.showAgentJobs([job('running')]);
  assert.deepEqual(viewMessages(), [], 'no panel yet: nothing posted');
  view.begin({ type: 'start', id: 'r1', title: 'Proving t', mode: 'theorem', file: 'Basic.lean', startedAt: 0 });
  double.fromView['kimina.proofView']({ type: 'ready' });
  const lists = () => viewMessages().filter((m) => m.type === 'agentJobs') as unknown as { jobs: AgentJob[] }[];
  assert.equal(lists().at(-1)?.jobs[0].state, 'running', 'replayed when the view is ready');
  view.showAgentJobs([job('proved')]);
  assert.equal(lists().at(-1)?.jobs[0].state, 'proved');
  view.begin({ type: 'start', id: 'r2', title: 'Proving u', mode: 'theorem', file: 'Basic.lean', startedAt: 1 });
  double.fromView['kimina.proofView']({ type: 'ready' });
  assert.equal(lists().at(-1)?.jobs[0].state, 'proved', 'a new run keeps the list');
  const state = reduce(emptyState(), { type: 'agentJobs', jobs: [job('proved')] });
  assert.deepEqual(state, emptyState(), "the run's state ignores the list");
  view.dispose();
});
