// The goal at the cursor from the Lean 4 extension: the request the Proof view's host sends through
// vscode-lean4's exports. TEST DOUBLE: an object with the shape of vscode-lean4's `Exports` (5a25e6a,
// vscode-lean4/src/exports.ts, utils/clientProvider.ts getActiveClient, leanclient.ts sendRequest) whose
// client answers `$/lean/plainGoal` as Lean's server does (lean4-infoview-api/src/lspTypes.ts PlainGoal).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { type Lean4Exports, plainGoalAt, plainGoalMethod } from '../../extension/leanGoal';
import { emptyState, goalHeading, reduce, viewTexts } from '../../media/proofViewState';

function lean4Double(answer: (method: string, params: unknown) => Promise<unknown>, running = true) {
  const calls: { method: string; params: unknown }[] = [];
  const exports: Lean4Exports = {
    lean4EnabledFeatures: Promise.resolve({
      clientProvider: {
        getActiveClient: () =>
          running
            ? {
                sendRequest: (method: string, params: unknown) => {
                  calls.push({ method, params });
                  return answer(method, params);
                },
              }
            : undefined,
      },
    }),
  };
  return { exports, calls };
}

const uri = 'file:///work/Algebra.lean';
const goal = { rendered: '```lean\nx : ℝ\n⊢ x = 4\n```', goals: ['x : ℝ\n⊢ x = 4'] };

test('asks $/lean/plainGoal with the document and the LSP position, and returns its goals', async () => {
  const { exports, calls } = lean4Double(async () => goal);
  assert.deepEqual(await plainGoalAt(exports, uri, { line: 6, character: 2 }), goal);
  assert.deepEqual(calls, [
    { method: plainGoalMethod, params: { textDocument: { uri }, position: { line: 6, character: 2 } } },
  ]);
  assert.equal(plainGoalMethod, '$/lean/plainGoal');
});

test('no running client, no goal there, no connection or no answer in time: null, never an error', async () => {
  assert.equal(await plainGoalAt(lean4Double(async () => goal, false).exports, uri, { line: 0, character: 0 }), null);
  assert.equal(await plainGoalAt(lean4Double(async () => null).exports, uri, { line: 0, character: 0 }), null);
  // leanclient.ts rejects with this string when the server is not running
  const offline = lean4Double(() => Promise.reject('No connection to Lean'));
  assert.equal(await plainGoalAt(offline.exports, uri, { line: 0, character: 0 }), null);
  const silent = lean4Double(() => new Promise(() => {}));
  assert.equal(await plainGoalAt(silent.exports, uri, { line: 0, character: 0 }, 50), null);
  const garbage = lean4Double(async () => ({ goals: [1, 2] }));
  assert.equal(await plainGoalAt(garbage.exports, uri, { line: 0, character: 0 }), null);
});

test('the Proof view shows the goal with where it is and who reported it', () => {
  const s = [
    { type: 'start' as const, id: 'p', title: 'Prove', mode: 'theorem' as const, file: 'A.lean', startedAt: 0 },
    { type: 'goal' as const, goals: goal.goals, line: 6, source: 'lean4' as const },
  ].reduce(reduce, emptyState());
  assert.equal(goalHeading(s.goal!), 'Goal at line 7 (1 goal, from the Lean 4 extension)');
  assert.ok(viewTexts(s, 0).includes('Goal at line 7 (1 goal, from the Lean 4 extension)'));
  const repl = reduce(s, { type: 'event', event: { type: 'goal', id: 'p', goals: [], line: 3 }, at: 0 });
  assert.equal(goalHeading(repl.goal!), "Goal at line 4 (no goals, from Kimina's Lean check)");
});
