// TEST DOUBLE: a stand-in for `kimina serve` (POST /v1/prove as server-sent events, POST /v1/check, GET /health)
// that answers from a script instead of a model and Lean. It lets the editor face's "attach to a running
// backend" path be tested end to end without weights or a Lean toolchain. Scripts, chosen by theorem name:
//   name contains "fails": two attempts (turn 1 and the fix turn), both rejected with Lean's
//                          "unknown identifier 'bogus_lemma'" error: not proved.
//   name contains "slow":  thinks for a long time (until cancelled).
//   otherwise:             thinks in a few chunks, then one verified attempt with the algebra_example proof.
// /v1/check reports a goal for each `sorry` (positions in codepoints) and "valid" for sorry-free code;
// GET /v1/training/runs answers the runs a test puts in `trainingRuns`, GET /v1/training/runs/:id and …/metrics
// (with ?since) what it puts in `trainingRuns` and `trainingMetrics` (shapes: backend/protocol/routes.ts), the
// presets, rollouts, log and GPUs empty; DELETE /v1/prove/:id cancels.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  Attempt,
  StepMetrics,
  TrainingRun,
  ProveEvent,
  ProveRequest,
  ProveResult,
  ReplSorry,
  V1CheckResult,
  Verdict,
} from '../../backend/protocol';

const standInProof = '\n  have h₁ : 2 * x = 8 := by linarith\n  linarith';
const standInGoal = 'x : ℝ\nh₀ : 2 * x + 3 = 11\n⊢ x = 4';
const thinkChunks = [
  'Let me think about this. ',
  'We have 2x + 3 = 11, ',
  'so 2x = 8 ',
  'and x = 4.\n```tactics\nhave h₁ : 2 * x = 8 := by linarith\n```\n',
];

export interface StandInServe {
  url: string;
  token: string | undefined;
  requests: string[];
  /** What GET /v1/training/runs answers (a test may fill in only the fields it needs). */
  trainingRuns: Partial<TrainingRun>[];
  /** Each run's step metrics, for GET /v1/training/runs/:id/metrics; a test appends steps to make a run go on. */
  trainingMetrics: Map<string, StepMetrics[]>;
  close(): Promise<void>;
}

/** The theorem to prove: the last one in the code (earlier sorry-free declarations come before it). */
function theoremName(code: string): string {
  return [...code.matchAll(/(?:theorem|lemma)\s+([^\s(:]+)/g)].at(-1)?.[1] ?? 'example';
}

function verdict(status: Verdict['status'], reason: string, extra: Partial<Verdict> = {}): Verdict {
  return { status, reason, messages: [], sorries: [], time: 0.01, ...extra };
}

function sorriesOf(code: string): ReplSorry[] {
  const out: ReplSorry[] = [];
  code.split('\n').forEach((line, i) => {
    let k = line.indexOf('sorry');
    while (k >= 0) {
      const column = Array.from(line.slice(0, k)).length;
      out.push({
        goal: standInGoal,
        proofState: out.length,
        pos: { line: i + 1, column },
        endPos: { line: i + 1, column: column + 5 },
      });
      k = line.indexOf('sorry', k + 5);
    }
  });
  return out;
}

function check(code: string): V1CheckResult {
  const sorries = sorriesOf(code);
  const bogus = /bogus_\w+/.exec(code);
  if (bogus) {
    const lines = code.slice(0, bogus.index).split('\n');
    const pos = { line: lines.length, column: Array.from(lines[lines.length - 1]).length };
    return {
      id: 'editor',
      mode: 'strict',
      ...verdict('lean_error', `Lean reported an error: unknown identifier '${bogus[0]}'`, {
        messages: [{ pos, endPos: null, severity: 'error', data: `unknown identifier '${bogus[0]}'` }],
      }),
    };
  }
  if (sorries.length) {
    return {
      id: 'editor',
      mode: 'strict',
      ...verdict('sorry', 'the proof uses sorry', {
        sorries,
        messages: sorries.map((s) => ({
          pos: s.pos!,
          endPos: null,
          severity: 'warning',
          data: "declaration uses 'sorry'",
        })),
      }),
      response: { env: 0, sorries },
    };
  }
  return { id: 'editor', mode: 'strict', ...verdict('valid', 'Lean accepted the proof; axioms clean') };
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
  });

async function runScript(
  req: ProveRequest,
  id: string,
  send: (e: ProveEvent) => void,
  signal: AbortSignal,
): Promise<ProveResult> {
  const name = theoremName(req.code);
  const statement = req.code.replace(/\s*sorry\s*$/, '').replace(/:=\s*by\s*$/, ':= by');
  const attempts: Attempt[] = [];
  send({ type: 'started', id, samples: 1, fixTurns: name.includes('fails') ? 1 : 0 });
  const turns = name.includes('fails') ? 2 : 1;
  for (let turn = 1; turn <= turns; turn++) {
    const chunks = name.includes('slow') ? Array.from({ length: 600 }, (_, i) => `step ${i} `) : thinkChunks;
    let think = '';
    for (const delta of chunks) {
      if (signal.aborted) return { id, status: 'cancelled', proof: null, attempts };
      // a think of about 6 s: long enough that a Proof view still opening (code-server 4.139's webviews take a
      // few seconds on a loaded 2-core machine) sees it stream
      await sleep(name.includes('slow') ? 100 : 1500, signal);
      think += delta;
      send({ type: 'think', id, sample: 0, turn, delta });
      send({ type: 'progress', id, tokens: think.length, tokensPerSecond: 40 });
    }
    const body = name.includes('fails') ? `\n  exact bogus_lemma${turn === 2 ? ' x h₀' : ''}` : standInProof;
    const code = `${statement}${body}`;
    const response = `<think>${think}</think>\n\`\`\`lean4\n${code}\n\`\`\``;
    send({ type: 'text', id, sample: 0, turn, delta: response.slice(response.indexOf('</think>') + 8) });
    const v = check(code);
    const attempt: Attempt = {
      sample: 0,
      turn,
      response,
      think,
      code,
      format: { ok: true, error: 'NONE' },
      verdict: v,
      tokens: response.length,
      timings: { generateMs: 900, verifyMs: 20 },
    };
    attempts.push(attempt);
    send({ type: 'attempt', id, attempt });
    send({ type: 'verdict', id, sample: 0, turn, verdict: v });
    if (v.status === 'valid') return { id, status: 'proved', proof: code, tactics: body, attempts };
  }
  return { id, status: 'not_proved', proof: null, attempts };
}

export async function startStandInServe(options: { port?: number; token?: string } = {}): Promise<StandInServe> {
  const requests: string[] = [];
  const trainingRuns: StandInServe['trainingRuns'] = [];
  const trainingMetrics: StandInServe['trainingMetrics'] = new Map();
  const json = (res: import('node:http').ServerResponse, body: unknown, status = 200) =>
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  const running = new Map<string, AbortController>();
  let next = 0;
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    if (options.token && req.headers.authorization !== `Bearer ${options.token}`) {
      res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ detail: 'Invalid API Key' }));
      return;
    }
    if (req.method === 'GET' && req.url === '/v1/training/runs') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ runs: trainingRuns }));
      return;
    }
    const url = new URL(req.url ?? '/', 'http://stand-in');
    if (req.method === 'GET' && url.pathname === '/v1/training/events') {
      // the event stream stays open (runs and metrics here change only through the test's own arrays)
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
      res.write(': stand-in\n\n');
      return;
    }
    if (req.method === 'GET' && url.pathname === '/v1/training/presets') return void json(res, { presets: {} });
    if (req.method === 'GET' && url.pathname === '/v1/training/gpus')
      return void json(res, { available: false, gpus: [], note: 'stand-in: no GPUs' });
    const runPath = /^\/v1\/training\/runs\/([^/]+)(?:\/(metrics|rollouts|log))?$/.exec(url.pathname);
    if (req.method === 'GET' && runPath) {
      const id = decodeURIComponent(runPath[1]);
      const run = trainingRuns.find((r) => r.id === id);
      if (!run) return void json(res, { detail: `no training run ${id}` }, 404);
      if (!runPath[2]) return void json(res, run);
      if (runPath[2] === 'rollouts') return void json(res, { rollouts: [] });
      if (runPath[2] === 'log') return void json(res, { lines: [] });
      const since = Number(url.searchParams.get('since') ?? -1);
      return void json(res, { steps: (trainingMetrics.get(id) ?? []).filter((s) => s.step > since) });
    }
    const cancel = /^\/v1\/prove\/([^/]+)$/.exec(req.url ?? '');
    if (req.method === 'DELETE' && cancel) {
      const found = running.get(decodeURIComponent(cancel[1]));
      found?.abort();
      res
        .writeHead(found ? 200 : 404, { 'content-type': 'application/json' })
        .end(JSON.stringify({ cancelled: Boolean(found) }));
      return;
    }
    if (req.method === 'GET' && req.url === '/health') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok","version":"stand-in"}');
      return;
    }
    let raw = '';
    req.on('data', (c: Buffer) => {
      raw += c.toString('utf8');
    });
    req.on('end', () => {
      let body: { code?: string; snippets?: { code: string }[] };
      try {
        body = JSON.parse(raw);
      } catch {
        res.writeHead(422).end('{"detail":"malformed JSON"}');
        return;
      }
      if (req.method === 'POST' && req.url === '/v1/check' && body.snippets) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ results: body.snippets.map((s) => check(s.code)) }));
        return;
      }
      if (req.method === 'POST' && req.url === '/v1/prove' && typeof body.code === 'string') {
        const controller = new AbortController();
        res.on('close', () => controller.abort());
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const send = (e: ProveEvent) => {
          if (!res.writableEnded) res.write(`event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`);
        };
        const id = (body as ProveRequest).id ?? `standin-${++next}`;
        running.set(id, controller);
        res.on('close', () => running.delete(id));
        void runScript(body as ProveRequest, id, send, controller.signal).then((result) => {
          send({ type: 'done', id, result });
          res.end();
        });
        return;
      }
      res.writeHead(404).end('{"detail":"not found"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(options.port ?? 0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    token: options.token,
    requests,
    trainingRuns,
    trainingMetrics,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
