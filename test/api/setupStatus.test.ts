// First-run guidance: when the services cannot start (no model pulled, no Lean), the face reports an error
// status naming what is missing, answers prove requests with that reason, and tries again later.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { errorKindOf, lspMethods } from '../../backend/protocol';
import { setupHints } from '../../backend/api/lsp';
import { LeanNotAvailable } from '../../backend/lean/lake';
import { ModelNotAvailable } from '../../backend/model/modelStore';
import type { ProveService } from '../../backend/editor/service';
import { connectFace, settledStatus } from './faceClient';

test('a missing model becomes an error status with setup hints, and the next request retries', async () => {
  let calls = 0;
  const { client, close } = await connectFace(async () => {
    calls++;
    throw new ModelNotAvailable(
      'no model available: AI-MO/Kimina-Prover-RL-0.6B is not in /x/models; run `kimina model pull AI-MO/Kimina-Prover-RL-0.6B`',
    );
  });
  try {
    const status = await settledStatus(client);
    assert.equal(status.state, 'error');
    assert.match(status.detail!, /kimina model pull/);
    assert.deepEqual(status.setup && { model: status.setup.model, lean: status.setup.lean }, {
      model: true,
      lean: false,
    });
    assert.match(status.setup!.hints[0], /Pull Model/);
    await assert.rejects(
      client.sendRequest(lspMethods.prove, { id: 'a', code: 'theorem t : True := by\n  sorry\n' }),
      (err: unknown) => {
        assert.match((err as Error).message, /no model available/);
        // the kind crosses the boundary as data: the editor's Pull Model button is picked by it, not by the words
        assert.deepEqual((err as { data?: unknown }).data, { kind: 'model-missing' });
        assert.equal(errorKindOf(err), 'model-missing');
        return true;
      },
    );
    assert.ok(calls >= 2, 'each request after a failure tries to start the services again');
  } finally {
    await close();
  }
});

test('setup hints name Lean when the failure is about Lean, nothing when it is not', () => {
  const lean = new LeanNotAvailable('lake: command not found while starting the REPL');
  assert.deepEqual(setupHints(lean)?.lean, true);
  assert.deepEqual(setupHints(lean)?.model, false);
  assert.deepEqual(setupHints(new Error('EADDRINUSE')), { model: false, lean: false, hints: [] });
  // the kind decides, not the words: a message naming a model or Lean is no setup problem by itself
  assert.deepEqual(setupHints(new Error('the model answered with Lean errors')), {
    model: false,
    lean: false,
    hints: [],
  });
});

test('services that start late are waited for by the first prove request', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  const service: ProveService = {
    kind: 'in-process',
    describe: async () => ({ engine: 'test-double' }),
    prove: async () => ({ id: 'x', status: 'not_proved', proof: null, attempts: [] }),
    check: async () => {
      throw new Error('unused');
    },
    close: async () => {},
  };
  const { client, close } = await connectFace(async () => {
    await gate;
    return service;
  });
  try {
    const pending = client.sendRequest(lspMethods.prove, { id: 'late', code: 'theorem t : True := by\n  sorry\n' });
    setTimeout(release, 200);
    const result = (await pending) as { status: string; declaration: { name: string } };
    assert.equal(result.status, 'not_proved');
    assert.equal(result.declaration.name, 't');
    assert.equal((await settledStatus(client)).engine, 'test-double');
  } finally {
    await close();
  }
});

test('a proof running past kimina.timeouts.prove is stopped and says why', async () => {
  const service: ProveService = {
    kind: 'in-process',
    describe: async () => ({}),
    prove: (_req, _onEvent, signal) =>
      new Promise((resolve) => {
        signal.addEventListener('abort', () => resolve({ id: 'x', status: 'cancelled', proof: null, attempts: [] }), {
          once: true,
        });
      }),
    check: async () => {
      throw new Error('unused');
    },
    close: async () => {},
  };
  const { client, close } = await connectFace(async () => service, { proveTimeoutS: 0.3 });
  try {
    const started = Date.now();
    const result = (await client.sendRequest(lspMethods.prove, {
      id: 'slow',
      code: 'theorem t : True := by\n  sorry\n',
    })) as { status: string; problem?: string };
    assert.equal(result.status, 'cancelled');
    assert.match(result.problem ?? '', /Stopped after 0.3 s \(kimina.timeouts.prove\)/);
    assert.ok(Date.now() - started < 3000);
  } finally {
    await close();
  }
});
