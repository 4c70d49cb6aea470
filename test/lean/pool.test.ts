// The real REPL pool against the stand-in REPL (test double): reuse, eviction, recycling, limits.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { standInPool, standInVerifier } from './standInVerifier';
import { QueueFull } from '../../backend/lean/errors';
import { readdirSync, readFileSync } from 'node:fs';

test('the header is imported once per REPL and reused through its env id', async () => {
  const s = standInVerifier({ maxRepls: 1 });
  try {
    for (let i = 0; i < 5; i++) {
      const out = await s.verifier.check(`import Mathlib\ntheorem t${i} : 1 = 1 := by simp`);
      assert.equal(out.verdict.status, 'valid', out.verdict.reason);
    }
    const log = s.log();
    assert.equal(log.filter((l) => l.includes(' import Mathlib')).length, 1);
    assert.equal(s.pool.stats().headerImports, 1);
    assert.equal(s.pool.stats().started, 1);
  } finally {
    await s.verifier.close();
  }
});

test('import-free snippets each run on a fresh env (no blank-header bug)', async () => {
  const s = standInVerifier({ maxRepls: 1 });
  try {
    const first = await s.verifier.check('theorem dup : True := trivial');
    assert.equal(first.verdict.status, 'valid', first.verdict.reason);
    // the same name again would clash if the first body had become the base env
    const second = await s.verifier.check('theorem dup : True := trivial\n#print axioms dup');
    assert.equal(second.verdict.status, 'valid', second.verdict.reason);
    assert.equal(s.log().filter((l) => l.endsWith(' fresh')).length, 1);
  } finally {
    await s.verifier.close();
  }
});

test('REPLs are kept per header with LRU eviction at maxRepls', async () => {
  const s = standInVerifier({ maxRepls: 2 });
  try {
    const check = (h: string) => s.verifier.check(`import ${h}\ntheorem t : True := trivial`);
    await check('A');
    await check('B');
    await check('A'); // A, B warm
    await check('C'); // evicts B (least recently used)
    await check('A'); // still warm
    await check('B'); // re-imported
    const imports = s.log().filter((l) => l.includes(' import '));
    assert.deepEqual(
      imports.map((l) => l.split(' ').slice(1).join(' ')),
      ['import A', 'import B', 'import C', 'import B'],
    );
    assert.equal(s.pool.stats().total, 2);
  } finally {
    await s.verifier.close();
  }
});

test('concurrent checks over as many headers as REPLs import each header once (no eviction thrash)', async () => {
  const s = standInVerifier({ maxRepls: 4, maxInFlight: 256 });
  try {
    const codes = Array.from({ length: 80 }, (_, i) => `import H${i % 4}\ntheorem t : True := trivial`);
    const out = await Promise.all(codes.map((c) => s.verifier.check(c)));
    assert.ok(out.every((o) => o.verdict.status === 'valid'));
    assert.equal(s.pool.stats().headerImports, 4);
  } finally {
    await s.verifier.close();
  }
});

test('reuse=false starts a fresh REPL instead of taking the warm one', async () => {
  const s = standInVerifier({ maxRepls: 2 });
  try {
    await s.verifier.check('import A\ntheorem t : True := trivial');
    await s.verifier.check('import A\ntheorem t : True := trivial', { reuse: false });
    assert.equal(s.log().filter((l) => l.includes(' import A')).length, 2);
  } finally {
    await s.verifier.close();
  }
});

test('a REPL is recycled after maxUses checks', async () => {
  const s = standInVerifier({ maxRepls: 1, maxUses: 2 });
  try {
    for (let i = 0; i < 5; i++) await s.verifier.check('import A\ntheorem t : True := trivial');
    assert.equal(s.pool.stats().started, 3);
    assert.equal(s.pool.stats().replaced, 2);
  } finally {
    await s.verifier.close();
  }
});

test('a REPL whose memory grows past maxRssMb is replaced', async () => {
  const s = standInVerifier({ maxRepls: 1, maxRssMb: 150 });
  try {
    const grown = await s.verifier.check('import A\ntheorem t : True := trivial -- stand_in_grow_200');
    assert.equal(grown.verdict.status, 'valid');
    assert.ok((grown.run?.memoryBytes ?? 0) > 150 * 1024 * 1024, `rss ${grown.run?.memoryBytes}`);
    await s.verifier.check('import A\ntheorem t : True := trivial');
    assert.equal(s.pool.stats().replaced, 1);
    assert.equal(s.pool.stats().started, 2);
  } finally {
    await s.verifier.close();
  }
});

test('REPLs left idle past idleTimeoutMs are stopped', async () => {
  const s = standInVerifier({ maxRepls: 2, idleTimeoutMs: 150 });
  try {
    await s.verifier.check('import A\ntheorem t : True := trivial');
    assert.equal(s.pool.stats().idle, 1);
    await new Promise((r) => setTimeout(r, 400));
    assert.equal(s.pool.stats().total, 0);
    assert.equal((await s.verifier.check('import A\ntheorem t : True := trivial')).verdict.status, 'valid');
  } finally {
    await s.verifier.close();
  }
});

test('prewarm imports headers ahead of the first check', async () => {
  const s = standInVerifier({ maxRepls: 3 });
  try {
    await s.pool.prewarm({ 'import Mathlib': 2 });
    assert.equal(s.pool.stats().idle, 2);
    const out = await s.verifier.check('import Mathlib\ntheorem t : True := trivial');
    assert.equal(out.verdict.status, 'valid');
    assert.equal(s.pool.stats().headerImports, 2);
  } finally {
    await s.verifier.close();
  }
});

test('a hung snippet times out alone; its REPL is killed and replaced', async () => {
  const s = standInVerifier({ maxRepls: 2 });
  try {
    const [hung, ok] = await s.verifier.checkBatch(
      ['import A\ntheorem t : True := trivial -- stand_in_hang', 'import A\ntheorem u : True := trivial'],
      { timeout: 0.5 },
    );
    assert.equal(hung.verdict.status, 'timeout_error');
    assert.match(hung.verdict.reason, /Lean REPL command timed out in 0.5 seconds/);
    assert.equal(ok.verdict.status, 'valid');
    const again = await s.verifier.check('import A\ntheorem t : True := trivial');
    assert.equal(again.verdict.status, 'valid');
    // the hung REPL is gone; the healthy one served the next check
    assert.equal(s.pool.stats().total, 1);
    assert.equal(s.pool.stats().started, 2);
  } finally {
    await s.verifier.close();
  }
});

test('a slow header import times out with the header message', async () => {
  const s = standInVerifier({ maxRepls: 1, importDelayMs: 2000 });
  try {
    const out = await s.verifier.check('import Slow\ntheorem t : True := trivial', { timeout: 0.3 });
    assert.equal(out.verdict.status, 'timeout_error');
    assert.match(out.verdict.reason, /header command timed out in 0.3 seconds/);
    assert.equal(s.pool.stats().total, 0);
  } finally {
    await s.verifier.close();
  }
});

test("crash and garbage are their own snippet's errors; the batch still answers; REPLs are replaced", async () => {
  const s = standInVerifier({ maxRepls: 2 });
  try {
    const results = await s.verifier.checkBatch([
      'import A\ntheorem a : True := trivial -- stand_in_crash',
      'import A\ntheorem b : True := trivial -- stand_in_garbage',
      'import A\ntheorem c : True := trivial',
      'theorem d : True := bogus_d',
    ]);
    assert.deepEqual(
      results.map((r) => r.verdict.status),
      ['server_error', 'server_error', 'valid', 'lean_error'],
    );
    assert.match(results[0].verdict.reason, /exited \(code 3\).*stand_in_crash/s);
    assert.match(results[1].verdict.reason, /unparsable output/);
    const after = await s.verifier.check('import A\ntheorem e : True := trivial');
    assert.equal(after.verdict.status, 'valid');
  } finally {
    await s.verifier.close();
  }
});

test('chatter printed before the REPL starts (e.g. lake building) does not spoil the first answer', async () => {
  const { Verifier } = await import('../../backend/lean/verifier');
  const { ReplPool } = await import('../../backend/lean/pool');
  const { PoolRunner } = await import('../../backend/lean/poolRunner');
  const { standInReplCommand } = await import('../../backend/demo/stand-in-repl/index');
  const launch = () => ({
    argv: ['sh', '-c', `echo "⚠ [2/5] Building Foo"; exec ${standInReplCommand()}`],
    cwd: process.cwd(),
    env: process.env,
    toolEnv: process.env,
  });
  const v = new Verifier({
    runner: new PoolRunner(new ReplPool({ launch, maxRepls: 1, maxUses: 0, maxRssMb: 0 })),
    policy: { allowed: [], allowNativeDecide: false },
    maxInFlight: 4,
    defaultTimeoutS: 5,
  });
  try {
    assert.equal((await v.check('import A\ntheorem t : True := trivial')).verdict.status, 'valid');
  } finally {
    await v.close();
  }
});

test('a failing import header is a lean_error for that snippet; its REPL is not kept', async () => {
  const s = standInVerifier({ maxRepls: 1 });
  try {
    const [bad, good] = await s.verifier.checkBatch([
      'import Aesop\n\nimport  BogusLib\ntheorem t : True := trivial',
      'import A\ntheorem t : True := trivial',
    ]);
    assert.equal(bad.verdict.status, 'lean_error');
    // reported at the user's own import line, not at line 1 of the normalised header
    assert.match(bad.verdict.reason, /The imports failed \(line 3\): unknown module prefix 'BogusLib'/);
    assert.deepEqual(bad.verdict.messages[0].pos, { line: 3, column: 8 });
    assert.equal(good.verdict.status, 'valid');
    assert.equal(s.pool.stats().total, 1);
  } finally {
    await s.verifier.close();
  }
});

test('a REPL that died while idle is dropped, not lent', async () => {
  const s = standInVerifier({ maxRepls: 1 });
  try {
    const lease = await s.pool.acquire('import A', { headerTimeoutMs: 5000 });
    lease.release();
    process.kill(-(lease.repl.pid as number), 'SIGKILL');
    await new Promise((r) => setTimeout(r, 200));
    const out = await s.verifier.check('import A\ntheorem t : True := trivial');
    assert.equal(out.verdict.status, 'valid', out.verdict.reason);
    assert.equal(s.pool.stats().started, 2);
  } finally {
    await s.verifier.close();
  }
});

test('a REPL that cannot start gives a server error naming the command', async () => {
  const { Verifier } = await import('../../backend/lean/verifier');
  const { ReplPool } = await import('../../backend/lean/pool');
  const { PoolRunner } = await import('../../backend/lean/poolRunner');
  const pool = new ReplPool({
    launch: () => ({ argv: ['/nonexistent/repl-binary'], cwd: process.cwd(), env: process.env, toolEnv: process.env }),
    maxRepls: 1,
    maxUses: 0,
    maxRssMb: 0,
  });
  const v = new Verifier({
    runner: new PoolRunner(pool),
    policy: { allowed: [], allowNativeDecide: false },
    maxInFlight: 4,
    defaultTimeoutS: 5,
  });
  try {
    const out = await v.check('theorem t : True := trivial');
    assert.equal(out.verdict.status, 'server_error');
    assert.match(out.verdict.reason, /could not start the Lean REPL.*nonexistent/);
  } finally {
    await v.close();
  }
});

test("a sandboxed REPL whose program is not found is Lean missing, without the sandbox's words", async () => {
  const { Verifier } = await import('../../backend/lean/verifier');
  const { ReplPool } = await import('../../backend/lean/pool');
  const { PoolRunner } = await import('../../backend/lean/poolRunner');
  // `bwrap … lake env repl` when lake is not there: the sandbox's execvp error and the shell's 127
  const argv = [
    process.execPath,
    '-e',
    "process.stderr.write('bwrap: execvp lake: No such file or directory\\n'); process.exit(127)",
  ];
  const pool = new ReplPool({
    launch: () => ({ argv, program: 'lake', cwd: process.cwd(), env: process.env, toolEnv: process.env }),
    maxRepls: 1,
    maxUses: 0,
    maxRssMb: 0,
  });
  const v = new Verifier({
    runner: new PoolRunner(pool),
    policy: { allowed: [], allowNativeDecide: false },
    maxInFlight: 4,
    defaultTimeoutS: 5,
  });
  try {
    const out = await v.check('theorem t : True := trivial');
    assert.equal(out.verdict.status, 'server_error');
    assert.equal(out.verdict.leanMissing, true);
    assert.equal(
      out.verdict.reason,
      'The Lean REPL could not be started: `lake` was not found. Install Lean with elan: https://github.com/leanprover/elan',
    );
  } finally {
    await v.close();
  }
});

test('admission is bounded: a batch beyond running + queued capacity gets QueueFull with a retry hint', async () => {
  const s = standInVerifier({ maxRepls: 1, maxInFlight: 3 });
  try {
    const running = s.verifier.checkBatch([
      'theorem a : True := trivial -- stand_in_slow_300',
      'theorem b : True := trivial',
    ]);
    await assert.rejects(
      s.verifier.checkBatch(['theorem c : True := trivial', 'theorem d : True := trivial']),
      (e: unknown) => e instanceof QueueFull && e.retryAfterS >= 1,
    );
    const fits = s.verifier.check('theorem c : True := trivial');
    const all = await Promise.all([running, fits]);
    assert.deepEqual(
      all.flat().map((r) => r.verdict.status),
      ['valid', 'valid', 'valid'],
    );
    assert.equal(s.verifier.stats().inFlight, 0);
  } finally {
    await s.verifier.close();
  }
});

test('the address-space cap reaches the REPL process', async () => {
  const s = standInVerifier({ maxRepls: 1, memoryLimitMb: 4096 });
  try {
    const out = await s.verifier.check('theorem t : True := trivial -- stand_in_limits');
    const row = out.verdict.messages.find((m) => m.data.startsWith('Max address space'));
    assert.ok(row, JSON.stringify(out.verdict.messages));
    assert.match(row.data, new RegExp(String(4096 * 1024 * 1024)));
  } finally {
    await s.verifier.close();
  }
});

test('closing the pool kills its REPLs and refuses new work', async () => {
  const { pool } = standInPool({ maxRepls: 1 });
  const lease = await pool.acquire('import A', { headerTimeoutMs: 5000 });
  const pid = lease.repl.pid as number;
  lease.release();
  await pool.close();
  await new Promise((r) => setTimeout(r, 100));
  assert.throws(() => process.kill(pid, 0));
  await assert.rejects(pool.acquire('import A', { headerTimeoutMs: 1000 }), /closed/);
});

test('closing the pool also kills a REPL still importing its header', async () => {
  const { pool, logFile } = standInPool({ maxRepls: 1, importDelayMs: 5000 });
  const pending = pool.acquire('import Slow', { headerTimeoutMs: 10_000 });
  const outcome = pending.then(
    () => 'leased',
    (err: Error) => err.message,
  );
  const importing = (): number[] =>
    readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .map(Number)
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/environ`, 'utf8').includes(logFile);
        } catch {
          return false;
        }
      });
  let pids: number[] = [];
  for (let i = 0; i < 50 && pids.length === 0; i++) {
    await new Promise((r) => setTimeout(r, 50));
    pids = importing();
  }
  assert.ok(pids.length > 0, 'the stand-in REPL started');
  await pool.close();
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(importing(), [], 'no REPL outlives the pool');
  assert.match(await outcome, /closed|stopped|exited/i);
});
