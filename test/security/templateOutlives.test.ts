// Issue 29, finding 6, against a live `kimina serve` (the real CLI and ONNX engine in their own process, over
// TEST DOUBLES: the scripted model, whose folder gets a hostile chat_template.jinja, and the stand-in REPL): a
// checkpoint's template that never ends (nested loops) or allocates without end (`range(100000000)`) is refused
// with an error naming the template and the limit it passed, /health answers at once while it renders, the next
// Lean check runs and the server is still alive. With the render on the main thread again (the old behaviour,
// tried once), both tests fail: /health gets no answer within 2 s while the template renders.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ALGEBRA_STATEMENT, writeScriptedModel } from '../../backend/demo/models/scriptedModel';
import { type LiveServe, startServe, TOKEN } from './liveServe';

const NESTED =
  '{% for a in range(100000) %}{% for b in range(100000) %}{% for c in range(100000) %}{% endfor %}{% endfor %}{% endfor %}';
const HUGE = '{% for i in range(100000000) %}x{% endfor %}';

let root: string;
const servers: LiveServe[] = [];

before(() => {
  root = mkdtempSync(join(tmpdir(), 'kimina-template-attack-'));
});
after(async () => {
  for (const s of servers) await s.stop();
  rmSync(root, { recursive: true, force: true });
});

/** A scripted model folder whose chat template is `template` (chat_template.jinja wins over tokenizer_config.json). */
function modelWithTemplate(name: string, template: string): string {
  const dir = join(root, name);
  writeScriptedModel(dir, { variant: 'direct' });
  writeFileSync(join(dir, 'chat_template.jinja'), template);
  return dir;
}

/** How long /health took; throws when it does not answer 200 within `ms` (a blocked event loop). */
async function healthWithin(s: LiveServe, ms: number): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${s.url}/health`, {
    headers: { authorization: `Bearer ${TOKEN}` },
    signal: AbortSignal.timeout(ms),
  }).catch((err: Error) => {
    throw new Error(`/health did not answer within ${ms} ms while the template rendered (${err.name})`);
  });
  assert.equal(res.status, 200, await res.text());
  return performance.now() - t0;
}

/** Proves with the hostile template while probing /health every 250 ms; the slowest probe and the answer. */
async function proveWhileProbing(s: LiveServe) {
  let rendering = true;
  const probes: number[] = [];
  const probing = (async () => {
    while (rendering) {
      probes.push(await healthWithin(s, 2000));
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const proving = s
    .post('/v1/prove', { code: `import Mathlib\n\n${ALGEBRA_STATEMENT} := by\n  sorry\n`, samples: 1 })
    .finally(() => (rendering = false));
  const [answer] = await Promise.all([proving, probing]); // a probe that fails fails the test at once
  return { answer, probes, slowest: Math.max(...probes) };
}

async function assertStillServing(s: LiveServe): Promise<void> {
  await healthWithin(s, 2000);
  const next = await s.post('/api/check', { snippets: [{ id: 'next', code: 'theorem small : True := trivial' }] });
  assert.equal(next.status, 200, JSON.stringify(next.json));
  assert.equal(next.json.results[0].error ?? null, null, JSON.stringify(next.json.results[0]));
  assert.equal(s.child.exitCode, null, `the server is still running:\n${s.log()}`);
  assert.equal(s.child.signalCode, null, `the server is still running:\n${s.log()}`);
}

for (const { name, template, refusal } of [
  {
    name: 'nested loops that never end',
    template: NESTED,
    refusal: /chat template of \S+nested: rendering stopped after 10 s \(a loop in the template/,
  },
  {
    name: 'range(100000000)',
    template: HUGE,
    refusal:
      /chat template of \S+huge: rendering (stopped: the renderer ended .*past its 256 MB memory limit|failed: the rendered prompt passed \d+ characters)/,
  },
]) {
  test(
    `kimina serve outlives a chat template with ${name} and says why it refused it`,
    { timeout: 60_000 },
    async (t) => {
      const dir = modelWithTemplate(name.startsWith('range') ? 'huge' : 'nested', template);
      const s = await startServe({
        KIMINA_MODEL: dir,
        KIMINA_ENGINE: 'onnx',
        KIMINA_DEVICE: 'cpu',
        KIMINA_THREADS: '1',
      });
      servers.push(s);
      const { answer, probes, slowest } = await proveWhileProbing(s);
      t.diagnostic(
        `refused in ${Math.round(answer.ms)} ms; ${probes.length} /health probes meanwhile, slowest ${Math.round(slowest)} ms`,
      );
      assert.equal(answer.status, 500, JSON.stringify(answer.json));
      t.diagnostic(answer.json.error);
      assert.match(answer.json.error, refusal);
      assert.ok(
        probes.length >= 1 && slowest < 2000,
        `/health answered while the template rendered (slowest ${slowest} ms)`,
      );
      await assertStillServing(s);
    },
  );
}
