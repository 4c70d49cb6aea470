import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { errorKindOf, readSse, type ProveEvent, type ProveResult } from '../../backend/protocol';
import { ModelNotAvailable } from '../../backend/model/modelStore';
import { HttpProveService } from '../../backend/editor/httpService';
import { createProveRouter, type ProveRouterDeps } from '../../backend/api/proveRoutes';
import { RunningProofs } from '../../backend/prover/running';
import { openDb } from '../../backend/store/db';
import { AttemptStore } from '../../backend/store/attempts';
import { ScriptedEngine, StandInVerifier, leanError, valid } from '../prover/doubles';
import { WELL_FORMED, shortAnswer } from '../../backend/demo/kiminaExamples';
import { cutToBody } from '../../backend/editor/splice';

const FILE = 'import Mathlib\n\ntheorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by\n  sorry\n';
const judge = (code: string) => (code.endsWith('  linarith') ? { verdict: valid() } : { verdict: leanError([]) });

async function serve(deps: ProveRouterDeps): Promise<{ url: string; close: () => Promise<void> }> {
  const app = express();
  app.use(createProveRouter(deps, { proofs: new RunningProofs() }));
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}
const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}/v1/prove`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

/** Reads an SSE body into events until it ends; each frame's `event:` name is its event's type. */
async function readEvents(res: Response): Promise<ProveEvent[]> {
  const events: ProveEvent[] = [];
  for await (const { event, data } of readSse(res.body!)) {
    assert.equal(event, (data as ProveEvent).type);
    events.push(data as ProveEvent);
  }
  return events;
}

test('POST /v1/prove answers JSON; GET /v1/prove/:id returns the stored run', async () => {
  const store = new AttemptStore(openDb(':memory:'));
  const s = await serve({ engine: new ScriptedEngine(() => WELL_FORMED), verifier: new StandInVerifier(judge), store });
  try {
    const res = await post(s.url, { code: FILE, samples: 2 });
    assert.equal(res.status, 200);
    const result = (await res.json()) as ProveResult;
    assert.equal(result.status, 'proved');
    assert.ok(result.proof?.endsWith('  linarith'));
    assert.equal(result.attempts[0].format.error, 'NONE');
    const stored = (await (await fetch(`${s.url}/v1/prove/${result.id}`)).json()) as {
      status: string;
      attempts: unknown[];
      running: boolean;
    };
    assert.equal(stored.status, 'proved');
    assert.equal(stored.running, false);
    assert.ok(stored.attempts.length >= 1);
    assert.equal((await fetch(`${s.url}/v1/prove/unknown`)).status, 404);
    const list = (await (await fetch(`${s.url}/v1/prove?limit=5`)).json()) as {
      runs: { id: string; status: string }[];
    };
    assert.deepEqual(
      list.runs.map((r) => [r.id, r.status]),
      [[result.id, 'proved']],
    );
    assert.equal((await fetch(`${s.url}/v1/prove?limit=0`)).status, 422);
  } finally {
    await s.close();
  }
});

test('validation errors are 422 with the field named; bad JSON is a JSON 400', async () => {
  const s = await serve({ engine: new ScriptedEngine(() => WELL_FORMED), verifier: new StandInVerifier(judge) });
  try {
    const cases: [unknown, RegExp][] = [
      [{}, /'code' is required/],
      [{ code: 5 }, /'code' must be a string/],
      [{ code: '  ' }, /'code' is empty/],
      [{ code: FILE, samples: 0 }, /'samples' must be at least 1/],
      [{ code: FILE, samples: 1.5 }, /whole number/],
      [{ code: FILE, temperature: 'hot' }, /'temperature' must be a number/],
      [{ code: FILE, topP: 0 }, /'topP' must be above 0/],
      [{ code: FILE, bogus: 1 }, /unknown field: bogus/],
      [{ code: FILE, theorem: 'nope' }, /no theorem named 'nope'/],
      [[1, 2], /JSON object/],
      [{ code: FILE, id: 'has space' }, /'id' must be/],
    ];
    for (const [body, message] of cases) {
      const res = await post(s.url, body);
      assert.equal(res.status, 422, JSON.stringify(body));
      assert.match(((await res.json()) as { error: string }).error, message);
    }
    const bad = await post(s.url, '{"code": ');
    assert.equal(bad.status, 400);
    assert.match(((await bad.json()) as { error: string }).error, /not valid JSON/);
  } finally {
    await s.close();
  }
});

test('Accept: text/event-stream streams the events, ending with done', async () => {
  const s = await serve(() => ({
    engine: new ScriptedEngine(() => WELL_FORMED),
    verifier: new StandInVerifier(judge),
  }));
  try {
    const res = await post(s.url, { code: FILE, samples: 1 }, { accept: 'text/event-stream' });
    assert.equal(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
    const events = await readEvents(res);
    const types = events.map((e) => e.type);
    assert.equal(types[0], 'started');
    assert.equal(types.at(-1), 'done');
    for (const t of ['think', 'text', 'progress', 'verdict', 'attempt'])
      assert.ok(types.includes(t as ProveEvent['type']), t);
    const done = events.at(-1) as Extract<ProveEvent, { type: 'done' }>;
    assert.equal(done.result.status, 'proved');
    const errorRes = await post(s.url, { code: FILE, theorem: 'nope' }, { accept: 'text/event-stream' });
    assert.equal(errorRes.status, 422, 'validation happens before the stream starts');
  } finally {
    await s.close();
  }
});

test('DELETE /v1/prove/:id cancels a running JSON request; closing a stream cancels its work', async () => {
  const engine = new ScriptedEngine(() => WELL_FORMED, undefined, 1, 5);
  const s = await serve({ engine, verifier: new StandInVerifier(judge) });
  try {
    const pending = post(s.url, { code: FILE, samples: 1, id: 'job-1' });
    await new Promise((r) => setTimeout(r, 100));
    const dup = await post(s.url, { code: FILE, id: 'job-1' });
    assert.equal(dup.status, 409);
    const del = await fetch(`${s.url}/v1/prove/job-1`, { method: 'DELETE' });
    assert.equal(del.status, 202);
    const result = (await (await pending).json()) as ProveResult;
    assert.equal(result.id, 'job-1');
    assert.equal(result.status, 'cancelled');
    assert.equal((await fetch(`${s.url}/v1/prove/job-1`, { method: 'DELETE' })).status, 404);

    const res = await post(s.url, { code: FILE, samples: 1 }, { accept: 'text/event-stream' });
    const reader = res.body!.getReader();
    await reader.read();
    await reader.cancel();
    const deadline = Date.now() + 3000;
    while (!engine.calls.at(-1)?.options.signal?.aborted && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    assert.equal(engine.calls.at(-1)?.options.signal?.aborted, true, 'the engine saw the cancellation');
  } finally {
    await s.close();
  }
});

test('an engine that fails to load is a 500 (JSON) or an error event (stream); stored runs stay readable', async () => {
  const store = new AttemptStore(openDb(':memory:'));
  store.startRun({ id: 'old', theorem: 't', statement: 's', informal: '', engine: 'e', model: 'm', settings: {} });
  let loads = 0;
  const app = express();
  app.use(
    createProveRouter(
      () => {
        loads++;
        throw new Error('no model at ~/.kimina/models');
      },
      { store, proofs: new RunningProofs() },
    ),
  );
  const server: Server = await new Promise((resolve) => {
    const x = app.listen(0, '127.0.0.1', () => resolve(x));
  });
  const s = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
  assert.equal(((await (await fetch(`${s.url}/v1/prove/old`)).json()) as { status: string }).status, 'running');
  assert.equal(loads, 0, 'reading the store does not load the model');
  try {
    const res = await post(s.url, { code: FILE });
    assert.equal(res.status, 500);
    assert.match(((await res.json()) as { error: string }).error, /no model/);
    const events = await readEvents(await post(s.url, { code: FILE }, { accept: 'text/event-stream' }));
    assert.deepEqual(
      events.map((e) => e.type),
      ['error'],
    );
  } finally {
    await s.close();
  }
});

test('a model missing on an attached server carries its kind: in the JSON 500, the error event, and the editor service', async () => {
  const app = express();
  app.use(
    createProveRouter(
      () => {
        throw new ModelNotAvailable('no model available: AI-MO/Kimina-Prover-RL-0.6B is not in ~/.kimina/models');
      },
      { proofs: new RunningProofs() },
    ),
  );
  const server: Server = await new Promise((resolve) => {
    const x = app.listen(0, '127.0.0.1', () => resolve(x));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const res = await post(url, { code: FILE });
    assert.equal(res.status, 500);
    assert.equal(((await res.json()) as { kind?: string }).kind, 'model-missing');
    const events = await readEvents(await post(url, { code: FILE }, { accept: 'text/event-stream' }));
    assert.deepEqual(
      events.map((e) => [e.type, e.type === 'error' ? e.kind : undefined]),
      [['error', 'model-missing']],
    );
    // the editor's service for an attached server rethrows it with the kind, which the language server sends on
    const service = new HttpProveService({ url, source: 'setting' });
    const failure = await service
      .prove({ code: FILE }, () => {}, new AbortController().signal)
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    assert.equal(errorKindOf(failure), 'model-missing');
  } finally {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  }
});

// Issue 29, finding 7: `tactics` is the body the editor's splice rule would write, or the proof is not proved.
const STATEMENT_LINE = 'theorem algebra_example (x : ℝ) (h₀ : 2 * x + 3 = 11) : x = 4 := by';
for (const trailing of [
  'variable (hf : False)\ninclude hf',
  'open Nat',
  'namespace Sneaky',
  'set_option linter.all false',
]) {
  test(`POST /v1/prove: a verified answer ending in '${trailing.split('\n')[0]}' answers the body only, re-checked (JSON and SSE)`, async () => {
    const answer = shortAnswer(STATEMENT_LINE, `linarith\n${trailing}`);
    const checked: string[] = [];
    const judgeAll = (code: string) => {
      checked.push(code);
      return code.includes('  linarith') ? { verdict: valid() } : { verdict: leanError([]) };
    };
    const s = await serve({ engine: new ScriptedEngine(() => answer), verifier: new StandInVerifier(judgeAll) });
    try {
      const result = (await (await post(s.url, { code: FILE, samples: 1, fixTurns: 0 })).json()) as ProveResult;
      assert.equal(result.status, 'proved', result.problem);
      assert.equal(result.tactics?.trim(), 'linarith');
      assert.equal(cutToBody(result.tactics!).body, result.tactics, 'nothing the splice rule would cut');
      assert.ok(result.proof!.endsWith(result.tactics!), result.proof!);
      assert.ok(!result.proof!.includes(trailing.split('\n')[0]), result.proof!);
      assert.equal(checked.at(-1), result.proof, 'the published proof is what Lean checked last');
      const events = await readEvents(
        await post(s.url, { code: FILE, samples: 1, fixTurns: 0 }, { accept: 'text/event-stream' }),
      );
      const done = events.find((e) => e.type === 'done');
      assert.equal(done?.type === 'done' ? done.result.tactics : undefined, result.tactics);
    } finally {
      await s.close();
    }
  });
}

test('POST /v1/prove: when the body alone does not check without the commands after it, the answer is not proved and says why', async () => {
  const answer = shortAnswer(STATEMENT_LINE, 'exact hf.elim\nvariable (hf : False)\ninclude hf');
  const judgeAll = (code: string) =>
    code.includes('variable (hf') ? { verdict: valid() } : { verdict: leanError([]) };
  const s = await serve({ engine: new ScriptedEngine(() => answer), verifier: new StandInVerifier(judgeAll) });
  try {
    const result = (await (await post(s.url, { code: FILE, samples: 1, fixTurns: 0 })).json()) as ProveResult;
    assert.equal(result.status, 'not_proved');
    assert.equal(result.tactics, null);
    assert.equal(result.proof, null);
    assert.match(result.problem ?? '', /without the commands that followed it/);
  } finally {
    await s.close();
  }
});
